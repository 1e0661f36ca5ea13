// The C++ layer's views (taskdag.hpp): typed element access, reference counting, conversions,
// deep_copy, mirrors, subviews, resize/realloc and wrapped memory.
//
// The bounds checks of operator() exist only without NDEBUG; this file turns them on whatever
// the build type (it is the only translation unit of its executable that instantiates views).
#undef NDEBUG

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpp_support.hpp"

using taskdag::view;
using taskdag_test::check_throws;
using taskdag_test::contains;

static_assert(view<double**>::rank == 2, "");
static_assert(view<int>::rank == 0, "");
static_assert(std::is_same<view<const float***>::value_type, const float>::value, "");
static_assert(std::is_same<view<const float***, taskdag::layout_left>::host_mirror_type,
                           view<float***, taskdag::layout_left>>::value,
              "");
static_assert(std::is_convertible<view<double*>, view<const double*>>::value, "");
static_assert(!std::is_convertible<view<const double*>, view<double*>>::value, "");
static_assert(std::is_convertible<view<double*>, view<double*, taskdag::layout_stride>>::value, "");
static_assert(!std::is_convertible<view<double*, taskdag::layout_stride>, view<double*>>::value,
              "");
static_assert(taskdag::detail::element_type_of<std::int16_t>() == TD_ELEMENT_INT16, "");
static_assert(taskdag::detail::element_type_of<unsigned long long>() == TD_ELEMENT_UINT64, "");
static_assert(taskdag::detail::element_type_of<std::complex<float>>() == TD_ELEMENT_COMPLEX_FLOAT,
              "");

namespace {

struct particle {
  double position[3];
  int id;
};

}  // namespace

TEST_CASE("operator() addresses the same elements as td_view_ptr in both layouts") {
  view<double***> right("R", 3, 4, 5);
  view<double***, taskdag::layout_left> left("L", 3, 4, 5);
  CHECK(right.label() == "R");
  CHECK(right.extent(0) == 3);
  CHECK(right.extent(2) == 5);
  CHECK(right.stride(0) == 20);
  CHECK(left.stride(2) == 12);
  CHECK(right.size() == 60);
  CHECK(right.layout() == TD_LAYOUT_RIGHT);
  CHECK(left.layout() == TD_LAYOUT_LEFT);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 5; ++k) {
        const std::int64_t index[3] = {i, j, k};
        void* r = nullptr;
        void* l = nullptr;
        REQUIRE(td_view_ptr(right.get(), index, &r) == TD_OK);
        REQUIRE(td_view_ptr(left.get(), index, &l) == TD_OK);
        CHECK(&right(i, j, k) == r);
        CHECK(&left(i, j, k) == l);
      }
    }
  }
  CHECK(right(0, 0, 0) == 0.0);  // zero-filled
}

TEST_CASE("operator() checks every index against its extent without NDEBUG") {
  view<int**> a("checked", 2, 3);
  a(1, 2) = 7;
  CHECK(a(1, 2) == 7);
  check_throws([&] { a(1, 3); }, TD_ERROR_INVALID_ARGUMENT,
               {"view \"checked\"", "index 3 in dimension 1", "[0, 3)"});
  check_throws([&] { a(-1, 0); }, TD_ERROR_INVALID_ARGUMENT, {"index -1 in dimension 0"});
  check_throws([&] { a(2u, 0u); }, TD_ERROR_INVALID_ARGUMENT, {"index 2 in dimension 0"});
  view<int**> empty;
  check_throws([&] { empty(0, 0); }, TD_ERROR_NULL_ARGUMENT, {"empty"});
}

TEST_CASE("copies share the array, and it lives while any copy or subview does") {
  view<double*> a("shared", 10);
  view<double*> b = a;
  CHECK(b.data() == a.data());
  b(3) = 1.5;
  view<const double*> c = b;  // read-only copy
  CHECK(c(3) == 1.5);
  CHECK(c.label() == "shared");
  // Copies are references to one C view; use_count counts views, such as subviews.
  CHECK(a.use_count() == 1);
  auto tail = taskdag::subview(a, std::make_pair(5, 10));
  CHECK(a.use_count() == 2);
  view<double*> moved = std::move(b);
  CHECK_FALSE(static_cast<bool>(b));  // NOLINT(bugprone-use-after-move)
  CHECK(moved.data() == a.data());
  a = view<double*>();
  moved = view<double*>();
  CHECK(c(3) == 1.5);  // c still holds the array
  c = view<const double*>();
  CHECK(tail.use_count() == 1);
  tail(0) = 2.0;
  view<double*> other("other", 4);
  view<double*, taskdag::layout_stride> strided = other;
  CHECK(&strided(3) == &other(3));
  other = view<double*>();
  CHECK(strided.label() == "other");
}

TEST_CASE("deep_copy permutes between layouts and fills with a value") {
  view<std::int64_t**> right("right", 30, 40);
  view<std::int64_t**, taskdag::layout_left> left("left", 30, 40);
  for (int i = 0; i < 30; ++i)
    for (int j = 0; j < 40; ++j) right(i, j) = i * 100 + j;
  taskdag::deep_copy(left, right);
  bool same = true;
  for (int i = 0; i < 30; ++i)
    for (int j = 0; j < 40; ++j) same = same && left(i, j) == i * 100 + j;
  CHECK(same);
  taskdag::deep_copy(left, 5);
  CHECK(left(29, 39) == 5);
  CHECK(left(0, 0) == 5);
  view<std::int64_t**> smaller("smaller", 30, 39);
  check_throws([&] { taskdag::deep_copy(smaller, right); }, TD_ERROR_INVALID_ARGUMENT,
               {"\"right\"", "\"smaller\"", "extent(1) is 40"});
}

