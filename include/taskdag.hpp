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
#include <atomic>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <vector>

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

/// True when TD_SPACE_CUDA can be used: built with CUDA support, a driver and a device
/// (configuration() says which part is missing otherwise).
inline bool cuda_available() noexcept { return td_cuda_available() != 0; }

/// Number of CUDA devices the driver reports; 0 without a driver or device.
inline int cuda_device_count() {
  int count = 0;
  check(td_cuda_device_count(&count));
  return count;
}

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

  /// Creates a pool in `space` (TD_SPACE_HOST; TD_SPACE_CUDA for blocks that kernels allocate
  /// through device_handle(); TD_SPACE_CUDA_HOST_PINNED for a host pool in page-locked memory),
  /// sized as the constructor's arguments. Throws taskdag::error: TD_ERROR_UNAVAILABLE for the
  /// CUDA spaces without a usable GPU (the message says why).
  static memory_pool create_in(td_memory_space space, std::size_t min_total_alloc_size,
                               std::size_t min_block_alloc_size = 64,
                               std::size_t max_block_alloc_size = 4096,
                               std::size_t min_superblock_size = 0) {
    td_pool_args args = make_args(min_total_alloc_size, min_block_alloc_size,
                                  max_block_alloc_size, min_superblock_size);
    args.memory_space = space;
    return create(args);
  }

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

  /// Returns the blocks in the calling thread's cache (td_pool_args.thread_cache) to the pool,
  /// so other threads can allocate them (td_pool_flush_thread_cache). Throws taskdag::error.
  void flush_thread_cache() { check(td_pool_flush_thread_cache(pool_)); }

  /// A snapshot of the pool's usage; exact while no thread allocates or frees.
  td_pool_stats usage_statistics() const {
    td_pool_stats stats = TD_POOL_STATS_INIT;
    check(td_pool_usage_statistics(pool_, &stats));
    return stats;
  }

  /// What a kernel needs to allocate from this TD_SPACE_CUDA pool: pass it by value and call
  /// td_dev_pool_allocate / td_dev_pool_deallocate (taskdag_cuda.cuh). Valid while the pool
  /// lives. Throws taskdag::error (TD_ERROR_INVALID_ARGUMENT) for a host pool.
  td_dev_pool device_handle() const {
    td_dev_pool handle{};
    check(td_pool_device_handle(pool_, &handle));
    return handle;
  }

  /// Frees every block of this TD_SPACE_CUDA pool at once and zeroes its statistics, after the
  /// GPU's queued work; no kernel may use the pool meanwhile. Throws taskdag::error
  /// (TD_ERROR_INVALID_ARGUMENT) for a host pool.
  void reset() { check(td_pool_reset(pool_)); }

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

// =============================================================================================
// Execution spaces and data-parallel dispatch (003, 004): taskdag::space, parallel_for,
// parallel_reduce, parallel_scan, parallel_team and taskdag::team_member.
//
//   auto threads = taskdag::space::threads();
//   taskdag::parallel_for(threads, 0, n, [&](std::int64_t i) { y[i] += a * x[i]; });
//   double dot = 0;
//   taskdag::parallel_reduce(threads, 0, n, [&](std::int64_t i, double& acc) { acc += x[i] * y[i]; },
//                            dot);
//
// Bodies are lambdas (any callable). The library hands out index ranges; the per-index call is
// inlined in a range loop instantiated for the lambda's type, so a loop costs what the lambda
// costs. An exception thrown by a body is caught on its thread, the dispatch finishes, and the
// first exception is rethrown to the caller (other threads stop taking new ranges). In a team
// body an exception must leave every member or none: a member that leaves early cannot meet the
// others at their next barrier or collective.
// =============================================================================================

/// Index type of ranges and teams.
using index_t = std::int64_t;

/// Built-in reduction operators, passed as tags: parallel_reduce(s, b, e, f, result, op::max).
namespace op {
struct sum_t {
  static constexpr td_reduce_op value = TD_REDUCE_SUM;
};
struct min_t {
  static constexpr td_reduce_op value = TD_REDUCE_MIN;
};
struct max_t {
  static constexpr td_reduce_op value = TD_REDUCE_MAX;
};
struct prod_t {
  static constexpr td_reduce_op value = TD_REDUCE_PROD;
};
inline constexpr sum_t sum{};
inline constexpr min_t min{};
inline constexpr max_t max{};
inline constexpr prod_t prod{};
}  // namespace op

namespace detail {

template <class Op>
inline constexpr bool is_reduce_op = std::is_same_v<Op, op::sum_t> ||
                                     std::is_same_v<Op, op::min_t> ||
                                     std::is_same_v<Op, op::max_t> ||
                                     std::is_same_v<Op, op::prod_t>;

/// The td_scalar_type of T: 32- and 64-bit signed integers, float and double.
template <class T>
constexpr td_scalar_type scalar_type_of() {
  if constexpr (std::is_same_v<T, float>) {
    return TD_SCALAR_FLOAT;
  } else if constexpr (std::is_same_v<T, double>) {
    return TD_SCALAR_DOUBLE;
  } else {
    static_assert(std::is_integral_v<T> && std::is_signed_v<T> &&
                      (sizeof(T) == 4 || sizeof(T) == 8),
                  "built-in reductions take int32, int64, float or double values; use the "
                  "overload with an identity and a join for other types");
    return sizeof(T) == 4 ? TD_SCALAR_INT32 : TD_SCALAR_INT64;
  }
}

template <class T>
inline constexpr bool is_reducible_value = std::is_trivially_copyable_v<T> &&
                                           std::is_default_constructible_v<T>;

/// The first exception thrown by any thread of a dispatch, rethrown on the caller's thread.
class first_exception {
public:
  /// Keeps the exception being handled if it is the first; call from a catch block.
  void capture() noexcept {
    bool expected = false;
    if (thrown_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      error_ = std::current_exception();
    }
  }
  /// True once a thread threw: the others stop taking new ranges.
  bool thrown() const noexcept { return thrown_.load(std::memory_order_relaxed); }
  /// Rethrows the kept exception; call after the dispatch returned (which orders the write).
  void rethrow_if_any() const {
    if (error_) std::rethrow_exception(error_);
  }

private:
  std::atomic<bool> thrown_{false};
  std::exception_ptr error_;
};

/// Runs a C call that dispatches `context`'s bodies: a failed status throws taskdag::error, then
/// an exception from a body is rethrown.
inline void finish_dispatch(td_status status, const first_exception& error) {
  check(status);
  error.rethrow_if_any();
}

template <class F>
struct for_context {
  F* body;
  first_exception error;
};

template <class F>
void for_range(std::int64_t begin, std::int64_t end, void* user) {
  auto* c = static_cast<for_context<F>*>(user);
  if (c->error.thrown()) return;
  try {
    for (std::int64_t i = begin; i < end; ++i) (*c->body)(i);
  } catch (...) {
    c->error.capture();
  }
}

template <class F>
void for_ranges(std::int64_t begin, std::int64_t end, void* user) {
  auto* c = static_cast<for_context<F>*>(user);
  if (c->error.thrown()) return;
  try {
    (*c->body)(begin, end);
  } catch (...) {
    c->error.capture();
  }
}

template <class T, class F>
void reduce_range(std::int64_t begin, std::int64_t end, void* value, void* user) {
  auto* c = static_cast<for_context<F>*>(user);
  if (c->error.thrown()) return;
  // A local accumulator lets the compiler keep it in a register across the loop.
  T acc;
  std::memcpy(&acc, value, sizeof(T));
  try {
    for (std::int64_t i = begin; i < end; ++i) (*c->body)(i, acc);
  } catch (...) {
    c->error.capture();
  }
  std::memcpy(value, &acc, sizeof(T));
}

template <class T, class F>
void scan_range(std::int64_t begin, std::int64_t end, void* update, int final_pass, void* user) {
  auto* c = static_cast<for_context<F>*>(user);
  if (c->error.thrown()) return;
  T acc;
  std::memcpy(&acc, update, sizeof(T));
  const bool is_final = final_pass != 0;
  try {
    for (std::int64_t i = begin; i < end; ++i) (*c->body)(i, acc, is_final);
  } catch (...) {
    c->error.capture();
  }
  std::memcpy(update, &acc, sizeof(T));
}

/// a ⊕ b for a built-in operator, as the library computes it (for the scan helpers).
template <class T>
T apply(op::sum_t, T a, T b) {
  return a + b;
}
template <class T>
T apply(op::prod_t, T a, T b) {
  return a * b;
}
template <class T>
T apply(op::min_t, T a, T b) {
  return b < a ? b : a;
}
template <class T>
T apply(op::max_t, T a, T b) {
  return b > a ? b : a;
}

/// A custom reduction's identity and join, behind a td_reducer.
template <class T, class Join>
struct custom_reducer {
  T identity;
  Join* join;
  first_exception* error;

