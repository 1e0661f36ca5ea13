// The C API of views (td_view_*): creation arguments, queries, element addresses, handles and
// ownership across resize/realloc/subview, and every rejected input with its status and a
// message naming the view's label and the offending dimension.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support.hpp"
#include "taskdag.h"

using taskdag_test::check_last_error;
using taskdag_test::last_message;

namespace {

td_view_args args_of(const char* label, td_element_type element, std::initializer_list<size_t> extents,
                     td_layout layout = TD_LAYOUT_RIGHT) {
  td_view_args args = TD_VIEW_ARGS_INIT;
  args.element_type = element;
  args.rank = static_cast<int>(extents.size());
  int d = 0;
  for (size_t e : extents) args.extents[d++] = e;
  args.layout = layout;
  args.label = label;
  return args;
}

// Owns one reference to a view made with the C API; REQUIREs that creation succeeds.
class view_ref {
public:
  explicit view_ref(const td_view_args& args) {
    const td_status status = td_view_create(&args, &view_);
    INFO(last_message());
    REQUIRE(status == TD_OK);
  }
  explicit view_ref(td_view* adopted) : view_(adopted) { REQUIRE(view_ != nullptr); }
  view_ref(const view_ref&) = delete;
  view_ref& operator=(const view_ref&) = delete;
  ~view_ref() { td_view_release(view_); }
  operator td_view*() const { return view_; }
  td_view** address() { return &view_; }

private:
  td_view* view_ = nullptr;
};

size_t extent(const td_view* v, int d) {
  size_t e = 0;
  REQUIRE(td_view_extent(v, d, &e) == TD_OK);
  return e;
}

size_t stride(const td_view* v, int d) {
  size_t s = 0;
  REQUIRE(td_view_stride(v, d, &s) == TD_OK);
  return s;
}

double* at(const td_view* v, std::initializer_list<int64_t> index) {
  void* p = nullptr;
  const td_status status = td_view_ptr(v, index.size() ? index.begin() : nullptr, &p);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return static_cast<double*>(p);
}

std::string label(const td_view* v) {
  const char* text = nullptr;
  REQUIRE(td_view_label(v, &text) == TD_OK);
  return text;
}

}  // namespace

TEST_CASE("td_view_create makes a zero-filled array and the queries describe it") {
  td_view_args args = args_of("grid", TD_ELEMENT_DOUBLE, {3, 4, 5}, TD_LAYOUT_LEFT);
  view_ref v(args);
  int rank = -1, contiguous = -1, managed = -1;
  size_t span = 0, size = 0, uses = 0;
  td_layout layout = -1;
  td_element_type element = 0;
  td_memory_space space = -1;
  void* data = nullptr;
  CHECK(td_view_rank(v, &rank) == TD_OK);
  CHECK(rank == 3);
  CHECK(extent(v, 0) == 3);
  CHECK(extent(v, 2) == 5);
  CHECK(stride(v, 0) == 1);
  CHECK(stride(v, 1) == 3);
  CHECK(stride(v, 2) == 12);
  CHECK(td_view_span(v, &span) == TD_OK);
  CHECK(span == 60);
  CHECK(td_view_layout(v, &layout) == TD_OK);
  CHECK(layout == TD_LAYOUT_LEFT);
  CHECK(td_view_element_type(v, &element) == TD_OK);
  CHECK(element == TD_ELEMENT_DOUBLE);
  CHECK(td_view_element_size(v, &size) == TD_OK);
  CHECK(size == 8);
  CHECK(td_view_is_contiguous(v, &contiguous) == TD_OK);
  CHECK(contiguous == 1);
  CHECK(td_view_is_managed(v, &managed) == TD_OK);
  CHECK(managed == 1);
  CHECK(td_view_memory_space(v, &space) == TD_OK);
  CHECK(space == TD_SPACE_HOST);
  CHECK(td_view_use_count(v, &uses) == TD_OK);
  CHECK(uses == 1);
  CHECK(label(v) == "grid");
  CHECK(td_view_data(v, &data) == TD_OK);
  CHECK(at(v, {0, 0, 0}) == data);
  CHECK(at(v, {2, 3, 4}) == static_cast<double*>(data) + 2 + 3 * 3 + 4 * 12);
  const int64_t index[3] = {2, 3, 4};
  CHECK(td_view_ptr_unchecked(v, index) == at(v, {2, 3, 4}));
  bool zero = true;
  for (int k = 0; k < 60; ++k) zero = zero && static_cast<double*>(data)[k] == 0.0;
  CHECK(zero);
}