TEST_CASE("mirrors: a host mirror view is the view itself, a mirror is a new array") {
  view<float**, taskdag::layout_left> a(taskdag::view_alloc("A").padded(), 100, 3);
  CHECK(a.stride(1) == 112);  // columns of 100 floats padded to whole 64-byte lines
  CHECK_FALSE(a.is_contiguous());
  a(99, 2) = 4.0f;
  auto same = taskdag::create_mirror_view(a);
  CHECK(same.data() == a.data());
  auto mirror = taskdag::create_mirror(a);
  static_assert(std::is_same<decltype(mirror), view<float**, taskdag::layout_left>>::value, "");
  CHECK(mirror.label() == "A_mirror");
  CHECK(mirror.data() != a.data());
  CHECK(mirror.stride(1) == 112);
  CHECK(mirror(99, 2) == 0.0f);
  taskdag::deep_copy(mirror, a);
  CHECK(mirror(99, 2) == 4.0f);
}

TEST_CASE("subview takes indices, ranges and ALL and keeps the parent alive") {
  view<int***> a("cube", 4, 5, 6);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 6; ++k) a(i, j, k) = i * 100 + j * 10 + k;
  auto plane = taskdag::subview(a, 2, std::make_pair(1, 4), taskdag::ALL);
  static_assert(decltype(plane)::rank == 2, "");
  CHECK(plane.extent(0) == 3);
  CHECK(plane.extent(1) == 6);
  CHECK(plane(0, 5) == 215);
  auto line = taskdag::subview(plane, taskdag::ALL, 3);
  CHECK(line(2) == 233);
  auto element = taskdag::subview(line, 1);
  static_assert(decltype(element)::rank == 0, "");
  CHECK(element() == 223);
  a = view<int***>();  // the parent handle goes; the subviews keep the array
  CHECK(line.use_count() == 3);
  CHECK(line(0) == 213);
  check_throws([&] { taskdag::subview(plane, 3, taskdag::ALL); }, TD_ERROR_INVALID_ARGUMENT,
               {"view \"cube\"", "index 3 in dimension 0"});
}

TEST_CASE("resize keeps the overlap, realloc starts over, other copies keep the old array") {
  view<double**> a("grow", 2, 3);
  a(1, 2) = 12.0;
  view<double**> old = a;
  taskdag::resize(a, 4, 4);
  CHECK(a.extent(0) == 4);
  CHECK(a(1, 2) == 12.0);
  CHECK(a(3, 3) == 0.0);
  CHECK(old.extent(0) == 2);
  CHECK(old.data() != a.data());
  taskdag::realloc(a, 5, 1);
  CHECK(a.extent(0) == 5);
  CHECK(a(1, 0) == 0.0);
  CHECK(a.label() == "grow");
  check_throws([&] { taskdag::resize(a, 0, 1); }, TD_ERROR_INVALID_ARGUMENT,
               {"view \"grow\"", "extent(0) is 0"});
  CHECK(a.extent(0) == 5);
}

TEST_CASE("wrap makes an unmanaged view of caller memory in its layout") {
  std::vector<double> column_major(6);
  auto w = view<double**, taskdag::layout_left>::wrap(column_major.data(), "wrapped", 2, 3);
  CHECK_FALSE(w.is_managed());
  w(1, 2) = 9.0;
  CHECK(column_major[1 + 2 * 2] == 9.0);
  std::vector<int> padded(2 * 8);
  auto s = view<int**, taskdag::layout_stride>::wrap(padded.data(), "s", {2, 5}, {8, 1});
  s(1, 4) = 3;
  CHECK(padded[12] == 3);
}

TEST_CASE("views of complex numbers, structs and a single element") {
  view<std::complex<double>*> z("z", 4);
  z(2) = {1.0, -1.0};
  taskdag::deep_copy(z, std::complex<double>(0.5, 2.0));
  CHECK(z(2) == std::complex<double>(0.5, 2.0));
  view<particle*> p("particles", 3);
  p(1).id = 42;
  p(1).position[2] = 3.0;
  auto q = taskdag::create_mirror(p);
  taskdag::deep_copy(q, p);
  CHECK(q(1).id == 42);
  CHECK(q(1).position[2] == 3.0);
  view<double> scalar("scalar");
  scalar() = 2.5;
  CHECK(scalar.size() == 1);
  CHECK(scalar() == 2.5);
}

TEST_CASE("adopt checks that a C view fits the type and releases one that does not") {
  td_view_args args = TD_VIEW_ARGS_INIT;
  args.element_type = TD_ELEMENT_FLOAT;
  args.rank = 2;
  args.extents[0] = 3;
  args.extents[1] = 4;
  args.layout = TD_LAYOUT_LEFT;
  args.label = "from C";
  td_view* raw = nullptr;
  REQUIRE(td_view_create(&args, &raw) == TD_OK);
  REQUIRE(td_view_retain(raw) == TD_OK);
  check_throws([&] { view<float**>::adopt(raw); }, TD_ERROR_INVALID_ARGUMENT,
               {"view \"from C\"", "does not fit"});
  auto ok = view<float**, taskdag::layout_left>::adopt(raw);  // takes the last reference
  CHECK(ok.label() == "from C");
  CHECK(ok.use_count() == 1);
  check_throws([&] { view<double**, taskdag::layout_stride>::adopt(ok.detach()); },
               TD_ERROR_INVALID_ARGUMENT, {"does not fit"});
}
