/*
 * taskdag: C++17 layer over the C API of taskdag.h. Header-only.
 *
 * Every fallible call throws taskdag::error (status plus the message of td_last_error_message);
 * handles are move-only RAII owners of one reference. The C API stays available alongside: get()
 * returns the raw handle, and the classes take over raw references with adopt().
 *
 *   taskdag::runtime rt;                                   // td_initialize ... td_finalize
 *   taskdag::memory_pool pool(1 << 20);                    // 1 MiB of 64..4096-byte blocks
 *   double* x = pool.allocate<double>(100);                // nullptr when the pool is full
 *   pool.deallocate(x, 100);
 */
#ifndef TASKDAG_HPP
#define TASKDAG_HPP

#include "taskdag.h"

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace taskdag {

/// A failed taskdag call: the status it returned and the thread's td_last_error_message() at the
/// time of the failure.
class error : public std::runtime_error {
public:
  error(td_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}

  /// The status of the failed call, e.g. TD_ERROR_INVALID_ARGUMENT.
  td_status status() const noexcept { return status_; }

private:
  td_status status_;
};

/// Throws taskdag::error for any status other than TD_OK, with the calling thread's last error
/// message, so it must be called right after the failing C call, on the same thread.
inline void check(td_status status) {
  if (status != TD_OK) {
    throw error(status, td_last_error_message());
  }
}

/// The name of a status, e.g. "TD_ERROR_NULL_ARGUMENT" (td_status_string).
inline std::string status_name(td_status status) {
  return td_status_string(static_cast<int>(status));
}

/// The library's version as text, e.g. "0.1.0" (td_version_string); usable before initialize.
inline std::string version() { return td_version_string(); }

/// Describes the running runtime: version, build features, cores, threads, memory spaces, GPUs.
/// Throws taskdag::error (TD_ERROR_NOT_INITIALIZED) when the runtime is not initialized.
inline std::string configuration() {
  char* text = nullptr;
  check(td_configuration_string(&text));
  std::unique_ptr<char, void (*)(char*)> owner(text, td_string_free);
  return std::string(owner.get());
}

/// Scope guard of the process-wide runtime: td_initialize in the constructor, td_finalize in
/// the destructor. One runtime object may exist at a time (a second one throws
/// TD_ERROR_ALREADY_INITIALIZED); a new one may be created after the previous one is destroyed.
/// Not copyable or movable: the runtime's lifetime is the object's scope.
class runtime {
public:
  /// Initializes with the defaults: all cores, the first GPU if any. Throws taskdag::error.
  runtime() { check(td_initialize(nullptr)); }

  /// Initializes with `args` (start from TD_INIT_ARGS_INIT). Throws taskdag::error.
  explicit runtime(const td_init_args& args) { check(td_initialize(&args)); }

  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// Finalizes. Objects such as memory pools stay valid until they are destroyed.
  ~runtime() { td_finalize(); }
};

/// A memory pool (td_pool): a fixed span handing out power-of-two blocks, lock-free and safe to
/// use from many threads at once.
///
/// The object owns one reference to the pool and releases it when destroyed. It is move-only;
/// share() makes another owning object for the same pool (shared ownership), and the pool's
/// memory is freed when the last one is destroyed, which invalidates every block from it.
/// A moved-from object is empty: its calls throw TD_ERROR_NULL_ARGUMENT.
///
/// Thread safety: allocate, deallocate and the queries may run concurrently on one object;
/// assignment and destruction need exclusive access, as for any C++ object.
class memory_pool {
public:
  /// Creates a pool from C arguments (start from TD_POOL_ARGS_INIT). Throws taskdag::error:
  /// TD_ERROR_INVALID_ARGUMENT for sizes breaking
  /// 0 < min block <= max block <= superblock <= total, TD_ERROR_NOT_INITIALIZED, ...
  static memory_pool create(const td_pool_args& args) {
    td_pool* pool = nullptr;
    check(td_pool_create(&args, &pool));
    return adopt(pool);
  }

  /// Creates a host pool of at least `min_total_alloc_size` bytes with blocks from
  /// `min_block_alloc_size` to `max_block_alloc_size` bytes and superblocks of
  /// `min_superblock_size` bytes (0 = max_block_alloc_size). Sizes are rounded up to powers of
  /// two. Throws taskdag::error as create() does.
  explicit memory_pool(std::size_t min_total_alloc_size, std::size_t min_block_alloc_size = 64,
                       std::size_t max_block_alloc_size = 4096,
                       std::size_t min_superblock_size = 0)
      : memory_pool(create(make_args(min_total_alloc_size, min_block_alloc_size,
                                     max_block_alloc_size, min_superblock_size))) {}

  /// Takes over one reference the caller owns (from td_pool_create or td_pool_retain); the
  /// object releases it. `pool` may be NULL for an empty object.
  static memory_pool adopt(td_pool* pool) noexcept { return memory_pool(pool); }

  memory_pool(memory_pool&& other) noexcept : pool_(std::exchange(other.pool_, nullptr)) {}

  memory_pool& operator=(memory_pool&& other) noexcept {
    if (this != &other) {
      td_pool_release(pool_);
      pool_ = std::exchange(other.pool_, nullptr);
    }
    return *this;
  }

  memory_pool(const memory_pool&) = delete;
  memory_pool& operator=(const memory_pool&) = delete;

  /// Releases this object's reference (td_pool_release).
  ~memory_pool() { td_pool_release(pool_); }

  /// Another owner of the same pool (td_pool_retain). Throws taskdag::error.
  memory_pool share() const {
    check(td_pool_retain(pool_));
    return memory_pool(pool_);
  }

  /// Allocates a block of at least `size` bytes, aligned to its block size
  /// (allocate_block_size(size)), searching the pool up to `attempt_limit` times. One search can
  /// miss while other threads race for the same empty superblock; a few more make that rare.
  ///
  /// Returns nullptr when the pool has no free block (TD_ERROR_POOL_EXHAUSTED, counted in the
  /// statistics' failed_allocations) and for `size` 0; these are expected outcomes, not errors.
  /// Throws taskdag::error for misuse: `size` above max_block_size() or `attempt_limit` < 1
  /// (TD_ERROR_INVALID_ARGUMENT), an empty object (TD_ERROR_NULL_ARGUMENT).
  /// The block belongs to the caller until deallocate(); the pool must outlive it.
  void* allocate(std::size_t size, int attempt_limit = 1) {
    void* block = td_pool_allocate(pool_, size, attempt_limit);
    if (block == nullptr && size != 0) {
      // A NULL for a nonzero size always comes with this thread's last error set by the call.
      const td_status status = td_last_error();
      if (status != TD_ERROR_POOL_EXHAUSTED) {
        throw error(status, td_last_error_message());
      }
    }
    return block;
  }

  /// Allocates uninitialized storage for `n` objects of type T, like std::allocator<T>: the
  /// objects must be constructed (placement new, std::uninitialized_*) before use and destroyed
  /// before deallocate<T>. The block is aligned to its size, a power of two >= n * sizeof(T), so
  /// it is suitably aligned for T; the alignment is checked anyway.
  ///
  /// Returns nullptr when the pool is exhausted or `n` is 0. Throws taskdag::error
  /// (TD_ERROR_INVALID_ARGUMENT) when n * sizeof(T) overflows or exceeds max_block_size(), or
  /// `attempt_limit` < 1.
  template <class T>
  T* allocate(std::size_t n = 1, int attempt_limit = 1) {
    static_assert(!std::is_void<T>::value, "use allocate(size) for untyped bytes");
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
      throw error(TD_ERROR_INVALID_ARGUMENT,
                  "taskdag::memory_pool::allocate<T>: n * sizeof(T) overflows size_t (n = " +
                      std::to_string(n) + ")");
    }
    void* block = allocate(n * sizeof(T), attempt_limit);
    if (block != nullptr && reinterpret_cast<std::uintptr_t>(block) % alignof(T) != 0) {
      td_pool_deallocate(pool_, block, n * sizeof(T));
      throw error(TD_ERROR_INTERNAL,
                  "taskdag::memory_pool::allocate<T>: block is not aligned to alignof(T) = " +
                      std::to_string(alignof(T)) + "; please report this bug");
    }
    return static_cast<T*>(block);
  }

  /// Returns a block to the pool; `size` must map to the block size it was allocated with.
  /// nullptr is ignored, matching allocate's nullptr results. Throws taskdag::error
  /// (TD_ERROR_INVALID_ARGUMENT) for a pointer that is not a live block of this pool, or a size of
  /// another block size; the pool is then unchanged.
  void deallocate(void* block, std::size_t size) {
    if (block != nullptr) {
      check(td_pool_deallocate(pool_, block, size));
    }
  }

  /// Returns storage from allocate<T>(n); the objects in it must already be destroyed.
  template <class T>
  void deallocate(T* block, std::size_t n = 1) {
    deallocate(static_cast<void*>(block), n * sizeof(T));
  }

  /// Allocatable bytes in the pool (>= the requested total size).
  std::size_t capacity() const { return query(td_pool_capacity); }

  /// The smallest block size; smaller requests take a whole block.
  std::size_t min_block_size() const { return query(td_pool_min_block_size); }

  /// The largest block size, the largest request allocate accepts.
  std::size_t max_block_size() const { return query(td_pool_max_block_size); }

  /// The block size an allocation of `size` bytes takes: the smallest power of two
  /// >= max(size, min_block_size()). Throws taskdag::error (TD_ERROR_INVALID_ARGUMENT) when
  /// `size` is above max_block_size().
  std::size_t allocate_block_size(std::size_t size) const {
    std::size_t block = 0;
    check(td_pool_allocate_block_size(pool_, size, &block));
    return block;
  }

  /// A snapshot of the pool's usage; exact while no thread allocates or frees.
  td_pool_stats usage_statistics() const {
    td_pool_stats stats = TD_POOL_STATS_INIT;
    check(td_pool_usage_statistics(pool_, &stats));
    return stats;
  }

  /// The C handle, still owned by this object (for C calls; do not release it).
  td_pool* get() const noexcept { return pool_; }

  /// True unless the object is empty (moved from, or adopted NULL).
  explicit operator bool() const noexcept { return pool_ != nullptr; }

  /// Gives up ownership: returns the C handle, whose reference the caller must now release with
  /// td_pool_release, and leaves this object empty.
  td_pool* detach() noexcept { return std::exchange(pool_, nullptr); }

private:
  explicit memory_pool(td_pool* pool) noexcept : pool_(pool) {}

  static td_pool_args make_args(std::size_t total, std::size_t min_block, std::size_t max_block,
                                std::size_t superblock) {
    td_pool_args args = TD_POOL_ARGS_INIT;
    args.min_total_alloc_size = total;
    args.min_block_alloc_size = min_block;
    args.max_block_alloc_size = max_block;
    args.min_superblock_size = superblock;
    return args;
  }

  std::size_t query(td_status (*function)(const td_pool*, std::size_t*)) const {
    std::size_t value = 0;
    check(function(pool_, &value));
    return value;
  }

  td_pool* pool_ = nullptr;
};

