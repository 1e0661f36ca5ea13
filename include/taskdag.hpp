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
  ///
  /// If `f` throws, the remaining items are skipped (their calls return at once) and the first
  /// exception is rethrown here once the run has ended. Throws taskdag::error for
  /// TD_ERROR_WRONG_THREAD (not the space's control thread), TD_ERROR_BUSY (the plan or the
  /// space is running already), ...
  template <class F>
  void run(td_space* space, F&& f) const {
    using function_type = typename std::remove_reference<F>::type;
    struct state_type {
      function_type* f;
      std::atomic<bool> failed{false};
      std::exception_ptr exception;
    } state{&f};
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