  static void init(void* value, void* user) {
    std::memcpy(value, &static_cast<custom_reducer*>(user)->identity, sizeof(T));
  }
  static void join_values(void* dst, const void* src, void* user) {
    auto* r = static_cast<custom_reducer*>(user);
    T d, s;
    std::memcpy(&d, dst, sizeof(T));
    std::memcpy(&s, src, sizeof(T));
    try {
      (*r->join)(d, static_cast<const T&>(s));
    } catch (...) {
      r->error->capture();
    }
    std::memcpy(dst, &d, sizeof(T));
  }
  td_reducer c_reducer() {
    td_reducer reducer = TD_REDUCER_INIT;
    reducer.value_size = sizeof(T);
    reducer.init = &custom_reducer::init;
    reducer.join = &custom_reducer::join_values;
    reducer.user = this;
    return reducer;
  }
};

}  // namespace detail

/// An execution space instance (td_space): the Serial space, the root instance of the Threads
/// space (the thread pool td_initialize made), a sub-instance from run_instances, or a mask of
/// one of them. Only the instance's control thread may dispatch to it (any thread for Serial).
///
/// The object owns one reference and releases it when destroyed; it is move-only, share() makes
/// another owner of the same instance. A moved-from object is empty: its calls throw
/// TD_ERROR_NULL_ARGUMENT.
class space {
public:
  /// The Serial space: dispatches run on the calling thread. Throws taskdag::error
  /// (TD_ERROR_NOT_INITIALIZED before td_initialize).
  static space serial() {
    td_space* s = nullptr;
    check(td_space_serial(&s));
    return space(s);
  }

  /// The root instance of the Threads space; its control thread is the one that initialized
  /// the runtime. Throws taskdag::error.
  static space threads() {
    td_space* s = nullptr;
    check(td_space_threads(&s));
    return space(s);
  }

  /// Takes over one reference the caller owns; `s` may be NULL for an empty object.
  static space adopt(td_space* s) noexcept { return space(s); }

  /// A new owner of a handle the caller only borrows (e.g. run_instances' C callback).
  static space retain(td_space* s) {
    check(td_space_retain(s));
    return space(s);
  }

  space(space&& other) noexcept : space_(std::exchange(other.space_, nullptr)) {}
  space& operator=(space&& other) noexcept {
    if (this != &other) {
      td_space_release(space_);
      space_ = std::exchange(other.space_, nullptr);
    }
    return *this;
  }
  space(const space&) = delete;
  space& operator=(const space&) = delete;
  ~space() { td_space_release(space_); }

  /// Another owner of the same instance.
  space share() const { return retain(space_); }

  /// TD_EXEC_SERIAL or TD_EXEC_THREADS.
  td_exec_kind kind() const {
    td_exec_kind k = TD_EXEC_SERIAL;
    check(td_space_kind(space_, &k));
    return k;
  }

  /// Threads a dispatch on this space runs on (003 concurrency).
  std::size_t concurrency() const {
    std::size_t n = 0;
    check(td_space_concurrency(space_, &n));
    return n;
  }

  /// Threads at a depth of the hierarchy: 0 the instance, 1 the hardware threads of a core.
  std::size_t thread_pool_size(int depth = 0) const {
    std::size_t n = 0;
    check(td_space_thread_pool_size(space_, depth, &n));
    return n;
  }

  /// The same instance restricted to its first ⌈fraction × concurrency()⌉ threads (003 masks).
  /// Throws taskdag::error (TD_ERROR_INVALID_ARGUMENT) for a fraction outside (0, 1].
  space mask(double fraction) const {
    td_space* s = nullptr;
    check(td_space_mask(space_, fraction, &s));
    return space(s);
  }

  /// Waits for work dispatched to this space (CPU dispatches are synchronous: returns at once).
  void fence() const { check(td_space_fence(space_)); }

  /// Partitions this instance into disjoint sub-instances of `thread_counts[i]` threads and runs
  /// `control(instance, i)` for each on the sub-instance's control thread (the caller runs
  /// index 0), concurrently; returns when all have returned (003 run_instances). `control` gets
  /// a `space&` it may keep (share()), although the instance cannot dispatch once its control
  /// function returned. Throws taskdag::error when the requests cannot be satisfied (nothing
  /// runs then), and rethrows the first exception a control function threw.
  template <class Control>
  void run_instances(const std::vector<std::size_t>& thread_counts, Control&& control) const {
    std::vector<td_instance_request> requests;
    requests.reserve(thread_counts.size());
    for (std::size_t n : thread_counts) {
      td_instance_request r = TD_INSTANCE_REQUEST_INIT;
      r.num_threads = n;
      requests.push_back(r);
    }
    run_instances(requests.data(), requests.size(), std::forward<Control>(control));
  }

  /// As above with `count` full requests (NUMA placement); start each from
  /// TD_INSTANCE_REQUEST_INIT.
  template <class Control>
  void run_instances(const td_instance_request* requests, std::size_t count,
                     Control&& control) const {
    using C = std::remove_reference_t<Control>;
    struct context {
      C* control;
      detail::first_exception error;
    } ctx{&control, {}};
    const td_status status = td_space_run_instances(
        space_, requests, count,
        [](td_space* instance, std::size_t index, void* user) {
          auto* c = static_cast<context*>(user);
          try {
            space sub = space::retain(instance);
            (*c->control)(sub, index);
          } catch (...) {
            c->error.capture();
          }
        },
        &ctx);
    detail::finish_dispatch(status, ctx.error);
  }

  /// The C handle, still owned by this object.
  td_space* get() const noexcept { return space_; }
  explicit operator bool() const noexcept { return space_ != nullptr; }
  /// Gives up ownership: the caller must release the returned handle.
  td_space* detach() noexcept { return std::exchange(space_, nullptr); }

private:
  explicit space(td_space* s) noexcept : space_(s) {}
  td_space* space_ = nullptr;
};