// =============================================================================================
// Views (td_view): labelled, reference-counted multidimensional arrays
// =============================================================================================
//
//   taskdag::view<double**> a("A", 100, 200);              // LayoutRight, zero-filled
//   a(3, 4) = 1.0;                                          // plain index arithmetic
//   taskdag::view<double**, taskdag::layout_left> b("B", 100, 200);
//   taskdag::deep_copy(b, a);                               // permuting copy
//   auto row = taskdag::subview(a, 3, taskdag::ALL);        // view<double*, layout_stride>
//
// The data type names the element type and the rank as in Kokkos: one `*` per dimension
// (`double***` is a rank-3 array of double, `double` a single element; up to 8). A `const`
// element type gives a read-only view (`view<const double**>`), assignable from a writable one.
// The layout is layout_right (C order, the default), layout_left (Fortran order) or
// layout_stride (any strides; what subview returns). Copying a view object shares the array
// (td_view_retain); the last copy, subview or mirror view frees it.
//
// operator() computes `data + i0 * stride0 + i1 * stride1 + ...` from strides cached in the
// object (the stride-one dimension of layout_right/left is a compile-time 1), so it inlines to
// plain arithmetic. Without NDEBUG it first checks every index against its extent and throws
// taskdag::error (TD_ERROR_INVALID_ARGUMENT) naming the label, the dimension and the index.

