!> taskdag: Fortran module over the C API of taskdag.h (ISO_C_BINDING).
!>
!> Two layers:
!>  * The C API as it is: bind(c) interfaces named like the C functions (td_initialize,
!>    td_pool_allocate, ...), the TD_* constants, and the parameter structs td_init_args,
!>    td_pool_args, td_pool_stats. Fill a struct with the function named like its C macro
!>    (td_pool_args_init() for TD_POOL_ARGS_INIT), which sets struct_size.
!>  * The idiomatic layer: taskdag_initialize / taskdag_finalize, strings as
!>    character(len=:), allocatable, and type(taskdag_pool) with type-bound procedures.
!>    Every procedure with an optional `stat` argument stores the td_status there; without
!>    `stat`, a failure stops the program (error stop) with taskdag's message.
!>
!> Compile this file into your program with the same compiler (module files are compiler-specific)
!> and link -ltaskdag:  gfortran taskdag.f90 app.f90 -ltaskdag
module taskdag
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int32, int64
  implicit none
  private

  ! ------------------------------------------------------------------------------------------
  ! Constants of taskdag.h
  ! ------------------------------------------------------------------------------------------
  integer(c_int32_t), parameter, public :: TD_VERSION_MAJOR = 0
  integer(c_int32_t), parameter, public :: TD_VERSION_MINOR = 1
  integer(c_int32_t), parameter, public :: TD_VERSION_PATCH = 0

  !> td_status values.
  integer(c_int), parameter, public :: TD_OK = 0
  integer(c_int), parameter, public :: TD_ERROR_NULL_ARGUMENT = 1
  integer(c_int), parameter, public :: TD_ERROR_INVALID_ARGUMENT = 2
  integer(c_int), parameter, public :: TD_ERROR_INVALID_HANDLE = 3
  integer(c_int), parameter, public :: TD_ERROR_NOT_INITIALIZED = 4
  integer(c_int), parameter, public :: TD_ERROR_ALREADY_INITIALIZED = 5
  integer(c_int), parameter, public :: TD_ERROR_UNAVAILABLE = 6
  integer(c_int), parameter, public :: TD_ERROR_POOL_EXHAUSTED = 7
  integer(c_int), parameter, public :: TD_ERROR_OUT_OF_MEMORY = 8
  integer(c_int), parameter, public :: TD_ERROR_STRUCT_SIZE = 9
  integer(c_int), parameter, public :: TD_ERROR_INTERNAL = 10
  integer(c_int), parameter, public :: TD_ERROR_DEADLOCK = 11
  integer(c_int), parameter, public :: TD_ERROR_CYCLE = 12
  integer(c_int), parameter, public :: TD_ERROR_BUSY = 13
  integer(c_int), parameter, public :: TD_ERROR_WRONG_THREAD = 14
  integer(c_int), parameter, public :: TD_ERROR_NOT_READY = 15

  !> td_memory_space values.
  integer(c_int32_t), parameter, public :: TD_SPACE_HOST = 0
  integer(c_int32_t), parameter, public :: TD_SPACE_CUDA = 1
  integer(c_int32_t), parameter, public :: TD_SPACE_CUDA_HOST_PINNED = 2

  ! ------------------------------------------------------------------------------------------
  ! Parameter structs of taskdag.h; struct_size is set by the *_init() functions below.
  ! ------------------------------------------------------------------------------------------

  !> Arguments of td_initialize; start from td_init_args_init().
  type, bind(c), public :: td_init_args
    integer(c_size_t) :: struct_size = 0
    integer(c_int) :: num_threads = 0      !< host worker threads; 0 = one per core
    integer(c_int) :: num_numa = 0         !< NUMA domains to use; 0 = all
    integer(c_int) :: cores_per_numa = 0   !< cores per NUMA domain; 0 = all
    integer(c_int) :: device_id = -1       !< CUDA device ordinal; -1 = first device, if any
  end type td_init_args

  !> Arguments of td_pool_create; start from td_pool_args_init(), then set min_total_alloc_size.
  type, bind(c), public :: td_pool_args
    integer(c_size_t) :: struct_size = 0
    integer(c_int32_t) :: memory_space = TD_SPACE_HOST
    integer(c_size_t) :: min_total_alloc_size = 0
    integer(c_size_t) :: min_block_alloc_size = 64
    integer(c_size_t) :: max_block_alloc_size = 4096
    integer(c_size_t) :: min_superblock_size = 0
  end type td_pool_args

  !> Usage statistics of a pool (td_pool_usage_statistics); start from td_pool_stats_init().
  !> The C fields are uint64_t; Fortran has no unsigned integers, so they are int64 here.
  type, bind(c), public :: td_pool_stats
    integer(c_size_t) :: struct_size = 0
    integer(c_int64_t) :: capacity_bytes = 0
    integer(c_int64_t) :: superblock_bytes = 0
    integer(c_int64_t) :: min_block_bytes = 0
    integer(c_int64_t) :: max_block_bytes = 0
    integer(c_int64_t) :: capacity_superblocks = 0
    integer(c_int64_t) :: consumed_superblocks = 0
    integer(c_int64_t) :: consumed_blocks = 0
    integer(c_int64_t) :: consumed_bytes = 0
    integer(c_int64_t) :: reserved_blocks = 0
    integer(c_int64_t) :: reserved_bytes = 0
    integer(c_int64_t) :: high_water_bytes = 0
    integer(c_int64_t) :: failed_allocations = 0
  end type td_pool_stats

  public :: td_init_args_init, td_pool_args_init, td_pool_stats_init

  ! ------------------------------------------------------------------------------------------
  ! The C functions, one interface each; see taskdag.h for ownership and statuses.
  ! Handles and strings are type(c_ptr); statuses are integer(c_int).
  ! ------------------------------------------------------------------------------------------
  public :: td_last_error_message, td_last_error, td_version, td_version_string
  public :: td_initialize, td_finalize, td_is_initialized, td_configuration_string, td_string_free
  public :: td_pool_create, td_pool_retain, td_pool_release, td_pool_allocate, td_pool_deallocate
  public :: td_pool_allocate_block_size, td_pool_capacity, td_pool_min_block_size
  public :: td_pool_max_block_size, td_pool_usage_statistics, td_status_string

  ! Out-arguments are intent(inout): the C functions leave them untouched on failure, so the
  ! wrappers' initial values must survive (intent(out) lets the compiler drop them).
  interface
    !> Message of the last failure on this thread (owned by taskdag; never NULL).
    function td_last_error_message() bind(c, name="td_last_error_message") result(message)
      import :: c_ptr
      type(c_ptr) :: message
    end function td_last_error_message

    !> Status of the last failure on this thread (TD_OK if none yet).
    function td_last_error() bind(c, name="td_last_error") result(status)
      import :: c_int
      integer(c_int) :: status
    end function td_last_error

    !> Version as major * 10000 + minor * 100 + patch.
    function td_version() bind(c, name="td_version") result(version)
      import :: c_int32_t
      integer(c_int32_t) :: version
    end function td_version

    !> Version as text (static string).
    function td_version_string() bind(c, name="td_version_string") result(version)
      import :: c_ptr
      type(c_ptr) :: version
    end function td_version_string

    !> Starts the runtime; omit `args` for the defaults (C: NULL).
    function td_initialize(args) bind(c, name="td_initialize") result(status)
      import :: c_int, td_init_args
      type(td_init_args), intent(in), optional :: args
      integer(c_int) :: status
    end function td_initialize

    !> Stops the runtime.
    function td_finalize() bind(c, name="td_finalize") result(status)
      import :: c_int
      integer(c_int) :: status
    end function td_finalize

    !> 1 if the runtime is initialized, else 0.
    function td_is_initialized() bind(c, name="td_is_initialized") result(initialized)
      import :: c_int
      integer(c_int) :: initialized
    end function td_is_initialized

    !> Writes a new string to `out`, to be freed with td_string_free.
    function td_configuration_string(out) bind(c, name="td_configuration_string") result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_configuration_string

    !> Frees a string from taskdag; c_null_ptr is a no-op.
    subroutine td_string_free(s) bind(c, name="td_string_free")
      import :: c_ptr
      type(c_ptr), value :: s
    end subroutine td_string_free

    !> Creates a pool; `out` receives a handle with one reference.
    function td_pool_create(args, out) bind(c, name="td_pool_create") result(status)
      import :: c_int, c_ptr, td_pool_args
      type(td_pool_args), intent(in) :: args
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_pool_create

    !> Adds a reference to a pool.
    function td_pool_retain(pool) bind(c, name="td_pool_retain") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: pool
      integer(c_int) :: status
    end function td_pool_retain

    !> Releases one reference to a pool; c_null_ptr is a no-op.
    function td_pool_release(pool) bind(c, name="td_pool_release") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: pool
      integer(c_int) :: status
    end function td_pool_release

    !> Allocates a block of at least `size` bytes, or returns c_null_ptr (see td_last_error).
    function td_pool_allocate(pool, size, attempt_limit) bind(c, name="td_pool_allocate") &
        result(block)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: pool
      integer(c_size_t), value :: size
      integer(c_int), value :: attempt_limit
      type(c_ptr) :: block
    end function td_pool_allocate

    !> Returns a block to the pool.
    function td_pool_deallocate(pool, ptr, size) bind(c, name="td_pool_deallocate") &
        result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: pool
      type(c_ptr), value :: ptr
      integer(c_size_t), value :: size
      integer(c_int) :: status
    end function td_pool_deallocate

    !> Block size an allocation of `size` bytes takes.
    function td_pool_allocate_block_size(pool, size, out) &
        bind(c, name="td_pool_allocate_block_size") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: pool
      integer(c_size_t), value :: size
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_pool_allocate_block_size

    !> Allocatable bytes of the pool.
    function td_pool_capacity(pool, out) bind(c, name="td_pool_capacity") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: pool
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_pool_capacity

    !> Smallest block size of the pool.
    function td_pool_min_block_size(pool, out) bind(c, name="td_pool_min_block_size") &
        result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: pool
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_pool_min_block_size

    !> Largest block size of the pool.
    function td_pool_max_block_size(pool, out) bind(c, name="td_pool_max_block_size") &
        result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: pool
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_pool_max_block_size

    !> Fills `out` (struct_size set by td_pool_stats_init()) with the pool's usage statistics.
    function td_pool_usage_statistics(pool, out) bind(c, name="td_pool_usage_statistics") &
        result(status)
      import :: c_int, c_ptr, td_pool_stats
      type(c_ptr), value :: pool
      type(td_pool_stats), intent(inout) :: out
      integer(c_int) :: status
    end function td_pool_usage_statistics

    !> Name of a status (static string).
    function td_status_string(status) bind(c, name="td_status_string") result(name)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: name
    end function td_status_string

    function c_strlen(s) bind(c, name="strlen") result(length)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: length
    end function c_strlen
  end interface

  ! ------------------------------------------------------------------------------------------
  ! The idiomatic layer
  ! ------------------------------------------------------------------------------------------
  public :: taskdag_initialize, taskdag_finalize, taskdag_is_initialized
  public :: taskdag_version, taskdag_configuration, taskdag_last_error_message
  public :: taskdag_status_name

  !> A memory pool: a fixed span of memory handing out power-of-two blocks, safe to use from
  !> many threads. Holds one reference to a td_pool.
  !>
  !>   type(taskdag_pool) :: pool
  !>   call pool%create(1048576)                     ! 1 MiB, blocks of 64 to 4096 bytes
  !>   block = pool%allocate(200)                    ! type(c_ptr); c_null_ptr when full
  !>   call pool%deallocate(block, 200)
  !>   call pool%release()
  !>
  !> Assignment `b = a` shares the pool (td_pool_retain), releasing what `b` held before; each
  !> variable holds its own reference. Release each with release(); the final procedure releases
  !> a forgotten reference where the compiler finalizes, but compilers differ in when they do.
  !> Sizes may be default (int32) or int64 integers.
  type, public :: taskdag_pool
    type(c_ptr), private :: handle = c_null_ptr
  contains
    generic :: create => pool_create_int32, pool_create_int64
    generic :: allocate => pool_allocate_int32, pool_allocate_int64
    generic :: deallocate => pool_deallocate_int32, pool_deallocate_int64
    generic :: block_size => pool_block_size_int32, pool_block_size_int64
    procedure :: capacity => pool_capacity
    procedure :: min_block_size => pool_min_block_size
    procedure :: max_block_size => pool_max_block_size
    procedure :: statistics => pool_statistics
    procedure :: release => pool_release
    procedure :: is_created => pool_is_created
    procedure :: c_handle => pool_c_handle
    generic :: assignment(=) => pool_assign
    procedure, private :: pool_create_int32, pool_create_int64
    procedure, private :: pool_allocate_int32, pool_allocate_int64
    procedure, private :: pool_deallocate_int32, pool_deallocate_int64
    procedure, private :: pool_block_size_int32, pool_block_size_int64
    procedure, private :: pool_assign
    final :: pool_finalize
  end type taskdag_pool


  ! ==========================================================================================
  ! Task DAG (td_scheduler, td_future, td_task_ctx; 000 §3.2): constants, structs, interfaces
  ! and types. A task is a bind(c) subroutine task(ctx, state) with `type(c_ptr), value` dummies;
  ! its state is a bind(c) derived type copied into the task (pass c_loc and c_sizeof). In a
  ! task's state, futures are raw type(c_ptr) (release them in the destroy procedure); on the
  ! host, type(taskdag_future) owns one and releases it when finalized.
  ! ==========================================================================================

  !> td_priority values.
  integer(c_int32_t), parameter, public :: TD_PRIORITY_HIGH = 0
  integer(c_int32_t), parameter, public :: TD_PRIORITY_REGULAR = 1
  integer(c_int32_t), parameter, public :: TD_PRIORITY_LOW = 2

  !> Arguments of td_scheduler_create; start from td_scheduler_args_init(), then set pool.
  type, bind(c), public :: td_scheduler_args
    integer(c_size_t) :: struct_size = 0
    type(c_ptr) :: space = c_null_ptr        !< c_null_ptr = the root Threads instance
    type(c_ptr) :: pool = c_null_ptr         !< required: a td_pool
    integer(c_int) :: team_size = 0          !< 0 = from the topology
    integer(c_size_t) :: team_scratch_bytes = 0
  end type td_scheduler_args

  !> Statistics of a scheduler (td_scheduler_statistics); start from td_scheduler_stats_init().
  type, bind(c), public :: td_scheduler_stats
    integer(c_size_t) :: struct_size = 0
    integer(c_int64_t) :: tasks_spawned = 0
    integer(c_int64_t) :: task_executions = 0
    integer(c_int64_t) :: tasks_respawned = 0
    integer(c_int64_t) :: tasks_completed = 0
    integer(c_int64_t) :: when_alls_created = 0
    integer(c_int64_t) :: allocation_failures = 0
    integer(c_int64_t) :: steals = 0
    integer(c_int64_t) :: alive = 0
    integer(c_int64_t) :: peak_alive = 0
    integer(c_int64_t) :: peak_bytes = 0
    integer(c_int64_t) :: pool_high_water_bytes = 0
    integer(c_int64_t) :: waits = 0
  end type td_scheduler_stats

  !> How a task is scheduled; start from td_task_policy_init().
  type, bind(c), public :: td_task_policy
    integer(c_size_t) :: struct_size = 0
    type(c_ptr) :: scheduler = c_null_ptr
    type(c_ptr) :: dependence = c_null_ptr
    integer(c_int32_t) :: priority = TD_PRIORITY_REGULAR
    integer(c_int) :: team = 0
  end type td_task_policy

  !> What a task runs; start from td_task_closure_init().
  type, bind(c), public :: td_task_closure
    integer(c_size_t) :: struct_size = 0
    type(c_funptr) :: function = c_null_funptr
    type(c_ptr) :: state = c_null_ptr
    integer(c_size_t) :: state_size = 0
    integer(c_size_t) :: result_size = 0
    type(c_funptr) :: destroy = c_null_funptr
    type(c_funptr) :: init = c_null_funptr
  end type td_task_closure

  public :: td_scheduler_args_init, td_scheduler_stats_init, td_task_policy_init
  public :: td_task_closure_init
  public :: td_scheduler_create, td_scheduler_retain, td_scheduler_release
  public :: td_scheduler_concurrency, td_scheduler_team_size, td_scheduler_statistics, td_wait
  public :: td_host_spawn, td_when_all, td_future_retain, td_future_release, td_future_is_null
  public :: td_future_is_ready, td_future_get, td_future_result, td_future_result_size
  public :: td_task_spawn, td_task_respawn, td_task_result, td_task_team, td_task_scheduler

  interface
    !> Creates a scheduler; `out` receives a handle with one reference.
    function td_scheduler_create(args, out) bind(c, name="td_scheduler_create") result(status)
      import :: c_int, c_ptr, td_scheduler_args
      type(td_scheduler_args), intent(in) :: args
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_scheduler_create

    function td_scheduler_retain(scheduler) bind(c, name="td_scheduler_retain") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: scheduler
      integer(c_int) :: status
    end function td_scheduler_retain

    function td_scheduler_release(scheduler) bind(c, name="td_scheduler_release") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: scheduler
      integer(c_int) :: status
    end function td_scheduler_release

    function td_scheduler_concurrency(scheduler, out) bind(c, name="td_scheduler_concurrency") &
        result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: scheduler
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_scheduler_concurrency

    function td_scheduler_team_size(scheduler, out) bind(c, name="td_scheduler_team_size") &
        result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: scheduler
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_scheduler_team_size

    function td_scheduler_statistics(scheduler, out) bind(c, name="td_scheduler_statistics") &
        result(status)
      import :: c_int, c_ptr, td_scheduler_stats
      type(c_ptr), value :: scheduler
      type(td_scheduler_stats), intent(inout) :: out
      integer(c_int) :: status
    end function td_scheduler_statistics

    !> Runs every spawned task to completion.
    function td_wait(scheduler) bind(c, name="td_wait") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: scheduler
      integer(c_int) :: status
    end function td_wait

    !> Spawns a task from the host; a future (one reference) or c_null_ptr (see td_last_error).
    function td_host_spawn(policy, closure) bind(c, name="td_host_spawn") result(future)
      import :: c_ptr, td_task_policy, td_task_closure
      type(td_task_policy), intent(in) :: policy
      type(td_task_closure), intent(in) :: closure
      type(c_ptr) :: future
    end function td_host_spawn

    !> A future that completes when all `count` futures have; c_null_ptr on failure.
    function td_when_all(scheduler, futures, count) bind(c, name="td_when_all") result(future)
      import :: c_int, c_ptr
      type(c_ptr), value :: scheduler
      type(c_ptr), intent(in) :: futures(*)
      integer(c_int), value :: count
      type(c_ptr) :: future
    end function td_when_all

    function td_future_retain(future) bind(c, name="td_future_retain") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: future
      integer(c_int) :: status
    end function td_future_retain

    !> Releases one reference to a future; c_null_ptr is a no-op.
    function td_future_release(future) bind(c, name="td_future_release") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: future
      integer(c_int) :: status
    end function td_future_release

    function td_future_is_null(future) bind(c, name="td_future_is_null") result(is_null)
      import :: c_int, c_ptr
      type(c_ptr), value :: future
      integer(c_int) :: is_null
    end function td_future_is_null

    function td_future_is_ready(future, out) bind(c, name="td_future_is_ready") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: future
      integer(c_int), intent(inout) :: out
      integer(c_int) :: status
    end function td_future_is_ready

    !> Copies the completed task's result (`size` bytes) to `out`.
    function td_future_get(future, out, size) bind(c, name="td_future_get") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: future
      type(c_ptr), value :: out
      integer(c_size_t), value :: size
      integer(c_int) :: status
    end function td_future_get

    function td_future_result(future, out, size) bind(c, name="td_future_result") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: future
      type(c_ptr), intent(inout) :: out
      integer(c_size_t), intent(inout) :: size
      integer(c_int) :: status
    end function td_future_result

    function td_future_result_size(future, out) bind(c, name="td_future_result_size") &
        result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: future
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_future_result_size

    !> Spawns a task from inside a running task; a future or c_null_ptr (see td_last_error).
    function td_task_spawn(ctx, policy, closure) bind(c, name="td_task_spawn") result(future)
      import :: c_ptr, td_task_policy, td_task_closure
      type(c_ptr), value :: ctx
      type(td_task_policy), intent(in) :: policy
      type(td_task_closure), intent(in) :: closure
      type(c_ptr) :: future
    end function td_task_spawn

    !> Runs the task again after `dependence` (c_null_ptr: none) at `priority`.
    function td_task_respawn(ctx, dependence, priority) bind(c, name="td_task_respawn") &
        result(status)
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr), value :: dependence
      integer(c_int32_t), value :: priority
      integer(c_int) :: status
    end function td_task_respawn

    !> The running task's result bytes (c_f_pointer them to the result's type).
    function td_task_result(ctx) bind(c, name="td_task_result") result(bytes)
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: bytes
    end function td_task_result

    function td_task_team(ctx) bind(c, name="td_task_team") result(team)
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: team
    end function td_task_team

    !> The scheduler running the task (borrowed: do not release it).
    function td_task_scheduler(ctx) bind(c, name="td_task_scheduler") result(scheduler)
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: scheduler
    end function td_task_scheduler
  end interface

  !> A future on the host: owns one reference to a task's td_future and releases it when
  !> released or finalized. `b = a` shares the future (td_future_retain).
  type, public :: taskdag_future
    type(c_ptr), private :: handle = c_null_ptr
  contains
    procedure :: is_null => future_is_null
    procedure :: is_ready => future_is_ready
    procedure :: get_int64 => future_get_int64
    procedure :: get_double => future_get_double
    procedure :: release => future_release
    procedure :: c_handle => future_c_handle
    generic :: assignment(=) => future_assign
    procedure, private :: future_assign
    final :: future_finalize
  end type taskdag_future

  !> A task scheduler (td_scheduler) on the runtime's Threads space and a pool:
  !>
  !>   type(taskdag_scheduler) :: sched
  !>   type(taskdag_future) :: f
  !>   call sched%create(pool)
  !>   call sched%spawn(f, task, c_loc(state), c_sizeof(state), 8_c_size_t)  ! task = c_funloc(my_task)
  !>   call sched%wait()
  !>   print *, f%get_int64()
  type, public :: taskdag_scheduler
    type(c_ptr), private :: handle = c_null_ptr
  contains
    procedure :: create => scheduler_create
    procedure :: spawn => scheduler_spawn
    procedure :: wait => scheduler_wait
    procedure :: statistics => scheduler_statistics
    procedure :: concurrency => scheduler_concurrency
    procedure :: release => scheduler_release
    procedure :: c_handle => scheduler_c_handle
    final :: scheduler_finalize
  end type taskdag_scheduler

  public :: taskdag_task_spawn, taskdag_task_respawn, taskdag_task_when_all
  public :: taskdag_future_int64, taskdag_future_release