/// Indices [begin, end) with an optional chunk size and mask (td_range_policy).
class range_policy {
public:
  range_policy(index_t begin, index_t end) noexcept {
    policy_.begin = begin;
    policy_.end = end;
  }
  /// Indices per chunk; 0 (default) = one contiguous block per thread. With chunks,
  /// parallel_for balances load dynamically; reductions stay deterministic but a custom join
  /// must then also be commutative.
  range_policy& chunk_size(std::uint64_t chunk) noexcept {
    policy_.chunk_size = chunk;
    return *this;
  }
  /// Fraction (0, 1] of the space's threads to use, rounded up.
  range_policy& mask(double fraction) noexcept {
    policy_.mask = fraction;
    return *this;
  }
  index_t begin() const noexcept { return policy_.begin; }
  index_t end() const noexcept { return policy_.end; }
  const td_range_policy& c_policy() const noexcept { return policy_; }

private:
  td_range_policy policy_ = TD_RANGE_POLICY_INIT;
};

/// Calls `body(i)` for every i of the policy's range on the space's threads; returns when all
/// calls have returned. Throws taskdag::error (end < begin, wrong thread, nested dispatch, ...)
/// and rethrows the first exception `body` threw.
template <class F>
void parallel_for(const space& s, const range_policy& policy, F&& body) {
  using B = std::remove_reference_t<F>;
  detail::for_context<B> ctx{&body, {}};
  detail::finish_dispatch(td_parallel_for(s.get(), &policy.c_policy(), &detail::for_range<B>, &ctx),
                          ctx.error);
}

/// parallel_for over [begin, end).
template <class F>
void parallel_for(const space& s, index_t begin, index_t end, F&& body) {
  parallel_for(s, range_policy(begin, end), std::forward<F>(body));
}

/// Calls `body(b, e)` on disjoint ranges [b, e) covering the policy's range (a thread's block,
/// or a chunk): for loops that want the range itself.
template <class F>
void parallel_for_ranges(const space& s, const range_policy& policy, F&& body) {
  using B = std::remove_reference_t<F>;
  detail::for_context<B> ctx{&body, {}};
  detail::finish_dispatch(
      td_parallel_for(s.get(), &policy.c_policy(), &detail::for_ranges<B>, &ctx), ctx.error);
}

/// Reduces with a built-in operator (op::sum by default; op::min, op::max, op::prod): each
/// thread's accumulator starts at the operator's identity, `body(i, acc)` folds index i into
/// it, and the accumulators are joined in thread order into `result` (deterministic for a given
/// thread count). T is a 32- or 64-bit signed integer, float or double. `result` is written only
/// on success.
template <class T, class F, class Op = op::sum_t>
void parallel_reduce(const space& s, const range_policy& policy, F&& body, T& result, Op = {}) {
  static_assert(detail::is_reduce_op<Op>, "the operator must be op::sum, op::min, op::max or op::prod");
  using B = std::remove_reference_t<F>;
  detail::for_context<B> ctx{&body, {}};
  T out{};
  detail::finish_dispatch(td_parallel_reduce(s.get(), &policy.c_policy(),
                                             &detail::reduce_range<T, B>, &ctx, Op::value,
                                             detail::scalar_type_of<T>(), &out),
                          ctx.error);
  result = out;
}

template <class T, class F, class Op = op::sum_t>
void parallel_reduce(const space& s, index_t begin, index_t end, F&& body, T& result, Op o = {}) {
  parallel_reduce(s, range_policy(begin, end), std::forward<F>(body), result, o);
}

/// Reduces with a custom reduction: each thread's accumulator starts as a copy of `identity`,
/// `body(i, acc)` folds index i into it, and `join(T& dst, const T& src)` (dst = dst ⊕ src,
/// associative; also commutative when the policy has a chunk size) combines accumulators in
/// thread order. T must be trivially copyable; join runs on the space's threads.
template <class T, class F, class Join>
void parallel_reduce(const space& s, const range_policy& policy, F&& body, T& result,
                     const T& identity, Join&& join) {
  static_assert(detail::is_reducible_value<T>,
                "reduction values must be trivially copyable and default-constructible");
  using B = std::remove_reference_t<F>;
  using J = std::remove_reference_t<Join>;
  detail::for_context<B> ctx{&body, {}};
  detail::custom_reducer<T, J> reducer{identity, &join, &ctx.error};
  const td_reducer c_reducer = reducer.c_reducer();
  T out{};
  detail::finish_dispatch(td_parallel_reduce_custom(s.get(), &policy.c_policy(),
                                                    &detail::reduce_range<T, B>, &ctx,
                                                    &c_reducer, &out),
                          ctx.error);
  result = out;
}

template <class T, class F, class Join>
void parallel_reduce(const space& s, index_t begin, index_t end, F&& body, T& result,
                     const T& identity, Join&& join) {
  parallel_reduce(s, range_policy(begin, end), std::forward<F>(body), result, identity,
                  std::forward<Join>(join));
}

/// Prefix scan in two passes (004): `body(i, update, final)` adds index i's value to `update`;
/// on the final pass (final == true) `update` holds the join of every value before i's range
/// position, so the body writes an exclusive result before adding and an inclusive one after.
/// Returns the join of all values. T and the operator as for parallel_reduce; name T
/// explicitly: parallel_scan<double>(s, 0, n, body).
template <class T, class F, class Op = op::sum_t>
T parallel_scan(const space& s, const range_policy& policy, F&& body, Op = {}) {
  static_assert(detail::is_reduce_op<Op>, "the operator must be op::sum, op::min, op::max or op::prod");
  using B = std::remove_reference_t<F>;
  detail::for_context<B> ctx{&body, {}};
  T total{};
  detail::finish_dispatch(td_parallel_scan(s.get(), &policy.c_policy(), &detail::scan_range<T, B>,
                                           &ctx, Op::value, detail::scalar_type_of<T>(), &total),
                          ctx.error);
  return total;
}

template <class T, class F, class Op = op::sum_t>
T parallel_scan(const space& s, index_t begin, index_t end, F&& body, Op o = {}) {
  return parallel_scan<T>(s, range_policy(begin, end), std::forward<F>(body), o);
}

/// Prefix scan with a custom reduction (identity and an associative join, as parallel_reduce).
template <class T, class F, class Join>
T parallel_scan(const space& s, const range_policy& policy, F&& body, const T& identity,
                Join&& join) {
  static_assert(detail::is_reducible_value<T>,
                "scan values must be trivially copyable and default-constructible");
  using B = std::remove_reference_t<F>;
  using J = std::remove_reference_t<Join>;
  detail::for_context<B> ctx{&body, {}};
  detail::custom_reducer<T, J> reducer{identity, &join, &ctx.error};
  const td_reducer c_reducer = reducer.c_reducer();
  T total{};
  detail::finish_dispatch(td_parallel_scan_custom(s.get(), &policy.c_policy(),
                                                  &detail::scan_range<T, B>, &ctx, &c_reducer,
                                                  &total),
                          ctx.error);
  return total;
}

