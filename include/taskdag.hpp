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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
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

#endif  // TASKDAG_HPP