/// Layout tags of taskdag::view.
struct layout_right {};
struct layout_left {};
struct layout_stride {};

/// subview argument keeping a whole dimension (TD_ALL).
struct all_type {};
constexpr all_type ALL{};

/// Options of a view allocation: `view_alloc("A").without_initializing().padded()`.
struct view_alloc {
  explicit view_alloc(std::string label_) : label(std::move(label_)) {}
  /// Leave the elements uninitialized (TD_VIEW_NO_INIT).
  view_alloc& without_initializing() {
    initialize = false;
    return *this;
  }
  /// Pad the stride-one dimension to whole cache lines (TD_VIEW_PAD).
  view_alloc& padded() {
    pad = true;
    return *this;
  }
  /// Memory space: TD_SPACE_HOST, TD_SPACE_CUDA (device memory: operator() gives device
  /// references, which the host must not use; copy through create_mirror_view and deep_copy)
  /// or TD_SPACE_CUDA_HOST_PINNED (page-locked host memory, a host view in every respect).
  view_alloc& space(td_memory_space s) {
    memory_space = s;
    return *this;
  }
  std::string label;
  bool initialize = true;
  bool pad = false;
  td_memory_space memory_space = TD_SPACE_HOST;
};

namespace detail {

/// `T**...*` -> element type T and rank (the number of `*`).
template <class D>
struct data_type_traits {
  using value_type = D;
  static constexpr int rank = 0;
};
template <class D>
struct data_type_traits<D*> {
  using value_type = typename data_type_traits<D>::value_type;
  static constexpr int rank = data_type_traits<D>::rank + 1;
};

/// The data type with `rank` stars over `T`.
template <class T, int Rank>
struct add_stars {
  using type = typename add_stars<T, Rank - 1>::type*;
};
template <class T>
struct add_stars<T, 0> {
  using type = T;
};

/// The TD_ELEMENT_* value for T; TD_ELEMENT_OPAQUE (of sizeof(T) bytes) for other types.
template <class T>
constexpr td_element_type element_type_of() {
  if constexpr (std::is_same<T, float>::value) {
    return TD_ELEMENT_FLOAT;
  } else if constexpr (std::is_same<T, double>::value) {
    return TD_ELEMENT_DOUBLE;
  } else if constexpr (std::is_same<T, std::complex<float>>::value) {
    return TD_ELEMENT_COMPLEX_FLOAT;
  } else if constexpr (std::is_same<T, std::complex<double>>::value) {
    return TD_ELEMENT_COMPLEX_DOUBLE;
  } else if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value &&
                       sizeof(T) <= 8) {
    constexpr int log2 = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
    return (std::is_signed<T>::value ? TD_ELEMENT_INT8 : TD_ELEMENT_UINT8) + log2;
  } else {
    return TD_ELEMENT_OPAQUE;
  }
}