contains

  ! --- parameter structs ---------------------------------------------------------------------

  !> TD_INIT_ARGS_INIT: defaults with struct_size set.
  function td_init_args_init() result(args)
    type(td_init_args) :: args
    args = td_init_args()
    args%struct_size = c_sizeof(args)
  end function td_init_args_init

  !> TD_POOL_ARGS_INIT: host pool defaults with struct_size set; set min_total_alloc_size.
  function td_pool_args_init() result(args)
    type(td_pool_args) :: args
    args = td_pool_args()
    args%struct_size = c_sizeof(args)
  end function td_pool_args_init

  !> TD_POOL_STATS_INIT: zeroed statistics with struct_size set.
  function td_pool_stats_init() result(stats)
    type(td_pool_stats) :: stats
    stats = td_pool_stats()
    stats%struct_size = c_sizeof(stats)
  end function td_pool_stats_init

  ! --- helpers -------------------------------------------------------------------------------

  !> Copies a NUL-terminated C string into a Fortran string; c_null_ptr gives ''.
  function c_to_fortran_string(s) result(text)
    type(c_ptr), intent(in) :: s
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: length, i

    if (.not. c_associated(s)) then
      text = ''
      return
    end if
    length = c_strlen(s)
    call c_f_pointer(s, chars, [length])
    allocate (character(len=length) :: text)
    do i = 1, length
      text(i:i) = chars(i)
    end do
  end function c_to_fortran_string

  !> Hands `status` to the caller through `stat`, or stops the program on failure without it.
  subroutine report(status, stat)
    integer(c_int), intent(in) :: status
    integer, intent(out), optional :: stat
    character(len=:), allocatable :: message

    if (present(stat)) then
      stat = int(status)
    else if (status /= TD_OK) then
      message = 'taskdag: '//taskdag_last_error_message()
      error stop message
    end if
  end subroutine report

  ! --- library -------------------------------------------------------------------------------

  !> Starts the runtime with `num_threads` host threads (default 0: one per core).
  subroutine taskdag_initialize(num_threads, stat)
    integer, intent(in), optional :: num_threads
    integer, intent(out), optional :: stat
    type(td_init_args) :: args

    args = td_init_args_init()
    if (present(num_threads)) args%num_threads = int(num_threads, c_int)
    call report(td_initialize(args), stat)
  end subroutine taskdag_initialize

  !> Stops the runtime; pools stay valid until released.
  subroutine taskdag_finalize(stat)
    integer, intent(out), optional :: stat

    call report(td_finalize(), stat)
  end subroutine taskdag_finalize

  !> True while the runtime is initialized.
  logical function taskdag_is_initialized()
    taskdag_is_initialized = td_is_initialized() /= 0
  end function taskdag_is_initialized

  !> The library's version, e.g. "0.1.0".
  function taskdag_version() result(version)
    character(len=:), allocatable :: version

    version = c_to_fortran_string(td_version_string())
  end function taskdag_version

  !> Description of the running runtime (version, features, cores, GPUs); '' on failure with
  !> `stat`.
  function taskdag_configuration(stat) result(text)
    integer, intent(out), optional :: stat
    character(len=:), allocatable :: text
    type(c_ptr) :: c_text
    integer(c_int) :: status

    text = ''
    status = td_configuration_string(c_text)
    if (status == TD_OK) then
      text = c_to_fortran_string(c_text)
      call td_string_free(c_text)
    end if
    call report(status, stat)
  end function taskdag_configuration

  !> Message of the last failure on this thread: what failed, the value, the fix.
  function taskdag_last_error_message() result(message)
    character(len=:), allocatable :: message

    message = c_to_fortran_string(td_last_error_message())
  end function taskdag_last_error_message

  !> Name of a status, e.g. "TD_ERROR_INVALID_ARGUMENT".
  function taskdag_status_name(status) result(name)
    integer, intent(in) :: status
    character(len=:), allocatable :: name

    name = c_to_fortran_string(td_status_string(int(status, c_int)))
  end function taskdag_status_name

  ! --- taskdag_pool --------------------------------------------------------------------------

  !> Creates a host pool of at least `min_total_alloc_size` bytes (see td_pool_args for the
  !> optional sizes; 0 or absent = default). Releases the pool this variable held before.
  subroutine pool_create_int64(this, min_total_alloc_size, min_block_alloc_size, &
                               max_block_alloc_size, min_superblock_size, stat)
    class(taskdag_pool), intent(inout) :: this
    integer(int64), intent(in) :: min_total_alloc_size
    integer(int64), intent(in), optional :: min_block_alloc_size, max_block_alloc_size, &
                                            min_superblock_size
    integer, intent(out), optional :: stat
    type(td_pool_args) :: args
    type(c_ptr) :: created
    integer(c_int) :: status

    args = td_pool_args_init()
    args%min_total_alloc_size = int(min_total_alloc_size, c_size_t)
    if (present(min_block_alloc_size)) args%min_block_alloc_size = int(min_block_alloc_size, c_size_t)
    if (present(max_block_alloc_size)) args%max_block_alloc_size = int(max_block_alloc_size, c_size_t)
    if (present(min_superblock_size)) args%min_superblock_size = int(min_superblock_size, c_size_t)
    status = td_pool_create(args, created)
    if (status == TD_OK) then
      call this%release()
      this%handle = created
    end if
    call report(status, stat)
  end subroutine pool_create_int64

  subroutine pool_create_int32(this, min_total_alloc_size, min_block_alloc_size, &
                               max_block_alloc_size, min_superblock_size, stat)
    class(taskdag_pool), intent(inout) :: this
    integer(int32), intent(in) :: min_total_alloc_size
    integer(int32), intent(in), optional :: min_block_alloc_size, max_block_alloc_size, &
                                            min_superblock_size
    integer, intent(out), optional :: stat
    integer(int64) :: min_block, max_block, superblock

    ! Absent sizes are passed as 0, which td_pool_create reads as "default".
    min_block = 0
    max_block = 0
    superblock = 0
    if (present(min_block_alloc_size)) min_block = min_block_alloc_size
    if (present(max_block_alloc_size)) max_block = max_block_alloc_size
    if (present(min_superblock_size)) superblock = min_superblock_size
    call pool_create_int64(this, int(min_total_alloc_size, int64), min_block, max_block, &
                           superblock, stat)
  end subroutine pool_create_int32

  !> Allocates a block of at least `size` bytes, aligned to its block size, searching the pool
  !> up to `attempt_limit` (default 1) times. Returns c_null_ptr when the pool is exhausted (not
  !> fatal; `stat` = TD_ERROR_POOL_EXHAUSTED) or for size 0. Misuse (size above the max block
  !> size, attempt_limit < 1, an uncreated pool) stops the program unless `stat` is present.
  function pool_allocate_int64(this, size, attempt_limit, stat) result(block)
    class(taskdag_pool), intent(in) :: this
    integer(int64), intent(in) :: size
    integer, intent(in), optional :: attempt_limit
    integer, intent(out), optional :: stat
    type(c_ptr) :: block
    integer(c_int) :: attempts, status

    attempts = 1
    if (present(attempt_limit)) attempts = int(attempt_limit, c_int)
    block = td_pool_allocate(this%handle, int(size, c_size_t), attempts)
    status = TD_OK
    if (.not. c_associated(block) .and. size /= 0) status = td_last_error()
    if (status == TD_ERROR_POOL_EXHAUSTED .and. .not. present(stat)) return
    call report(status, stat)
  end function pool_allocate_int64

  function pool_allocate_int32(this, size, attempt_limit, stat) result(block)
    class(taskdag_pool), intent(in) :: this
    integer(int32), intent(in) :: size
    integer, intent(in), optional :: attempt_limit
    integer, intent(out), optional :: stat
    type(c_ptr) :: block

    block = pool_allocate_int64(this, int(size, int64), attempt_limit, stat)
  end function pool_allocate_int32

  !> Returns `block`, allocated with the same `size` (or one of the same block size). A block
  !> that is not live in this pool is rejected (TD_ERROR_INVALID_ARGUMENT), the pool unchanged.
  subroutine pool_deallocate_int64(this, block, size, stat)
    class(taskdag_pool), intent(in) :: this
    type(c_ptr), intent(in) :: block
    integer(int64), intent(in) :: size
    integer, intent(out), optional :: stat

    call report(td_pool_deallocate(this%handle, block, int(size, c_size_t)), stat)
  end subroutine pool_deallocate_int64

  subroutine pool_deallocate_int32(this, block, size, stat)
    class(taskdag_pool), intent(in) :: this
    type(c_ptr), intent(in) :: block
    integer(int32), intent(in) :: size
    integer, intent(out), optional :: stat

    call pool_deallocate_int64(this, block, int(size, int64), stat)
  end subroutine pool_deallocate_int32

  !> The block size an allocation of `size` bytes takes (0 on failure with `stat`).
  function pool_block_size_int64(this, size, stat) result(bytes)
    class(taskdag_pool), intent(in) :: this
    integer(int64), intent(in) :: size
    integer, intent(out), optional :: stat
    integer(int64) :: bytes
    integer(c_size_t) :: out

    out = 0
    call report(td_pool_allocate_block_size(this%handle, int(size, c_size_t), out), stat)
    bytes = int(out, int64)
  end function pool_block_size_int64

  function pool_block_size_int32(this, size, stat) result(bytes)
    class(taskdag_pool), intent(in) :: this
    integer(int32), intent(in) :: size
    integer, intent(out), optional :: stat
    integer(int64) :: bytes

    bytes = pool_block_size_int64(this, int(size, int64), stat)
  end function pool_block_size_int32

  !> Allocatable bytes in the pool.
  function pool_capacity(this, stat) result(bytes)
    class(taskdag_pool), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: bytes
    integer(c_size_t) :: out

    out = 0
    call report(td_pool_capacity(this%handle, out), stat)
    bytes = int(out, int64)
  end function pool_capacity

  !> Smallest block size in bytes.
  function pool_min_block_size(this, stat) result(bytes)
    class(taskdag_pool), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: bytes
    integer(c_size_t) :: out

    out = 0
    call report(td_pool_min_block_size(this%handle, out), stat)
    bytes = int(out, int64)
  end function pool_min_block_size

  !> Largest block size in bytes, the largest allocation the pool accepts.
  function pool_max_block_size(this, stat) result(bytes)
    class(taskdag_pool), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: bytes
    integer(c_size_t) :: out

    out = 0
    call report(td_pool_max_block_size(this%handle, out), stat)
    bytes = int(out, int64)
  end function pool_max_block_size

  !> Usage statistics; exact while no thread allocates or frees.
  function pool_statistics(this, stat) result(stats)
    class(taskdag_pool), intent(in) :: this
    integer, intent(out), optional :: stat
    type(td_pool_stats) :: stats

    stats = td_pool_stats_init()
    call report(td_pool_usage_statistics(this%handle, stats), stat)
  end function pool_statistics

  !> Releases this variable's reference; the last reference frees the pool and its blocks.
  !> Releasing an uncreated or already released variable does nothing.
  subroutine pool_release(this, stat)
    class(taskdag_pool), intent(inout) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: status

    status = td_pool_release(this%handle)
    this%handle = c_null_ptr
    call report(status, stat)
  end subroutine pool_release

  !> True if the variable holds a pool (created and not released).
  logical function pool_is_created(this)
    class(taskdag_pool), intent(in) :: this

    pool_is_created = c_associated(this%handle)
  end function pool_is_created

  !> The td_pool handle for the C interfaces; still owned by the variable.
  function pool_c_handle(this) result(handle)
    class(taskdag_pool), intent(in) :: this
    type(c_ptr) :: handle

    handle = this%handle
  end function pool_c_handle

  !> `lhs = rhs`: lhs shares rhs's pool (one more reference) and releases its previous one.
  subroutine pool_assign(lhs, rhs)
    class(taskdag_pool), intent(inout) :: lhs
    class(taskdag_pool), intent(in) :: rhs
    type(c_ptr) :: previous

    if (c_associated(rhs%handle)) call report(td_pool_retain(rhs%handle))
    previous = lhs%handle
    lhs%handle = rhs%handle
    call report(td_pool_release(previous))
  end subroutine pool_assign

  !> Releases a reference the program did not release itself.
  subroutine pool_finalize(this)
    type(taskdag_pool), intent(inout) :: this
    integer(c_int) :: status

    status = td_pool_release(this%handle)
    this%handle = c_null_ptr
  end subroutine pool_finalize

  ! ==========================================================================================
  ! Task DAG: procedures
  ! ==========================================================================================

  !> TD_SCHEDULER_ARGS_INIT: defaults with struct_size set; set pool.
  function td_scheduler_args_init() result(args)
    type(td_scheduler_args) :: args
    args = td_scheduler_args()
    args%struct_size = c_sizeof(args)
  end function td_scheduler_args_init

  !> TD_SCHEDULER_STATS_INIT: zeroed statistics with struct_size set.
  function td_scheduler_stats_init() result(stats)
    type(td_scheduler_stats) :: stats
    stats = td_scheduler_stats()
    stats%struct_size = c_sizeof(stats)
  end function td_scheduler_stats_init

  !> TD_TASK_POLICY_INIT: regular priority, single thread, no dependence.
  function td_task_policy_init() result(policy)
    type(td_task_policy) :: policy
    policy = td_task_policy()
    policy%struct_size = c_sizeof(policy)
  end function td_task_policy_init

  !> TD_TASK_CLOSURE_INIT: set function, and state/state_size/result_size as needed.
  function td_task_closure_init() result(closure)
    type(td_task_closure) :: closure
    closure = td_task_closure()
    closure%struct_size = c_sizeof(closure)
  end function td_task_closure_init

  !> A policy and closure for a spawn; absent arguments keep the defaults.
  subroutine task_arguments(task, state, state_size, result_size, priority, after, team, &
                            destroy, policy, closure)
    type(c_funptr), intent(in) :: task
    type(c_ptr), intent(in) :: state
    integer(c_size_t), intent(in) :: state_size
    integer(c_size_t), intent(in), optional :: result_size
    integer(c_int32_t), intent(in), optional :: priority
    type(c_ptr), intent(in), optional :: after
    logical, intent(in), optional :: team
    type(c_funptr), intent(in), optional :: destroy
    type(td_task_policy), intent(out) :: policy
    type(td_task_closure), intent(out) :: closure

    policy = td_task_policy_init()
    if (present(priority)) policy%priority = priority
    if (present(after)) policy%dependence = after
    if (present(team)) then
      if (team) policy%team = 1
    end if
    closure = td_task_closure_init()
    closure%function = task
    closure%state = state
    closure%state_size = state_size
    if (present(result_size)) closure%result_size = result_size
    if (present(destroy)) closure%destroy = destroy
  end subroutine task_arguments

  !> The status of a spawn or when_all that returned `future`.
  function spawn_status(future) result(status)
    type(c_ptr), intent(in) :: future
    integer(c_int) :: status

    status = TD_OK
    if (.not. c_associated(future)) status = td_last_error()
  end function spawn_status

  !> Spawns the bind(c) subroutine `task` from inside a running task (td_task_spawn), with a
  !> copy of `state_size` bytes at `state` (c_loc of a bind(c) variable, c_sizeof of it).
  !> Returns the raw future (one reference: release it, typically in the task's destroy
  !> procedure), or c_null_ptr with `stat` set (TD_ERROR_POOL_EXHAUSTED is not fatal without
  !> `stat`; other failures stop the program).
  function taskdag_task_spawn(ctx, task, state, state_size, result_size, priority, after, team, &
                              destroy, stat) result(future)
    type(c_ptr), intent(in) :: ctx
    type(c_funptr), intent(in) :: task
    type(c_ptr), intent(in) :: state
    integer(c_size_t), intent(in) :: state_size
    integer(c_size_t), intent(in), optional :: result_size
    integer(c_int32_t), intent(in), optional :: priority
    type(c_ptr), intent(in), optional :: after
    logical, intent(in), optional :: team
    type(c_funptr), intent(in), optional :: destroy
    integer, intent(out), optional :: stat
    type(c_ptr) :: future
    type(td_task_policy) :: policy
    type(td_task_closure) :: closure
    integer(c_int) :: status

    call task_arguments(task, state, state_size, result_size, priority, after, team, destroy, &
                        policy, closure)
    future = td_task_spawn(ctx, policy, closure)
    status = spawn_status(future)
    if (status == TD_ERROR_POOL_EXHAUSTED .and. .not. present(stat)) return
    call report(status, stat)
  end function taskdag_task_spawn

  !> Runs the running task again after `dependence` (absent or c_null_ptr: none) at `priority`
  !> (default regular); at most once per run.
  subroutine taskdag_task_respawn(ctx, dependence, priority, stat)
    type(c_ptr), intent(in) :: ctx
    type(c_ptr), intent(in), optional :: dependence
    integer(c_int32_t), intent(in), optional :: priority
    integer, intent(out), optional :: stat
    type(c_ptr) :: dep
    integer(c_int32_t) :: p

    dep = c_null_ptr
    if (present(dependence)) dep = dependence
    p = TD_PRIORITY_REGULAR
    if (present(priority)) p = priority
    call report(td_task_respawn(ctx, dep, p), stat)
  end subroutine taskdag_task_respawn

  !> A raw future (one reference) that completes when all `futures` have; from a running task.
  function taskdag_task_when_all(ctx, futures, stat) result(future)
    type(c_ptr), intent(in) :: ctx
    type(c_ptr), intent(in) :: futures(:)
    integer, intent(out), optional :: stat
    type(c_ptr) :: future

    future = td_when_all(td_task_scheduler(ctx), futures, int(size(futures), c_int))
    call report(spawn_status(future), stat)
  end function taskdag_task_when_all

  !> The int64 result of a completed task behind a raw future.
  function taskdag_future_int64(future, stat) result(value)
    type(c_ptr), intent(in) :: future
    integer, intent(out), optional :: stat
    integer(c_int64_t), target :: value

    value = 0
    call report(td_future_get(future, c_loc(value), c_sizeof(value)), stat)
  end function taskdag_future_int64

  !> Releases a raw future (c_null_ptr: nothing) and sets it to c_null_ptr.
  subroutine taskdag_future_release(future, stat)
    type(c_ptr), intent(inout) :: future
    integer, intent(out), optional :: stat

    call report(td_future_release(future), stat)
    future = c_null_ptr
  end subroutine taskdag_future_release

  ! --- taskdag_future ------------------------------------------------------------------------

  logical function future_is_null(this)
    class(taskdag_future), intent(in) :: this

    future_is_null = .not. c_associated(this%handle)
  end function future_is_null

  !> True once the task completed.
  logical function future_is_ready(this, stat)
    class(taskdag_future), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: ready

    ready = 0
    call report(td_future_is_ready(this%handle, ready), stat)
    future_is_ready = ready /= 0
  end function future_is_ready

  !> The task's result as an int64 (its result_size must be 8).
  function future_get_int64(this, stat) result(value)
    class(taskdag_future), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(c_int64_t) :: value

    value = taskdag_future_int64(this%handle, stat)
  end function future_get_int64

  !> The task's result as a double (its result_size must be 8).
  function future_get_double(this, stat) result(value)
    class(taskdag_future), intent(in) :: this
    integer, intent(out), optional :: stat
    real(c_double), target :: value

    value = 0
    call report(td_future_get(this%handle, c_loc(value), c_sizeof(value)), stat)
  end function future_get_double

  subroutine future_release(this, stat)
    class(taskdag_future), intent(inout) :: this
    integer, intent(out), optional :: stat

    call taskdag_future_release(this%handle, stat)
  end subroutine future_release

  !> The td_future for the C interfaces; still owned by the variable.
  function future_c_handle(this) result(handle)
    class(taskdag_future), intent(in) :: this
    type(c_ptr) :: handle

    handle = this%handle
  end function future_c_handle

  !> `lhs = rhs`: lhs shares rhs's task (one more reference) and releases its previous one.
  subroutine future_assign(lhs, rhs)
    class(taskdag_future), intent(inout) :: lhs
    class(taskdag_future), intent(in) :: rhs
    type(c_ptr) :: previous

    if (c_associated(rhs%handle)) call report(td_future_retain(rhs%handle))
    previous = lhs%handle
    lhs%handle = rhs%handle
    call report(td_future_release(previous))
  end subroutine future_assign

  subroutine future_finalize(this)
    type(taskdag_future), intent(inout) :: this
    integer(c_int) :: status

    status = td_future_release(this%handle)
    this%handle = c_null_ptr
  end subroutine future_finalize

  ! --- taskdag_scheduler ---------------------------------------------------------------------

  !> Creates a scheduler on the runtime's Threads space that allocates tasks from `pool`;
  !> `team_size` 0 or absent = from the topology.
  subroutine scheduler_create(this, pool, team_size, stat)
    class(taskdag_scheduler), intent(inout) :: this
    type(taskdag_pool), intent(in) :: pool
    integer, intent(in), optional :: team_size
    integer, intent(out), optional :: stat
    type(td_scheduler_args) :: args
    type(c_ptr) :: created
    integer(c_int) :: status

    args = td_scheduler_args_init()
    args%pool = pool%c_handle()
    if (present(team_size)) args%team_size = int(team_size, c_int)
    created = c_null_ptr
    status = td_scheduler_create(args, created)
    if (status == TD_OK) then
      call this%release()
      this%handle = created
    end if
    call report(status, stat)
  end subroutine scheduler_create

  !> Spawns the bind(c) subroutine `task` from the host with a copy of `state_size` bytes at
  !> `state`; `future` receives its future (releasing what it held). See taskdag_task_spawn for
  !> the optional arguments. `future` is null when the pool is exhausted (`stat` =
  !> TD_ERROR_POOL_EXHAUSTED, not fatal without `stat`). A subroutine rather than a function:
  !> compilers that do not finalize function results would leak the reference.
  subroutine scheduler_spawn(this, future, task, state, state_size, result_size, priority, &
                             after, team, destroy, stat)
    class(taskdag_scheduler), intent(in) :: this
    type(taskdag_future), intent(inout) :: future
    type(c_funptr), intent(in) :: task
    type(c_ptr), intent(in) :: state
    integer(c_size_t), intent(in) :: state_size
    integer(c_size_t), intent(in), optional :: result_size
    integer(c_int32_t), intent(in), optional :: priority
    type(taskdag_future), intent(in), optional :: after
    logical, intent(in), optional :: team
    type(c_funptr), intent(in), optional :: destroy
    integer, intent(out), optional :: stat
    type(td_task_policy) :: policy
    type(td_task_closure) :: closure
    type(c_ptr) :: spawned
    integer(c_int) :: status

    if (present(after)) then
      call task_arguments(task, state, state_size, result_size, priority, after%handle, team, &
                          destroy, policy, closure)
    else
      call task_arguments(task, state, state_size, result_size, priority, team=team, &
                          destroy=destroy, policy=policy, closure=closure)
    end if
    policy%scheduler = this%handle
    spawned = td_host_spawn(policy, closure)
    status = spawn_status(spawned)
    call future%release()
    future%handle = spawned
    if (status == TD_ERROR_POOL_EXHAUSTED .and. .not. present(stat)) return
    call report(status, stat)
  end subroutine scheduler_spawn

  !> Runs every spawned task to completion (td_wait).
  subroutine scheduler_wait(this, stat)
    class(taskdag_scheduler), intent(in) :: this
    integer, intent(out), optional :: stat

    call report(td_wait(this%handle), stat)
  end subroutine scheduler_wait

  function scheduler_statistics(this, stat) result(stats)
    class(taskdag_scheduler), intent(in) :: this
    integer, intent(out), optional :: stat
    type(td_scheduler_stats) :: stats

    stats = td_scheduler_stats_init()
    call report(td_scheduler_statistics(this%handle, stats), stat)
  end function scheduler_statistics

  !> Workers (threads) that run tasks.
  function scheduler_concurrency(this, stat) result(workers)
    class(taskdag_scheduler), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: workers
    integer(c_size_t) :: out

    out = 0
    call report(td_scheduler_concurrency(this%handle, out), stat)
    workers = int(out, int64)
  end function scheduler_concurrency

  subroutine scheduler_release(this, stat)
    class(taskdag_scheduler), intent(inout) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: status

    status = td_scheduler_release(this%handle)
    this%handle = c_null_ptr
    call report(status, stat)
  end subroutine scheduler_release

  function scheduler_c_handle(this) result(handle)
    class(taskdag_scheduler), intent(in) :: this
    type(c_ptr) :: handle

    handle = this%handle
  end function scheduler_c_handle

  subroutine scheduler_finalize(this)
    type(taskdag_scheduler), intent(inout) :: this
    integer(c_int) :: status

    status = td_scheduler_release(this%handle)
    this%handle = c_null_ptr
  end subroutine scheduler_finalize

end module taskdag