template <class T, class F, class Join>
T parallel_scan(const space& s, index_t begin, index_t end, F&& body, const T& identity,
                Join&& join) {
  return parallel_scan<T>(s, range_policy(begin, end), std::forward<F>(body), identity,
                          std::forward<Join>(join));
}

/// Inclusive scan of `value(i)` (returning T) over [begin, end): calls `store(i, v)` with
/// v = value(begin) ⊕ … ⊕ value(i). Returns the total.
template <class T, class Value, class Store, class Op = op::sum_t>
T inclusive_scan(const space& s, index_t begin, index_t end, Value&& value, Store&& store,
                 Op o = {}) {
  return parallel_scan<T>(
      s, begin, end,
      [&](index_t i, T& update, bool final_pass) {
        update = detail::apply(o, update, static_cast<T>(value(i)));
        if (final_pass) store(i, static_cast<const T&>(update));
      },
      o);
}

/// Exclusive scan: calls `store(i, v)` with v = value(begin) ⊕ … ⊕ value(i - 1) (the
/// operator's identity for i = begin). Returns the total.
template <class T, class Value, class Store, class Op = op::sum_t>
T exclusive_scan(const space& s, index_t begin, index_t end, Value&& value, Store&& store,
                 Op o = {}) {
  return parallel_scan<T>(
      s, begin, end,
      [&](index_t i, T& update, bool final_pass) {
        if (final_pass) store(i, static_cast<const T&>(update));
        update = detail::apply(o, update, static_cast<T>(value(i)));
      },
      o);
}

/// A league of teams (td_team_policy): league_size entries, each run by a team of team_size
/// threads (0 = the hardware threads of a core) with scratch_bytes of team-shared memory.
class team_policy {
public:
  team_policy(index_t league_size, index_t team_size, std::size_t scratch_bytes = 0) noexcept {
    policy_.league_size = league_size;
    policy_.team_size = team_size;
    policy_.scratch_bytes = scratch_bytes;
  }
  /// Fraction (0, 1] of the space's threads to use, rounded up.
  team_policy& mask(double fraction) noexcept {
    policy_.mask = fraction;
    return *this;
  }
  const td_team_policy& c_policy() const noexcept { return policy_; }

private:
  td_team_policy policy_ = TD_TEAM_POLICY_INIT;
};

/// One member of a thread team, as a team body receives it (wraps a borrowed td_team*; valid
/// during the body, on its thread). Collectives must be called by every member of the team, in
/// the same order; their failures (a bad root, a value over 256 bytes) throw taskdag::error on
/// every member alike.
class team_member {
public:
  explicit team_member(const td_team* team) noexcept : team_(team) {}

  index_t rank() const noexcept { return td_team_rank(team_); }
  index_t size() const noexcept { return td_team_size(team_); }
  index_t league_rank() const noexcept { return td_team_league_rank(team_); }
  index_t league_size() const noexcept { return td_team_league_size(team_); }

  /// Waits for every member; writes before it are visible to all members after it.
  void barrier() const { check(td_team_barrier(team_)); }

  /// Every member passes its value and gets the join of all (rank order).
  template <class T, class Op = op::sum_t>
  T reduce(T value, Op = {}) const {
    static_assert(detail::is_reduce_op<Op>, "the operator must be op::sum, op::min, op::max or op::prod");
    check(td_team_reduce(team_, Op::value, detail::scalar_type_of<T>(), &value));
    return value;
  }

  /// Team reduction with an identity and a join (dst = dst ⊕ src); T at most 256 bytes.
  template <class T, class Join>
  T reduce(T value, const T& identity, Join&& join) const {
    static_assert(detail::is_reducible_value<T>, "team values must be trivially copyable");
    using J = std::remove_reference_t<Join>;
    detail::first_exception error;
    detail::custom_reducer<T, J> reducer{identity, &join, &error};
    const td_reducer c_reducer = reducer.c_reducer();
    detail::finish_dispatch(td_team_reduce_custom(team_, &c_reducer, &value), error);
    return value;
  }

  /// Prefix over ranks: member r gets v0 ⊕ … ⊕ vr (inclusive) or v0 ⊕ … ⊕ v(r-1) (exclusive;
  /// the identity on rank 0).
  template <class T, class Op = op::sum_t,
            class = std::enable_if_t<detail::is_reduce_op<Op>>>
  T scan(T value, bool inclusive, Op = {}) const {
    check(td_team_scan(team_, Op::value, detail::scalar_type_of<T>(), inclusive ? 1 : 0, &value,
                       nullptr));
    return value;
  }

  /// As above, and `total` receives the join of all members' values.
  template <class T, class Op = op::sum_t>
  T scan(T value, bool inclusive, T& total, Op = {}) const {
    static_assert(detail::is_reduce_op<Op>, "the operator must be op::sum, op::min, op::max or op::prod");
    check(td_team_scan(team_, Op::value, detail::scalar_type_of<T>(), inclusive ? 1 : 0, &value,
                       &total));
    return value;
  }

  /// Member `root`'s value, on every member (T trivially copyable, at most 256 bytes).
  template <class T>
  T broadcast(T value, index_t root = 0) const {
    static_assert(std::is_trivially_copyable_v<T>, "broadcast values must be trivially copyable");
    check(td_team_broadcast(team_, &value, sizeof(T), root));
    return value;
  }

  /// The team's scratch memory as an array of T (8-byte aligned; nullptr without scratch).
  template <class T = unsigned char>
  T* scratch() const noexcept {
    return static_cast<T*>(td_team_scratch(team_, nullptr));
  }
  /// Bytes of scratch memory (the policy's scratch_bytes).
  std::size_t scratch_bytes() const noexcept {
    std::size_t bytes = 0;
    td_team_scratch(team_, &bytes);
    return bytes;
  }

  /// Team-level loop: this member calls `body(i)` on its own part of [begin, end) (parts in
  /// rank order). No barrier is implied. Every member must call it.
  template <class F>
  void parallel_for(index_t begin, index_t end, F&& body) const {
    using B = std::remove_reference_t<F>;
    detail::for_context<B> ctx{&body, {}};
    detail::finish_dispatch(
        td_team_parallel_for(team_, begin, end, &detail::for_range<B>, &ctx), ctx.error);
  }

  /// Team-level reduction with a built-in operator: every member gets the join over [begin,
  /// end) of `body(i, acc)`.
  template <class T, class F, class Op = op::sum_t>
  T parallel_reduce(index_t begin, index_t end, F&& body, Op = {}) const {
    static_assert(detail::is_reduce_op<Op>, "the operator must be op::sum, op::min, op::max or op::prod");
    using B = std::remove_reference_t<F>;
    detail::for_context<B> ctx{&body, {}};
    T result{};
    detail::finish_dispatch(td_team_parallel_reduce(team_, begin, end,
                                                    &detail::reduce_range<T, B>, &ctx, Op::value,
                                                    detail::scalar_type_of<T>(), &result),
                            ctx.error);
    return result;
  }

  /// Team-level reduction with an identity and a join (T at most 256 bytes).
  template <class T, class F, class Join>
  T parallel_reduce(index_t begin, index_t end, F&& body, const T& identity, Join&& join) const {
    T mine = identity;
    parallel_for(begin, end, [&](index_t i) { body(i, mine); });
    return reduce(mine, identity, std::forward<Join>(join));
  }