TEST_CASE("TD_VIEW_PAD pads the stride-one extent; LayoutStride takes strides") {
  td_view_args args = args_of("padded", TD_ELEMENT_DOUBLE, {3, 50});
  args.flags = TD_VIEW_PAD | TD_VIEW_NO_INIT;
  view_ref padded(args);
  CHECK(stride(padded, 0) == 56);
  int contiguous = -1;
  CHECK(td_view_is_contiguous(padded, &contiguous) == TD_OK);
  CHECK(contiguous == 0);
  td_view_args strided = args_of("strided", TD_ELEMENT_INT32, {4, 3}, TD_LAYOUT_STRIDE);
  strided.strides[0] = 1;
  strided.strides[1] = 5;
  view_ref s(strided);
  size_t span = 0;
  CHECK(td_view_span(s, &span) == TD_OK);
  CHECK(span == 14);
  td_view_args opaque = args_of("structs", TD_ELEMENT_OPAQUE, {7});
  opaque.element_size = 24;
  view_ref o(opaque);
  size_t size = 0;
  CHECK(td_view_element_size(o, &size) == TD_OK);
  CHECK(size == 24);
}

TEST_CASE("bad creation arguments name the label and the dimension") {
  td_view* out = nullptr;
  td_view_args args = args_of("B", TD_ELEMENT_DOUBLE, {2, 2});
  CHECK_FAILS(td_view_create(nullptr, &out), TD_ERROR_NULL_ARGUMENT, "args");
  CHECK_FAILS(td_view_create(&args, nullptr), TD_ERROR_NULL_ARGUMENT, "out");
  args.struct_size = 8;
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_STRUCT_SIZE, "td_view_args", "TD_VIEW_ARGS_INIT");
  args = args_of("B", 0, {2});
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "element_type", "TD_ELEMENT_DOUBLE (10)");
  args = args_of("B", TD_ELEMENT_OPAQUE, {2});
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "view \"B\"", "element_size");
  args = args_of("B", TD_ELEMENT_DOUBLE, {2});
  args.rank = 9;
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "view \"B\"", "rank 9");
  args.rank = -1;
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "view \"B\"", "args->rank");
  args = args_of("zero", TD_ELEMENT_DOUBLE, {4, 0, 2});
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "view \"zero\"", "extent(1) is 0");
  args = args_of("huge", TD_ELEMENT_DOUBLE, {size_t{1} << 40, size_t{1} << 30});
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "view \"huge\"", "extent(0)", "overflow");
  args = args_of("alias", TD_ELEMENT_DOUBLE, {5, 3}, TD_LAYOUT_STRIDE);
  args.strides[0] = 1;
  args.strides[1] = 4;
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "view \"alias\"", "stride(1) = 4", "alias");
  args = args_of("B", TD_ELEMENT_DOUBLE, {2});
  args.layout = 7;
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "args->layout", "TD_LAYOUT_STRIDE (2)");
  args.layout = TD_LAYOUT_RIGHT;
  args.flags = 8;
  CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_INVALID_ARGUMENT, "view \"B\"", "args->flags");
  args.flags = 0;
  if (!td_cuda_available()) {  // with a GPU: test_view_cuda.c
    args.memory_space = TD_SPACE_CUDA;
    CHECK_FAILS(td_view_create(&args, &out), TD_ERROR_UNAVAILABLE, "view \"B\"", "cuda");
  }
  CHECK(out == nullptr);
}