template <class Layout>
constexpr td_layout layout_of() {
  if constexpr (std::is_same<Layout, layout_left>::value) {
    return TD_LAYOUT_LEFT;
  } else if constexpr (std::is_same<Layout, layout_stride>::value) {
    return TD_LAYOUT_STRIDE;
  } else {
    static_assert(std::is_same<Layout, layout_right>::value,
                  "a view's layout is taskdag::layout_right, layout_left or layout_stride");
    return TD_LAYOUT_RIGHT;
  }
}

/// Whether integer index `i` lies in [0, extent).
template <class I>
constexpr bool index_in_range(I i, std::size_t extent) {
  static_assert(std::is_integral<I>::value, "view indices must be integers");
  if constexpr (std::is_signed<I>::value) {
    if (i < 0) return false;
  }
  return static_cast<std::size_t>(i) < extent;
}

/// A subview argument: an integer index, a std::pair range [first, second) or ALL.
template <class A>
struct slice_arg {
  static_assert(std::is_integral<A>::value,
                "subview arguments are integer indices, std::pair ranges or taskdag::ALL");
  static constexpr bool keeps_dimension = false;
  static td_slice to_slice(A i) { return td_slice{TD_SLICE_INDEX, static_cast<int64_t>(i), 0}; }
};
template <class B, class E>
struct slice_arg<std::pair<B, E>> {
  static constexpr bool keeps_dimension = true;
  static td_slice to_slice(const std::pair<B, E>& r) {
    return td_slice{TD_SLICE_RANGE, static_cast<int64_t>(r.first), static_cast<int64_t>(r.second)};
  }
};
template <>
struct slice_arg<all_type> {
  static constexpr bool keeps_dimension = true;
  static td_slice to_slice(all_type) { return td_slice{TD_SLICE_ALL, 0, 0}; }
};

}  // namespace detail

