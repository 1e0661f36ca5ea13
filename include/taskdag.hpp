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

}  // namespace taskdag

#endif  // TASKDAG_HPP