TEST_CASE("td_view_wrap uses caller memory, never frees it, and rejects NULL with the shape") {
  std::vector<double> memory(12, 1.0);
  td_view_args args = args_of("user", TD_ELEMENT_DOUBLE, {3, 4}, TD_LAYOUT_LEFT);
  td_view* w = nullptr;
  REQUIRE(td_view_wrap(&args, memory.data(), &w) == TD_OK);
  view_ref wrapped(w);
  int managed = -1;
  CHECK(td_view_is_managed(wrapped, &managed) == TD_OK);
  CHECK(managed == 0);
  *at(wrapped, {2, 3}) = 5.0;
  CHECK(memory[2 + 3 * 3] == 5.0);
  td_view* out = nullptr;
  CHECK_FAILS(td_view_wrap(&args, nullptr, &out), TD_ERROR_NULL_ARGUMENT, "`data` is NULL", "view \"user\"",
              "extent(0) = 3");
  size_t two[2] = {4, 4};
  CHECK_FAILS(td_view_resize(wrapped.address(), two, 2), TD_ERROR_INVALID_ARGUMENT, "view \"user\"",
              "unmanaged");
}

TEST_CASE("td_view_ptr checks every index; td_view_extent checks the dimension") {
  view_ref v(args_of("A", TD_ELEMENT_DOUBLE, {4, 5}));
  void* p = nullptr;
  const int64_t outside[2] = {1, 5};
  CHECK_FAILS(td_view_ptr(v, outside, &p), TD_ERROR_INVALID_ARGUMENT, "view \"A\"", "index 5 in dimension 1",
              "[0, 5)");
  const int64_t negative[2] = {-2, 0};
  CHECK_FAILS(td_view_ptr(v, negative, &p), TD_ERROR_INVALID_ARGUMENT, "index -2 in dimension 0");
  CHECK_FAILS(td_view_ptr(v, nullptr, &p), TD_ERROR_NULL_ARGUMENT, "indices");
  CHECK(td_view_ptr_unchecked(v, nullptr) == nullptr);
  check_last_error(TD_ERROR_NULL_ARGUMENT, {"indices"});
  size_t e = 0;
  CHECK_FAILS(td_view_extent(v, 2, &e), TD_ERROR_INVALID_ARGUMENT, "view \"A\"", "dimension 2", "rank 2");
  CHECK_FAILS(td_view_stride(v, -1, &e), TD_ERROR_INVALID_ARGUMENT, "view \"A\"", "dimension -1");
  taskdag_test::pool_ref pool(1 << 16);
  int rank = 0;
  CHECK_FAILS(td_view_rank(reinterpret_cast<td_view*>(pool.get()), &rank), TD_ERROR_INVALID_HANDLE,
              "td_pool", "td_view");
}

TEST_CASE("deep_copy permutes between layouts and rejects different shapes") {
  view_ref right(args_of("right", TD_ELEMENT_DOUBLE, {6, 7}));
  view_ref left(args_of("left", TD_ELEMENT_DOUBLE, {6, 7}, TD_LAYOUT_LEFT));
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 7; ++j) *at(right, {i, j}) = static_cast<double>(10 * i + j);
  REQUIRE(td_view_deep_copy(left, right) == TD_OK);
  bool same = true;
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 7; ++j) same = same && *at(left, {i, j}) == static_cast<double>(10 * i + j);
  CHECK(same);
  const double three = 3.0;
  REQUIRE(td_view_fill(left, &three) == TD_OK);
  CHECK(*at(left, {5, 6}) == 3.0);
  view_ref other(args_of("other", TD_ELEMENT_DOUBLE, {6, 8}));
  CHECK_FAILS(td_view_deep_copy(other, right), TD_ERROR_INVALID_ARGUMENT, "from view \"right\" to view \"other\"",
              "extent(1) is 7 in \"right\" but 8 in \"other\"");
  view_ref ints(args_of("ints", TD_ELEMENT_INT64, {6, 7}));
  CHECK_FAILS(td_view_deep_copy(ints, right), TD_ERROR_INVALID_ARGUMENT, "double into int64");
  CHECK_FAILS(td_view_fill(left, nullptr), TD_ERROR_NULL_ARGUMENT, "value");
}