  /// The C handle (borrowed).
  const td_team* get() const noexcept { return team_; }

private:
  const td_team* team_;
};

/// Runs `body(member)` on every member of a team for each league entry (004 team policy);
/// teams are consecutive threads of the space. Throws taskdag::error (team larger than the
/// space, negative sizes, ...) and rethrows the first exception a member threw.
template <class F>
void parallel_team(const space& s, const team_policy& policy, F&& body) {
  using B = std::remove_reference_t<F>;
  detail::for_context<B> ctx{&body, {}};
  detail::finish_dispatch(
      td_parallel_team(
          s.get(), &policy.c_policy(),
          [](const td_team* team, void* user) {
            auto* c = static_cast<detail::for_context<B>*>(user);
            try {
              const team_member member(team);
              (*c->body)(member);
            } catch (...) {
              c->error.capture();
            }
          },
          &ctx),
      ctx.error);
}

template <class F>
void parallel_team(const space& s, index_t league_size, index_t team_size,
                   std::size_t scratch_bytes, F&& body) {
  parallel_team(s, team_policy(league_size, team_size, scratch_bytes), std::forward<F>(body));
}

/// The calling thread's rank in its taskdag thread pool, or -1 outside every pool.
inline index_t thread_pool_rank() noexcept { return td_thread_pool_rank(); }
/// The hardware thread (OS CPU id) the calling thread runs on.
inline index_t hardware_thread_id() noexcept { return td_hardware_thread_id(); }
/// Hardware threads available to the process.
inline std::size_t max_hardware_threads() noexcept { return td_max_hardware_threads(); }
/// True inside a dispatched body.
inline bool in_parallel() noexcept { return td_in_parallel() != 0; }

}  // namespace taskdag

// =============================================================================================
// Task DAG (td_scheduler, td_future, td_task_ctx; 000 §3.2): taskdag::scheduler,
// taskdag::future<T>, taskdag::task_context, and C++ callables (lambdas, functors) as tasks.
//
//   taskdag::runtime rt;
//   taskdag::memory_pool pool(64 << 20);
//   taskdag::scheduler sched(pool);                         // on all threads of the runtime
//   auto f = sched.spawn(taskdag::task_single(), [](taskdag::task_context&) -> long { return 42; });
//   sched.wait();
//   long x = f.get();
//
// A callable task is copied (or moved) into the task's memory in the scheduler's pool and
// destroyed when the task completes (002 §2.2.5), so futures it holds are released then. It is
// called as `R operator()(taskdag::task_context&)`; a non-void R is the task's result (trivially
// copyable; the value of the last run counts when the task respawns). Exceptions cannot cross
// the task boundary: a task that throws terminates the program.
// =============================================================================================
#include <array>
#include <cstring>
#include <initializer_list>
#include <new>
#include <thread>
#include <vector>

namespace taskdag {

/// Task priorities (000 §3.2.2 TaskPriority): ready High tasks run before Regular, Regular
/// before Low.
enum class priority : td_priority {
  high = TD_PRIORITY_HIGH,
  regular = TD_PRIORITY_REGULAR,
  low = TD_PRIORITY_LOW,
};

/// A reference to a task or when_all of any result type (the `void` future of Kokkos):
/// completion, dependences, when_all. Copying retains (shared ownership, 000 §3.2.1), destruction
/// releases. A default-constructed future is the null future.
///
/// Thread safety: copies and destruction may run on any thread while no wait runs on the
/// scheduler, and in its tasks while one does; a destructor on another thread during a wait
/// waits for the wait to end (the C API reports TD_ERROR_BUSY there).
class future_base {
public:
  future_base() noexcept = default;

  future_base(const future_base& other) : f_(other.f_) {
    if (f_ != nullptr) check(td_future_retain(f_));
  }

  future_base(future_base&& other) noexcept : f_(std::exchange(other.f_, nullptr)) {}

  future_base& operator=(const future_base& other) {
    if (this != &other) {
      future_base copy(other);
      std::swap(f_, copy.f_);
    }
    return *this;
  }

  future_base& operator=(future_base&& other) noexcept {
    if (this != &other) {
      release();
      f_ = std::exchange(other.f_, nullptr);
    }
    return *this;
  }

  ~future_base() { release(); }

  /// True for the null future (000 §3.2.1 is_null).
  bool is_null() const noexcept { return f_ == nullptr; }

  /// True when the task (or when_all) completed. Throws taskdag::error for the null future.
  bool is_ready() const {
    int ready = 0;
    check(td_future_is_ready(f_, &ready));
    return ready != 0;
  }

  /// The C handle, still owned by this object (for C calls; do not release it).
  td_future* get_handle() const noexcept { return f_; }

  /// Gives up ownership: returns the C handle, whose reference the caller must release with
  /// td_future_release, and leaves this object null.
  td_future* detach() noexcept { return std::exchange(f_, nullptr); }

protected:
  explicit future_base(td_future* f) noexcept : f_(f) {}

  void release() noexcept {
    if (f_ == nullptr) return;
    // Another thread may release only after the scheduler's wait returns.
    while (td_future_release(f_) == TD_ERROR_BUSY) std::this_thread::yield();
    f_ = nullptr;
  }

  td_future* f_ = nullptr;
};

/// A future whose task has a result of type T (void: no result).
template <class T = void>
class future : public future_base {
  static_assert(std::is_void<T>::value || std::is_trivially_copyable<T>::value,
                "task results are copied as bytes: use a trivially copyable type");

public:
  future() noexcept = default;

  /// Takes over one reference the caller owns (from td_host_spawn, td_task_spawn, td_when_all or
  /// td_future_retain). `f` may be NULL.
  static future adopt(td_future* f) noexcept { return future(f); }

  /// The result of the completed task (000 §3.2.1 get). Throws taskdag::error:
  /// TD_ERROR_NOT_READY before completion, TD_ERROR_NULL_ARGUMENT for the null future.
  T get() const {
    T value;
    check(td_future_get(f_, &value, sizeof value));
    return value;
  }

private:
  explicit future(td_future* f) noexcept : future_base(f) {}
};

template <>
class future<void> : public future_base {
public:
  future() noexcept = default;

  /// Any future converts to a void future of the same task (a new reference).
  template <class U>
  future(const future<U>& other) : future_base(other) {}  // NOLINT: implicit like Kokkos

  static future adopt(td_future* f) noexcept { return future(f); }

  /// Throws taskdag::error (TD_ERROR_NOT_READY) unless the task or when_all is complete.
  void get() const {
    if (!is_ready()) throw error(TD_ERROR_NOT_READY, "taskdag::future<void>::get: not complete");
  }

private:
  explicit future(td_future* f) noexcept : future_base(f) {}
};

/// How a task is scheduled (000 §3.2.2 TaskSingle / TaskTeam): priority, single thread or team,
/// and optionally after a future (borrowed: keep the future alive until the spawn returns).
class task_policy {
public:
  explicit task_policy(priority p = priority::regular, bool team = false) noexcept
      : priority_(p), team_(team) {}

  /// The task runs after `dependence` completes.
  task_policy& after(const future_base& dependence) noexcept {
    dependence_ = dependence.get_handle();
    return *this;
  }