/// A typed view: `view<double**>` is a rank-2 array of double in LayoutRight, `view<int*,
/// layout_left>` a rank-1 array of int in LayoutLeft. Copies share the array (reference
/// counting); see the comment above for indexing and layouts.
///
/// An empty view (default-constructed, moved from) has no array; its operator() must not be
/// used and its queries throw TD_ERROR_NULL_ARGUMENT (label() gives "").
///
/// Thread safety: copies of one view may be used from any threads; element access follows the
/// usual C++ rules (no unsynchronized write to an element another thread reads or writes).
template <class DataType, class Layout = layout_right>
class view {
  using traits = detail::data_type_traits<DataType>;

public:
  /// The element type, possibly const.
  using value_type = typename traits::value_type;
  using non_const_value_type = typename std::remove_const<value_type>::type;
  using reference = value_type&;
  using layout_type = Layout;
  using data_type = DataType;
  /// The writable host view with this shape and layout (create_mirror's result).
  using host_mirror_type = view<typename detail::add_stars<non_const_value_type, traits::rank>::type,
                                Layout>;

  static constexpr int rank = traits::rank;
  static_assert(rank <= TD_VIEW_MAX_RANK, "a view has at most 8 dimensions");
  static_assert(std::is_trivially_copyable<non_const_value_type>::value,
                "view elements are copied as bytes, so they must be trivially copyable");

  /// An empty view.
  view() noexcept = default;

  /// Allocates a zero-filled host array labelled `label` with one extent per dimension.
  /// Throws taskdag::error (TD_ERROR_INVALID_ARGUMENT for a zero or too large extent, naming the
  /// dimension; TD_ERROR_OUT_OF_MEMORY; TD_ERROR_NOT_INITIALIZED).
  template <class... N, class = std::enable_if_t<sizeof...(N) == rank>>
  explicit view(const std::string& label, N... extents) : view(view_alloc(label), extents...) {}

  /// Allocates with options (`view_alloc("A").without_initializing()`).
  template <class... N, class = std::enable_if_t<sizeof...(N) == rank>>
  explicit view(const view_alloc& alloc, N... extents) {
    static_assert(!std::is_same<Layout, layout_stride>::value,
                  "a layout_stride view is allocated with extents and strides arrays");
    create(alloc, {static_cast<std::size_t>(extents)...}, {});
  }

  /// Allocates a layout_stride array with explicit strides (in elements; they must not alias).
  view(const view_alloc& alloc, const std::array<std::size_t, rank>& extents,
       const std::array<std::size_t, rank>& strides) {
    static_assert(std::is_same<Layout, layout_stride>::value,
                  "explicit strides need a layout_stride view");
    create(alloc, extents, strides);
  }

  /// An unmanaged view of the caller's array at `data`, which must hold the elements in this
  /// view's layout and outlive the view and its copies; taskdag never frees it (td_view_wrap).
  template <class... N, class = std::enable_if_t<sizeof...(N) == rank>>
  static view wrap(value_type* data, const std::string& label, N... extents) {
    static_assert(!std::is_same<Layout, layout_stride>::value,
                  "wrap a layout_stride array with the extents and strides arrays");
    return wrap_args(data, label, {static_cast<std::size_t>(extents)...}, {});
  }

  /// An unmanaged layout_stride view of the caller's array (strides in elements).
  static view wrap(value_type* data, const std::string& label,
                   const std::array<std::size_t, rank>& extents,
                   const std::array<std::size_t, rank>& strides) {
    static_assert(std::is_same<Layout, layout_stride>::value,
                  "explicit strides need a layout_stride view");
    return wrap_args(data, label, extents, strides);
  }

  /// Takes over one reference the caller owns (td_view_create, td_view_retain, ...). Throws
  /// taskdag::error (TD_ERROR_INVALID_ARGUMENT) when the view's element type, rank or layout
  /// does not match this type, after releasing the reference. NULL gives an empty view.
  static view adopt(td_view* handle) {
    view v;
    v.handle_ = handle;
    v.load();
    return v;
  }

  view(const view& other) : view() { share(other); }

  /// A view of the same array with a const element type or as layout_stride.
  template <class D, class L,
            class = std::enable_if_t<!std::is_same<view<D, L>, view>::value &&
                                     view<D, L>::rank == rank &&
                                     std::is_same<typename view<D, L>::non_const_value_type,
                                                  non_const_value_type>::value &&
                                     (std::is_const<value_type>::value ||
                                      !std::is_const<typename view<D, L>::value_type>::value) &&
                                     (std::is_same<L, Layout>::value ||
                                      std::is_same<Layout, layout_stride>::value)>>
  view(const view<D, L>& other) : view() {  // NOLINT(google-explicit-constructor)
    if (other.get() != nullptr) {
      check(td_view_retain(other.get()));
      handle_ = other.get();
      load();
    }
  }