TEST_CASE("large views (huge-page mappings) are zero-filled, permuted both ways and freed") {
  // 1100 x 1300 doubles (11 MB): above the 2 MiB of the huge-page mappings and the 8 MiB of the
  // streaming transposes (prefetches spread over the tiles, non-temporal stores).
  const size_t rows = 1100, cols = 1300, n = rows * cols;
  view_ref left(args_of("big_left", TD_ELEMENT_DOUBLE, {rows, cols}, TD_LAYOUT_LEFT));
  view_ref right(args_of("big_right", TD_ELEMENT_DOUBLE, {rows, cols}));
  td_view_args no_init = args_of("big_back", TD_ELEMENT_DOUBLE, {rows, cols}, TD_LAYOUT_LEFT);
  no_init.flags = TD_VIEW_NO_INIT;
  view_ref back(no_init);
  double *l = nullptr, *r = nullptr, *b = nullptr;
  REQUIRE(td_view_data(left, reinterpret_cast<void**>(&l)) == TD_OK);
  REQUIRE(td_view_data(right, reinterpret_cast<void**>(&r)) == TD_OK);
  REQUIRE(td_view_data(back, reinterpret_cast<void**>(&b)) == TD_OK);
  bool zero = true;
  for (size_t k = 0; k < n; ++k) zero = zero && l[k] == 0.0 && r[k] == 0.0;
  CHECK(zero);
  for (size_t j = 0; j < cols; ++j)
    for (size_t i = 0; i < rows; ++i) l[i + j * rows] = static_cast<double>(i * cols + j);
  REQUIRE(td_view_deep_copy(right, left) == TD_OK);
  REQUIRE(td_view_deep_copy(back, right) == TD_OK);
  bool permuted = true;
  for (size_t k = 0; k < n; ++k) permuted = permuted && r[k] == static_cast<double>(k) && b[k] == l[k];
  CHECK(permuted);
}

TEST_CASE("subviews share memory and keep it alive after the parent is released") {
  td_view* parent = nullptr;
  td_view_args args = args_of("parent", TD_ELEMENT_DOUBLE, {4, 5, 6});
  REQUIRE(td_view_create(&args, &parent) == TD_OK);
  *at(parent, {2, 3, 4}) = 7.0;
  const td_slice slices[3] = {TD_INDEX(2), TD_RANGE(1, 5), TD_ALL};
  td_view* sub = nullptr;
  REQUIRE(td_view_subview(parent, slices, 3, &sub) == TD_OK);
  view_ref owned_sub(sub);
  int rank = 0;
  CHECK(td_view_rank(sub, &rank) == TD_OK);
  CHECK(rank == 2);
  CHECK(extent(sub, 0) == 4);
  CHECK(*at(sub, {2, 4}) == 7.0);
  const td_slice column[2] = {TD_ALL, TD_INDEX(4)};
  td_view* col = nullptr;
  REQUIRE(td_view_subview(sub, column, 2, &col) == TD_OK);
  view_ref owned_col(col);
  td_layout layout = -1;
  CHECK(td_view_layout(col, &layout) == TD_OK);
  CHECK(layout == TD_LAYOUT_STRIDE);
  size_t uses = 0;
  CHECK(td_view_use_count(col, &uses) == TD_OK);
  CHECK(uses == 3);
  const char* text = nullptr;
  REQUIRE(td_view_label(col, &text) == TD_OK);
  REQUIRE(td_view_release(parent) == TD_OK);
  // The label and the elements live on with the subviews.
  CHECK(std::string(text) == "parent");
  CHECK(*at(col, {2}) == 7.0);
  CHECK(td_view_use_count(col, &uses) == TD_OK);
  CHECK(uses == 2);

  const td_slice bad_range[2] = {TD_RANGE(3, 9), TD_ALL};
  td_view* out = nullptr;
  CHECK_FAILS(td_view_subview(sub, bad_range, 2, &out), TD_ERROR_INVALID_ARGUMENT, "view \"parent\"",
              "[3, 9) in dimension 0", "[0, 4)");
  const td_slice bad_index[2] = {TD_ALL, TD_INDEX(6)};
  CHECK_FAILS(td_view_subview(sub, bad_index, 2, &out), TD_ERROR_INVALID_ARGUMENT, "index 6 in dimension 1");
  CHECK_FAILS(td_view_subview(sub, bad_index, 1, &out), TD_ERROR_INVALID_ARGUMENT, "1 slices", "rank 2");
  td_slice unknown[2] = {TD_ALL, TD_ALL};
  unknown[1].kind = 5;
  CHECK_FAILS(td_view_subview(sub, unknown, 2, &out), TD_ERROR_INVALID_ARGUMENT, "slices[1].kind");
  CHECK(out == nullptr);
}