  td_task_policy c_policy(td_scheduler* scheduler) const noexcept {
    td_task_policy p = TD_TASK_POLICY_INIT;
    p.scheduler = scheduler;
    p.dependence = dependence_;
    p.priority = static_cast<td_priority>(priority_);
    p.team = team_ ? 1 : 0;
    return p;
  }

private:
  priority priority_;
  bool team_;
  td_future* dependence_ = nullptr;
};

/// A task on one thread (000 TaskSingle).
inline task_policy task_single(priority p = priority::regular) { return task_policy(p, false); }

/// A task called on every member of a thread team (000 TaskTeam, §2.3.2).
inline task_policy task_team(priority p = priority::regular) { return task_policy(p, true); }

class task_context;

namespace detail {

template <class F>
using task_result_t = std::invoke_result_t<F&, task_context&>;

// The trampoline the scheduler calls: runs the callable stored in the task's state and writes
// its result. noexcept: an exception cannot unwind through the scheduler.
template <class F>
void call_task(td_task_ctx* ctx, void* state) noexcept;

template <class F>
void destroy_task(void* state) noexcept {
  static_cast<F*>(state)->~F();
}

template <class F>
void move_into_task(void* blob, const void* source) noexcept {
  new (blob) F(std::move(*const_cast<F*>(static_cast<const F*>(source))));
}

// Spawns `f` from the host (ctx == nullptr) or from a task, returning its future or throwing.
template <class F>
future<task_result_t<std::decay_t<F>>> spawn(td_task_ctx* ctx, td_scheduler* scheduler,
                                             const task_policy& policy, F&& f) {
  using Fn = std::decay_t<F>;
  using R = task_result_t<Fn>;
  static_assert(alignof(Fn) <= TD_TASK_STATE_ALIGN,
                "a task's state is 16-byte aligned; over-aligned callables are not supported");
  Fn local(std::forward<F>(f));
  td_task_policy p = policy.c_policy(scheduler);
  td_task_closure c = TD_TASK_CLOSURE_INIT;
  c.function = &call_task<Fn>;
  c.state = &local;
  c.state_size = sizeof(Fn);
  c.result_size = std::is_void<R>::value ? 0 : sizeof(std::conditional_t<std::is_void<R>::value, char, R>);
  c.destroy = std::is_trivially_destructible<Fn>::value ? nullptr : &destroy_task<Fn>;
  c.init = &move_into_task<Fn>;
  td_future* handle = ctx == nullptr ? td_host_spawn(&p, &c) : td_task_spawn(ctx, &p, &c);
  if (handle == nullptr) throw error(td_last_error(), td_last_error_message());
  return future<R>::adopt(handle);
}

template <class... Futures>
future<void> when_all(td_scheduler* scheduler, const Futures&... futures) {
  std::array<td_future*, sizeof...(Futures)> handles{{futures.get_handle()...}};
  td_future* all = td_when_all(scheduler, handles.data(), static_cast<int>(handles.size()));
  if (all == nullptr) throw error(td_last_error(), td_last_error_message());
  return future<void>::adopt(all);
}

template <class T>
future<void> when_all(td_scheduler* scheduler, const std::vector<future<T>>& futures) {
  std::vector<td_future*> handles;
  handles.reserve(futures.size());
  for (const auto& f : futures) handles.push_back(f.get_handle());
  td_future* all = td_when_all(scheduler, handles.data(), static_cast<int>(handles.size()));
  if (all == nullptr) throw error(td_last_error(), td_last_error_message());
  return future<void>::adopt(all);
}

// td_task_respawn_when_all or td_task_respawn_when_all_private.
using respawn_when_all_fn = td_status (*)(td_task_ctx*, td_future* const*, int, td_priority);

inline void respawn_when_all(respawn_when_all_fn fn, td_task_ctx* ctx, td_future* const* handles,
                             std::size_t count, priority p) {
  check(fn(ctx, handles, static_cast<int>(count), static_cast<td_priority>(p)));
}

template <class... Futures>
void respawn_when_all(respawn_when_all_fn fn, td_task_ctx* ctx, priority p,
                      const Futures&... futures) {
  static_assert((std::is_base_of<future_base, Futures>::value && ...),
                "respawn_when_all takes taskdag futures after the priority");
  std::array<td_future*, sizeof...(Futures)> handles{{futures.get_handle()...}};
  respawn_when_all(fn, ctx, handles.data(), handles.size(), p);
}

template <class T>
void respawn_when_all(respawn_when_all_fn fn, td_task_ctx* ctx,
                      const std::vector<future<T>>& futures, priority p) {
  std::vector<td_future*> handles;
  handles.reserve(futures.size());
  for (const auto& f : futures) handles.push_back(f.get_handle());
  respawn_when_all(fn, ctx, handles.data(), handles.size(), p);
}

}  // namespace detail

/// What a running task sees (000 §3.2.3 member_type): its team, spawn, respawn and when_all.
/// Valid only during the call of the task, on its thread. Calls throw taskdag::error.
class task_context {
public:
  explicit task_context(td_task_ctx* ctx) noexcept : ctx_(ctx) {}

  /// Spawns a task from this task (000 task_spawn); see taskdag::scheduler::spawn.
  template <class F>
  future<detail::task_result_t<std::decay_t<F>>> spawn(const task_policy& policy, F&& f) {
    return detail::spawn(ctx_, nullptr, policy, std::forward<F>(f));
  }

  /// Runs this task again after `dependence` completes, at `p` (000 §2.2.1 respawn); at most
  /// once per run. The callable keeps its state between runs.
  void respawn(const future_base& dependence, priority p = priority::regular) {
    check(td_task_respawn(ctx_, dependence.get_handle(), static_cast<td_priority>(p)));
  }

  /// Runs this task again as soon as possible, at `p`.
  void respawn(priority p = priority::regular) {
    check(td_task_respawn(ctx_, nullptr, static_cast<td_priority>(p)));
  }

  /// Runs this task again once all `futures` have completed, at `p`: respawn(when_all(...)) of
  /// 000 Fig. 3.4 in one call that makes no future (td_task_respawn_when_all). Null futures are
  /// skipped; none, or none incomplete, respawns as soon as possible. The futures are borrowed
  /// for the call only. At most one respawn (of either kind) per run. With several workers the
  /// call may first run the futures' tasks that this worker would run next, nested (see
  /// td_task_respawn_when_all): they must not wait for the code after it.
  template <class... Futures>
  void respawn_when_all(priority p, const Futures&... futures) {
    detail::respawn_when_all(td_task_respawn_when_all, ctx_, p, futures...);
  }

  template <class T>
  void respawn_when_all(const std::vector<future<T>>& futures, priority p = priority::regular) {
    detail::respawn_when_all(td_task_respawn_when_all, ctx_, futures, p);
  }

  /// respawn_when_all with a promise: until the call returns, no other task uses these futures
  /// through this task's references (copies other tasks hold are references of their own, and
  /// may be used). With several workers the tasks the call runs ahead then complete without
  /// an atomic read-modify-write when this task holds their only reference, as it does for
  /// the children it just spawned (td_task_respawn_when_all_private).
  template <class... Futures>
  void respawn_when_all_private(priority p, const Futures&... futures) {
    detail::respawn_when_all(td_task_respawn_when_all_private, ctx_, p, futures...);
  }