  view(view&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)),
        data_(std::exchange(other.data_, nullptr)),
        extents_(other.extents_),
        strides_(other.strides_) {}

  view& operator=(const view& other) {
    if (this != &other) {
      view copy(other);
      swap(copy);
    }
    return *this;
  }

  view& operator=(view&& other) noexcept {
    if (this != &other) {
      view moved(std::move(other));
      swap(moved);
    }
    return *this;
  }

  /// Releases this object's reference (td_view_release).
  ~view() { td_view_release(handle_); }

  /// The element at (i0, i1, ...): `data() + i0 * stride(0) + i1 * stride(1) + ...`. Checks the
  /// indices unless NDEBUG is defined.
  template <class... I>
  reference operator()(I... indices) const {
    static_assert(sizeof...(I) == rank, "operator() takes one index per dimension");
#ifndef NDEBUG
    check_indices(std::index_sequence_for<I...>{}, indices...);
#endif
    return data_[offset(std::index_sequence_for<I...>{}, indices...)];
  }

  /// Extent of dimension `d` (0..rank-1).
  std::size_t extent(int d) const { return extents_.at(static_cast<std::size_t>(d)); }
  /// Stride of dimension `d` in elements.
  std::size_t stride(int d) const { return strides_.at(static_cast<std::size_t>(d)); }
  /// Number of elements.
  std::size_t size() const {
    std::size_t n = 1;
    for (std::size_t e : extents_) n *= e;
    return data_ == nullptr ? 0 : n;
  }
  /// Elements from the first to one past the last, gaps included (td_view_span).
  std::size_t span() const { return query<std::size_t>(td_view_span); }
  /// Address of element (0, ..., 0); nullptr for an empty view.
  value_type* data() const noexcept { return data_; }
  /// The label ("" for an empty view).
  std::string label() const {
    if (handle_ == nullptr) return std::string();
    const char* text = nullptr;
    check(td_view_label(handle_, &text));
    return text;
  }
  /// True when the elements fill the span without gaps.
  bool is_contiguous() const { return query<int>(td_view_is_contiguous) != 0; }
  /// False for wrapped memory.
  bool is_managed() const { return query<int>(td_view_is_managed) != 0; }
  /// Views sharing the array: subviews, mirror views and views adopted from C
  /// (td_view_use_count). Copies of one view object share its C view and count once.
  std::size_t use_count() const { return query<std::size_t>(td_view_use_count); }
  /// The runtime layout: TD_LAYOUT_RIGHT, LEFT or STRIDE (a layout_stride view may hold any).
  td_layout layout() const { return query<td_layout>(td_view_layout); }

  /// The C handle, still owned by this object (for C calls; do not release it).
  td_view* get() const noexcept { return handle_; }
  /// True unless the view is empty.
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  void swap(view& other) noexcept {
    std::swap(handle_, other.handle_);
    std::swap(data_, other.data_);
    std::swap(extents_, other.extents_);
    std::swap(strides_, other.strides_);
  }

  /// Gives up ownership: returns the C handle (the caller releases it) and empties the view.
  td_view* detach() noexcept {
    data_ = nullptr;
    return std::exchange(handle_, nullptr);
  }