TEST_CASE("mirrors: a host mirror view shares the array, a mirror copies its shape") {
  td_view_args args = args_of("M", TD_ELEMENT_DOUBLE, {3, 40}, TD_LAYOUT_LEFT);
  args.flags = TD_VIEW_PAD;
  view_ref v(args);
  td_view* same = nullptr;
  REQUIRE(td_view_create_mirror_view(v, &same) == TD_OK);
  view_ref owned_same(same);
  CHECK(at(same, {1, 1}) == at(v, {1, 1}));
  td_view* mirror = nullptr;
  REQUIRE(td_view_create_mirror(v, &mirror) == TD_OK);
  view_ref owned_mirror(mirror);
  CHECK(label(mirror) == "M_mirror");
  CHECK(at(mirror, {1, 1}) != at(v, {1, 1}));
  CHECK(stride(mirror, 1) == stride(v, 1));
  *at(v, {2, 39}) = 1.25;
  REQUIRE(td_view_deep_copy(mirror, v) == TD_OK);
  CHECK(*at(mirror, {2, 39}) == 1.25);
}

TEST_CASE("resize replaces the caller's reference and keeps the overlap; other references keep "
          "the old array") {
  td_view* v = nullptr;
  td_view_args args = args_of("R", TD_ELEMENT_DOUBLE, {2, 3});
  REQUIRE(td_view_create(&args, &v) == TD_OK);
  *at(v, {1, 2}) = 8.0;
  td_view* kept = v;
  REQUIRE(td_view_retain(kept) == TD_OK);
  const size_t bigger[2] = {3, 4};
  REQUIRE(td_view_resize(&v, bigger, 2) == TD_OK);
  CHECK(v != kept);
  CHECK(*at(v, {1, 2}) == 8.0);
  CHECK(*at(v, {2, 3}) == 0.0);
  CHECK(extent(kept, 1) == 3);
  CHECK(*at(kept, {1, 2}) == 8.0);
  REQUIRE(td_view_release(kept) == TD_OK);

  const size_t other[2] = {5, 1};
  td_view* before = v;
  REQUIRE(td_view_realloc(&v, other, 2) == TD_OK);
  CHECK(v != before);
  CHECK(extent(v, 0) == 5);
  CHECK(*at(v, {1, 0}) == 0.0);
  int rank = 0;
  CHECK_FAILS(td_view_rank(before, &rank), TD_ERROR_INVALID_HANDLE, "already released");

  CHECK_FAILS(td_view_resize(&v, other, 1), TD_ERROR_INVALID_ARGUMENT, "view \"R\"", "1 extents given",
              "rank 2");
  const size_t zero[2] = {0, 1};
  CHECK_FAILS(td_view_realloc(&v, zero, 2), TD_ERROR_INVALID_ARGUMENT, "view \"R\"", "extent(0) is 0");
  CHECK(extent(v, 0) == 5);  // unchanged
#if !defined(__SANITIZE_ADDRESS__)  // ASan aborts on allocations above its maximum instead
  // An allocation the system refuses (64 TiB): the old reference is gone and *v is NULL.
  const size_t too_big[2] = {size_t{1} << 43, 1};
  CHECK_FAILS(td_view_realloc(&v, too_big, 2), TD_ERROR_OUT_OF_MEMORY, "view \"R\"");
  CHECK(v == nullptr);
#endif
  CHECK(td_view_release(v) == TD_OK);
}
