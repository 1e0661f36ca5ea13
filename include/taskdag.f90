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

end module taskdag