private:
  template <class, class>
  friend class view;
  template <class D, class L, class... N>
  friend void resize(view<D, L>& v, N... extents);
  template <class D, class L, class... N>
  friend void realloc(view<D, L>& v, N... extents);

  /// Reassigns the view to a new array of `extents`, keeping the overlapping elements
  /// (td_view_resize) or not (td_view_realloc, which may leave the view empty on failure).
  void reassign(bool keep, const std::array<std::size_t, rank>& extents) {
    const td_status status = keep ? td_view_resize(&handle_, extents.data(), rank)
                                  : td_view_realloc(&handle_, extents.data(), rank);
    if (status != TD_OK) {
      error failure(status, td_last_error_message());
      if (handle_ == nullptr) data_ = nullptr;
      throw failure;
    }
    load();
  }

  void create(const view_alloc& alloc, const std::array<std::size_t, rank>& extents,
              const std::array<std::size_t, rank>& strides) {
    td_view_args args = make_args(alloc.label, extents, strides);
    args.memory_space = alloc.memory_space;
    args.flags = (alloc.initialize ? 0u : TD_VIEW_NO_INIT) | (alloc.pad ? TD_VIEW_PAD : 0u);
    check(td_view_create(&args, &handle_));
    load();
  }

  static view wrap_args(value_type* data, const std::string& label,
                        const std::array<std::size_t, rank>& extents,
                        const std::array<std::size_t, rank>& strides) {
    td_view_args args = make_args(label, extents, strides);
    view v;
    check(td_view_wrap(&args, const_cast<non_const_value_type*>(data), &v.handle_));
    v.load();
    return v;
  }

  static td_view_args make_args(const std::string& label,
                                const std::array<std::size_t, rank>& extents,
                                const std::array<std::size_t, rank>& strides) {
    td_view_args args = TD_VIEW_ARGS_INIT;
    args.element_type = detail::element_type_of<non_const_value_type>();
    args.element_size = sizeof(non_const_value_type);
    args.rank = rank;
    args.layout = detail::layout_of<Layout>();
    args.label = label.c_str();
    for (int d = 0; d < rank; ++d) {
      args.extents[d] = extents[static_cast<std::size_t>(d)];
      args.strides[d] = strides[static_cast<std::size_t>(d)];
    }
    return args;
  }

  void share(const view& other) {
    if (other.handle_ != nullptr) check(td_view_retain(other.handle_));
    handle_ = other.handle_;
    data_ = other.data_;
    extents_ = other.extents_;
    strides_ = other.strides_;
  }

  /// Caches data, extents and strides of handle_, after checking that the view fits this type;
  /// a view that does not is released and reported.
  void load() {
    if (handle_ == nullptr) {
      data_ = nullptr;
      return;
    }
    try {
      td_element_type element = 0;
      std::size_t element_size = 0;
      int view_rank = 0;
      td_layout view_layout = 0;
      check(td_view_element_type(handle_, &element));
      check(td_view_element_size(handle_, &element_size));
      check(td_view_rank(handle_, &view_rank));
      check(td_view_layout(handle_, &view_layout));
      const td_layout wanted = detail::layout_of<Layout>();
      if (element != detail::element_type_of<non_const_value_type>() ||
          element_size != sizeof(non_const_value_type) || view_rank != rank ||
          (wanted != TD_LAYOUT_STRIDE && view_layout != wanted)) {
        throw error(TD_ERROR_INVALID_ARGUMENT,
                    "taskdag::view: view \"" + label() + "\" (element type " +
                        std::to_string(element) + " of " + std::to_string(element_size) +
                        " bytes, rank " + std::to_string(view_rank) + ", layout " +
                        std::to_string(view_layout) + ") does not fit this view type (element type " +
                        std::to_string(detail::element_type_of<non_const_value_type>()) + " of " +
                        std::to_string(sizeof(non_const_value_type)) + " bytes, rank " +
                        std::to_string(rank) + ", layout " + std::to_string(wanted) + ")");
      }
      void* data = nullptr;
      check(td_view_data(handle_, &data));
      data_ = static_cast<value_type*>(data);
      for (int d = 0; d < rank; ++d) {
        check(td_view_extent(handle_, d, &extents_[static_cast<std::size_t>(d)]));
        check(td_view_stride(handle_, d, &strides_[static_cast<std::size_t>(d)]));
      }
    } catch (...) {
      td_view_release(std::exchange(handle_, nullptr));
      data_ = nullptr;
      throw;
    }
  }

  template <class T>
  T query(td_status (*function)(const td_view*, T*)) const {
    T value{};
    check(function(handle_, &value));
    return value;
  }

  /// Stride of dimension K; the stride-one dimension of layout_right/left is a constant.
  template <std::size_t K>
  std::size_t stride_of() const noexcept {
    if constexpr ((std::is_same<Layout, layout_right>::value && K + 1 == rank) ||
                  (std::is_same<Layout, layout_left>::value && K == 0)) {
      return 1;
    } else {
      return strides_[K];
    }
  }

  template <std::size_t... K, class... I>
  std::size_t offset(std::index_sequence<K...>, I... indices) const noexcept {
    return (std::size_t{0} + ... + (static_cast<std::size_t>(indices) * stride_of<K>()));
  }

  template <std::size_t... K, class... I>
  void check_indices(std::index_sequence<K...>, I... indices) const {
    if (data_ == nullptr) {
      throw error(TD_ERROR_NULL_ARGUMENT, "taskdag::view::operator(): the view is empty");
    }
    (check_index(K, indices), ...);
  }

  template <class I>
  void check_index(std::size_t dim, I index) const {
    if (!detail::index_in_range(index, extents_[dim])) {
      throw error(TD_ERROR_INVALID_ARGUMENT,
                  "taskdag::view::operator(): view \"" + label() + "\": index " +
                      std::to_string(index) + " in dimension " + std::to_string(dim) +
                      " is out of range [0, " + std::to_string(extents_[dim]) + ")");
    }
  }

  td_view* handle_ = nullptr;
  value_type* data_ = nullptr;
  std::array<std::size_t, rank> extents_{};
  std::array<std::size_t, rank> strides_{};
};