  template <class T>
  void respawn_when_all_private(const std::vector<future<T>>& futures,
                                priority p = priority::regular) {
    detail::respawn_when_all(td_task_respawn_when_all_private, ctx_, futures, p);
  }

  /// A future that completes when all `futures` have (000 when_all).
  template <class... Futures>
  future<void> when_all(const Futures&... futures) {
    return detail::when_all(scheduler_handle(), futures...);
  }

  template <class T>
  future<void> when_all(const std::vector<future<T>>& futures) {
    return detail::when_all(scheduler_handle(), futures);
  }

  /// This thread's member of the task's team (a team of one for a single task).
  td_team* team() const { return checked(td_task_team(ctx_)); }
  std::int64_t team_rank() const { return td_team_rank(team()); }
  std::int64_t team_size() const { return td_team_size(team()); }
  void team_barrier() const { check(td_team_barrier(team())); }

  /// The scheduler running the task (borrowed C handle).
  td_scheduler* scheduler_handle() const { return checked(td_task_scheduler(ctx_)); }

  /// The C context.
  td_task_ctx* get() const noexcept { return ctx_; }

private:
  template <class P>
  static P* checked(P* p) {
    if (p == nullptr) throw error(td_last_error(), td_last_error_message());
    return p;
  }

  td_task_ctx* ctx_;
};

namespace detail {

template <class F>
void call_task(td_task_ctx* ctx, void* state) noexcept {
  F& f = *static_cast<F*>(state);
  task_context context(ctx);
  using R = task_result_t<F>;
  if constexpr (std::is_void<R>::value) {
    f(context);
  } else {
    R value = f(context);
    std::memcpy(td_task_result(ctx), &value, sizeof value);
  }
}

}  // namespace detail

/// A task scheduler (td_scheduler; 000 §3.2.2): spawns tasks into a memory pool and runs them
/// on an execution space instance. Move-only owner of one reference; share() makes another.
class scheduler {
public:
  /// A scheduler on `space` (NULL: the root Threads instance of the runtime), allocating tasks
  /// from `pool`; `team_size` 0 = from the topology. Throws taskdag::error.
  explicit scheduler(const memory_pool& pool, td_space* space = nullptr, int team_size = 0,
                     std::size_t team_scratch_bytes = 0) {
    td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
    args.space = space;
    args.pool = pool.get();
    args.team_size = team_size;
    args.team_scratch_bytes = team_scratch_bytes;
    check(td_scheduler_create(&args, &s_));
  }

  /// Takes over one reference the caller owns.
  static scheduler adopt(td_scheduler* s) noexcept { return scheduler(s); }

  scheduler(scheduler&& other) noexcept : s_(std::exchange(other.s_, nullptr)) {}
  scheduler& operator=(scheduler&& other) noexcept {
    if (this != &other) {
      td_scheduler_release(s_);
      s_ = std::exchange(other.s_, nullptr);
    }
    return *this;
  }
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;
  ~scheduler() { td_scheduler_release(s_); }

  /// Another owner of the same scheduler (td_scheduler_retain).
  scheduler share() const {
    check(td_scheduler_retain(s_));
    return scheduler(s_);
  }

  /// Spawns `f` from host code (000 host_spawn) with `policy`; it runs at the next wait.
  /// Returns its future. Throws taskdag::error: TD_ERROR_POOL_EXHAUSTED (nothing else
  /// changes), TD_ERROR_INVALID_ARGUMENT, TD_ERROR_BUSY (a wait runs), ...
  template <class F>
  future<detail::task_result_t<std::decay_t<F>>> spawn(const task_policy& policy, F&& f) {
    return detail::spawn(nullptr, s_, policy, std::forward<F>(f));
  }

  /// A future that completes when all `futures` have (000 when_all).
  template <class... Futures>
  future<void> when_all(const Futures&... futures) {
    return detail::when_all(s_, futures...);
  }

  template <class T>
  future<void> when_all(const std::vector<future<T>>& futures) {
    return detail::when_all(s_, futures);
  }

  /// Runs every spawned task to completion (000 wait). Throws taskdag::error:
  /// TD_ERROR_DEADLOCK (tasks wait on futures that can never complete), TD_ERROR_WRONG_THREAD
  /// (inside a task, or not the space's control thread), TD_ERROR_BUSY.
  void wait() { check(td_wait(s_)); }

  /// Statistics (td_scheduler_statistics); not while a wait runs.
  td_scheduler_stats statistics() const {
    td_scheduler_stats stats = TD_SCHEDULER_STATS_INIT;
    check(td_scheduler_statistics(s_, &stats));
    return stats;
  }

  std::size_t concurrency() const {
    std::size_t n = 0;
    check(td_scheduler_concurrency(s_, &n));
    return n;
  }

  std::size_t team_size() const {
    std::size_t n = 0;
    check(td_scheduler_team_size(s_, &n));
    return n;
  }

  /// The C handle, still owned by this object.
  td_scheduler* get() const noexcept { return s_; }

private:
  explicit scheduler(td_scheduler* s) noexcept : s_(s) {}

  td_scheduler* s_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Work graph: the static work-DAG of 000 §2.4 and §3.3 (taskdag::crs, taskdag::work_graph)
//
//   taskdag::crs graph({0, 1, 2, 2}, {2, 2});        // items 0 and 1 before item 2
//   taskdag::work_graph plan(graph);                 // checks for cycles, plans once
//   td_space* space = nullptr;
//   taskdag::check(td_space_threads(&space));
//   plan.run(space, [&](std::int64_t i) { out[i] = f(i); });   // run as often as needed
//   td_space_release(space);
// ---------------------------------------------------------------------------------------------

/// A directed graph in compressed row storage (td_crs): row i lists, in `entries`, the items
/// that execute after item i. Immutable; copying the caller's arrays on construction.
///
/// The object owns one reference and releases it when destroyed; move-only, share() for another
/// owner. A moved-from object is empty: its calls throw TD_ERROR_NULL_ARGUMENT.
class crs {
public:
  /// Builds a graph of row_map.size() - 1 items from 0-based offsets and entries. Throws
  /// taskdag::error: TD_ERROR_INVALID_ARGUMENT naming the bad offset's row or the bad entry
  /// (position, row, value), TD_ERROR_NOT_INITIALIZED, ...
  crs(const std::vector<std::int64_t>& row_map, const std::vector<std::int64_t>& entries)
      : crs(create(row_map, entries)) {}

  /// The same from offsets and entries of other integer types (converted to int64_t).
  template <class Offset, class Index>
  crs(const std::vector<Offset>& row_map, const std::vector<Index>& entries)
      : crs(create(widen(row_map), widen(entries))) {}

  /// Builds from C arrays: `num_rows` + 1 offsets and `num_entries` entries (0-based).
  crs(const std::int64_t* row_map, std::int64_t num_rows, const std::int64_t* entries,
      std::int64_t num_entries) {
    check(td_crs_create(num_rows, row_map, num_entries, entries, &crs_));
  }

  /// Takes over one reference the caller owns; `graph` may be NULL for an empty object.
  static crs adopt(td_crs* graph) noexcept { return crs(graph); }

  crs(crs&& other) noexcept : crs_(std::exchange(other.crs_, nullptr)) {}

  crs& operator=(crs&& other) noexcept {
    if (this != &other) {
      td_crs_release(crs_);
      crs_ = std::exchange(other.crs_, nullptr);
    }
    return *this;
  }