/// Copies every element of `src` into `dst` (td_view_deep_copy): any two layouts of one shape
/// and element type. Throws taskdag::error naming both labels and the first differing extent.
template <class D1, class L1, class D2, class L2>
void deep_copy(const view<D1, L1>& dst, const view<D2, L2>& src) {
  static_assert(!std::is_const<typename view<D1, L1>::value_type>::value,
                "deep_copy writes into dst, so dst must not have a const element type");
  static_assert(std::is_same<typename view<D1, L1>::non_const_value_type,
                             typename view<D2, L2>::non_const_value_type>::value,
                "deep_copy copies between views of one element type");
  check(td_view_deep_copy(dst.get(), src.get()));
}

/// Writes `value` to every element of `dst` (td_view_fill).
template <class D, class L>
void deep_copy(const view<D, L>& dst, const typename view<D, L>::non_const_value_type& value) {
  static_assert(!std::is_const<typename view<D, L>::value_type>::value,
                "deep_copy writes into dst, so dst must not have a const element type");
  check(td_view_fill(dst.get(), &value));
}

/// A new host view with `v`'s shape and layout, labelled "<label>_mirror", zero-filled
/// (td_view_create_mirror); the elements are not copied.
template <class D, class L>
typename view<D, L>::host_mirror_type create_mirror(const view<D, L>& v) {
  td_view* mirror = nullptr;
  check(td_view_create_mirror(v.get(), &mirror));
  return view<D, L>::host_mirror_type::adopt(mirror);
}

/// `v` itself when its memory is host memory, else create_mirror(v) (td_view_create_mirror_view).
template <class D, class L>
typename view<D, L>::host_mirror_type create_mirror_view(const view<D, L>& v) {
  td_view* mirror = nullptr;
  check(td_view_create_mirror_view(v.get(), &mirror));
  return view<D, L>::host_mirror_type::adopt(mirror);
}

/// The subview of `v` selected by one argument per dimension: an integer index (the dimension
/// disappears), a std::pair{begin, end} range or taskdag::ALL (td_view_subview). The result is a
/// layout_stride view of the remaining dimensions that shares `v`'s array and keeps it alive.
template <class D, class L, class... A>
auto subview(const view<D, L>& v, const A&... args) {
  static_assert(sizeof...(A) == view<D, L>::rank, "subview takes one argument per dimension");
  constexpr int kept = (0 + ... + (detail::slice_arg<A>::keeps_dimension ? 1 : 0));
  using result = view<typename detail::add_stars<typename view<D, L>::value_type, kept>::type,
                      layout_stride>;
  const td_slice slices[sizeof...(A) > 0 ? sizeof...(A) : 1] = {
      detail::slice_arg<A>::to_slice(args)...};
  td_view* sub = nullptr;
  check(td_view_subview(v.get(), slices, sizeof...(A), &sub));
  return result::adopt(sub);
}

/// Reassigns `v` to a new zero-filled array with `extents`, keeping the elements in the index
/// range both shapes share; other copies of `v` keep the old array (td_view_resize).
template <class D, class L, class... N>
void resize(view<D, L>& v, N... extents) {
  static_assert(sizeof...(N) == view<D, L>::rank, "resize takes one extent per dimension");
  v.reassign(true, {static_cast<std::size_t>(extents)...});
}

/// Reassigns `v` to a new zero-filled array with `extents`, keeping nothing; the old array is
/// released first (td_view_realloc). If the allocation fails, `v` is left empty.
template <class D, class L, class... N>
void realloc(view<D, L>& v, N... extents) {
  static_assert(sizeof...(N) == view<D, L>::rank, "realloc takes one extent per dimension");
  v.reassign(false, {static_cast<std::size_t>(extents)...});
}

}  // namespace taskdag

#endif  // TASKDAG_HPP