  crs(const crs&) = delete;
  crs& operator=(const crs&) = delete;

  ~crs() { td_crs_release(crs_); }

  /// Another owner of the same graph (td_crs_retain).
  crs share() const {
    check(td_crs_retain(crs_));
    return crs(crs_);
  }

  /// The transpose (td_crs_transpose, 000 §3.3.1): turns "item j waits for these items" rows
  /// into the "these items run after item i" rows a work graph needs, and back.
  crs transpose() const {
    td_crs* out = nullptr;
    check(td_crs_transpose(crs_, &out));
    return crs(out);
  }

  /// N, the number of rows (work items).
  std::int64_t num_rows() const { return query(td_crs_num_rows); }

  /// NZ, the number of entries (dependences).
  std::int64_t num_entries() const { return query(td_crs_num_entries); }

  /// The N + 1 row offsets (0-based).
  std::vector<std::int64_t> row_map() const {
    std::vector<std::int64_t> out(static_cast<std::size_t>(num_rows() + 1));
    check(td_crs_export(crs_, out.data(), out.size(), nullptr, 0));
    return out;
  }

  /// The NZ entries (0-based items).
  std::vector<std::int64_t> entries() const {
    std::vector<std::int64_t> out(static_cast<std::size_t>(num_entries()));
    check(td_crs_export(crs_, nullptr, 0, out.data(), out.size()));
    return out;
  }

  /// The C handle, still owned by this object.
  td_crs* get() const noexcept { return crs_; }

  explicit operator bool() const noexcept { return crs_ != nullptr; }

  /// Gives up ownership: the caller must td_crs_release the returned handle.
  td_crs* detach() noexcept { return std::exchange(crs_, nullptr); }

private:
  explicit crs(td_crs* graph) noexcept : crs_(graph) {}

  template <class T>
  static std::vector<std::int64_t> widen(const std::vector<T>& values) {
    static_assert(std::is_integral<T>::value, "CRS offsets and entries are integers");
    return std::vector<std::int64_t>(values.begin(), values.end());
  }

  static crs create(const std::vector<std::int64_t>& row_map,
                    const std::vector<std::int64_t>& entries) {
    td_crs* graph = nullptr;
    // An empty row_map is passed as num_rows -1, which td_crs_create rejects with a message.
    check(td_crs_create(static_cast<std::int64_t>(row_map.size()) - 1, row_map.data(),
                        static_cast<std::int64_t>(entries.size()), entries.data(), &graph));
    return crs(graph);
  }

  std::int64_t query(td_status (*function)(const td_crs*, std::int64_t*)) const {
    std::int64_t value = 0;
    check(function(crs_, &value));
    return value;
  }

  td_crs* crs_ = nullptr;
};

/// A work graph planned from a crs (td_work_graph, 000 §3.3.1 WorkGraphPolicy): created once,
/// run any number of times without allocating. Move-only, share() for another owner.
class work_graph {
public:
  /// Plans a run of `graph` (every item Regular). Throws taskdag::error: TD_ERROR_CYCLE with an
  /// item on the cycle and its length, TD_ERROR_NOT_INITIALIZED, ...
  explicit work_graph(const crs& graph) { check(td_work_graph_create(graph.get(), nullptr, &plan_)); }

  /// Plans with one priority per item (TD_PRIORITY_HIGH, _REGULAR or _LOW): when several items
  /// are ready, higher priorities run first. Throws TD_ERROR_INVALID_ARGUMENT when the sizes
  /// differ or a value is not a priority.
  work_graph(const crs& graph, const std::vector<td_priority>& priorities) {
    if (static_cast<std::int64_t>(priorities.size()) != graph.num_rows()) {
      throw error(TD_ERROR_INVALID_ARGUMENT,
                  "taskdag::work_graph: " + std::to_string(priorities.size()) +
                      " priorities given for a graph of " + std::to_string(graph.num_rows()) +
                      " items; give one per item");
    }
    check(td_work_graph_create(graph.get(), priorities.data(), &plan_));
  }

  /// Takes over one reference the caller owns; `plan` may be NULL for an empty object.
  static work_graph adopt(td_work_graph* plan) noexcept { return work_graph(plan); }

  work_graph(work_graph&& other) noexcept : plan_(std::exchange(other.plan_, nullptr)) {}

  work_graph& operator=(work_graph&& other) noexcept {
    if (this != &other) {
      td_work_graph_release(plan_);
      plan_ = std::exchange(other.plan_, nullptr);
    }
    return *this;
  }

  work_graph(const work_graph&) = delete;
  work_graph& operator=(const work_graph&) = delete;

  ~work_graph() { td_work_graph_release(plan_); }

  /// Another owner of the same plan (td_work_graph_retain).
  work_graph share() const {
    check(td_work_graph_retain(plan_));
    return work_graph(plan_);
  }

  /// N, the number of work items.
  std::int64_t num_items() const {
    std::int64_t n = 0;
    check(td_work_graph_num_items(plan_, &n));
    return n;
  }

  /// Runs the graph on `space` (td_space_threads, td_space_serial, ...): calls `f(i)` once for
  /// every item i in [0, N), each after the calls of the items it executes after, concurrently
  /// on the space's threads (so `f` must be thread-safe). Returns when all calls have returned.
  /// A plan's runs on several threads share the work as finely as the cost of an item measured in
  /// its earlier runs warrants, so time later runs, not only the first; a run so measured to take
  /// one thread under about 12 us, or clearly less on one thread than on all of them, or of a graph
  /// too narrow to share anywhere, runs on the calling thread alone.
  ///
  /// If `f` throws, the remaining items are skipped (their calls return at once) and the first
  /// exception is rethrown here once the run has ended. Throws taskdag::error for
  /// TD_ERROR_WRONG_THREAD (not the space's control thread), TD_ERROR_BUSY (the plan or the
  /// space is running already), ...
  template <class F>
  void run(td_space* space, F&& f) const {
    using function_type = typename std::remove_reference<F>::type;
    struct state_type {
      explicit state_type(function_type* fn) : f(fn) {}
      function_type* f;
      std::atomic<bool> failed{false};
      std::exception_ptr exception;
    } state(&f);
    auto trampoline = [](std::int64_t i, void* user) {
      auto* s = static_cast<state_type*>(user);
      if (s->failed.load(std::memory_order_relaxed)) return;
      try {
        (*s->f)(i);
      } catch (...) {
        // The first exception is kept; exchange makes exactly one thread store it.
        if (!s->failed.exchange(true, std::memory_order_acq_rel)) {
          s->exception = std::current_exception();
        }
      }
    };
    check(td_work_graph_run(plan_, space, trampoline, &state));
    if (state.exception) std::rethrow_exception(state.exception);
  }

  /// The C handle, still owned by this object.
  td_work_graph* get() const noexcept { return plan_; }

  explicit operator bool() const noexcept { return plan_ != nullptr; }

  /// Gives up ownership: the caller must td_work_graph_release the returned handle.
  td_work_graph* detach() noexcept { return std::exchange(plan_, nullptr); }

private:
  explicit work_graph(td_work_graph* plan) noexcept : plan_(plan) {}

  td_work_graph* plan_ = nullptr;
};

}  // namespace taskdag

#endif  // TASKDAG_HPP
