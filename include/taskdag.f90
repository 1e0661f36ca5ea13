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
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64
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
    !> microseconds an idle worker spins before it sleeps; -1 = default (5000), 0 = sleep at once
    integer(c_int64_t) :: idle_spin_us = -1
  end type td_init_args

  !> Arguments of td_pool_create; start from td_pool_args_init(), then set min_total_alloc_size.
  type, bind(c), public :: td_pool_args
    integer(c_size_t) :: struct_size = 0
    integer(c_int32_t) :: memory_space = TD_SPACE_HOST
    integer(c_size_t) :: min_total_alloc_size = 0
    integer(c_size_t) :: min_block_alloc_size = 64
    integer(c_size_t) :: max_block_alloc_size = 4096
    integer(c_size_t) :: min_superblock_size = 0
    integer(c_int) :: thread_cache = 1     !< 1 = cache freed blocks per thread; 0 = do not
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
    integer(c_int64_t) :: cached_blocks = 0
    integer(c_int64_t) :: cached_bytes = 0
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
  public :: td_pool_reset, td_pool_flush_thread_cache, td_cuda_available, td_cuda_device_count

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

    !> Returns the calling thread's cached blocks to the pool (td_pool_flush_thread_cache).
    function td_pool_flush_thread_cache(pool) bind(c, name="td_pool_flush_thread_cache") &
        result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: pool
      integer(c_int) :: status
    end function td_pool_flush_thread_cache

    !> Frees every block of a TD_SPACE_CUDA pool at once (td_pool_reset).
    function td_pool_reset(pool) bind(c, name="td_pool_reset") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: pool
      integer(c_int) :: status
    end function td_pool_reset

    !> 1 when TD_SPACE_CUDA can be used, else 0.
    function td_cuda_available() bind(c, name="td_cuda_available") result(available)
      import :: c_int
      integer(c_int) :: available
    end function td_cuda_available

    !> Number of CUDA devices the driver reports.
    function td_cuda_device_count(out) bind(c, name="td_cuda_device_count") result(status)
      import :: c_int
      integer(c_int), intent(out) :: out
      integer(c_int) :: status
    end function td_cuda_device_count

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
  public :: taskdag_status_name, taskdag_cuda_available, taskdag_cuda_device_count

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
    procedure :: reset => pool_reset
    procedure :: flush_thread_cache => pool_flush_thread_cache
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
  ! Views (td_view): labelled, reference-counted multidimensional arrays
  ! ==========================================================================================

  !> td_element_type values.
  integer(c_int32_t), parameter, public :: TD_ELEMENT_INT8 = 1
  integer(c_int32_t), parameter, public :: TD_ELEMENT_INT16 = 2
  integer(c_int32_t), parameter, public :: TD_ELEMENT_INT32 = 3
  integer(c_int32_t), parameter, public :: TD_ELEMENT_INT64 = 4
  integer(c_int32_t), parameter, public :: TD_ELEMENT_UINT8 = 5
  integer(c_int32_t), parameter, public :: TD_ELEMENT_UINT16 = 6
  integer(c_int32_t), parameter, public :: TD_ELEMENT_UINT32 = 7
  integer(c_int32_t), parameter, public :: TD_ELEMENT_UINT64 = 8
  integer(c_int32_t), parameter, public :: TD_ELEMENT_FLOAT = 9
  integer(c_int32_t), parameter, public :: TD_ELEMENT_DOUBLE = 10
  integer(c_int32_t), parameter, public :: TD_ELEMENT_COMPLEX_FLOAT = 11
  integer(c_int32_t), parameter, public :: TD_ELEMENT_COMPLEX_DOUBLE = 12
  integer(c_int32_t), parameter, public :: TD_ELEMENT_OPAQUE = 13

  !> td_layout values. A Fortran array is TD_LAYOUT_LEFT (column-major).
  integer(c_int32_t), parameter, public :: TD_LAYOUT_RIGHT = 0
  integer(c_int32_t), parameter, public :: TD_LAYOUT_LEFT = 1
  integer(c_int32_t), parameter, public :: TD_LAYOUT_STRIDE = 2

  !> td_view_args%flags bits.
  integer(c_int32_t), parameter, public :: TD_VIEW_NO_INIT = 1
  integer(c_int32_t), parameter, public :: TD_VIEW_PAD = 2
  integer, parameter, public :: TD_VIEW_MAX_RANK = 8

  !> td_slice%kind values.
  integer(c_int32_t), parameter, public :: TD_SLICE_ALL = 0
  integer(c_int32_t), parameter, public :: TD_SLICE_INDEX = 1
  integer(c_int32_t), parameter, public :: TD_SLICE_RANGE = 2

  !> Arguments of td_view_create and td_view_wrap; start from td_view_args_init(). The C
  !> dimensions 0..rank-1 are entries 1..rank of extents and strides. flags is uint32_t in C.
  type, bind(c), public :: td_view_args
    integer(c_size_t) :: struct_size = 0
    integer(c_int32_t) :: element_type = 0
    integer(c_size_t) :: element_size = 0
    integer(c_int) :: rank = 0
    integer(c_size_t) :: extents(8) = 0
    integer(c_int32_t) :: layout = TD_LAYOUT_RIGHT
    integer(c_size_t) :: strides(8) = 0
    type(c_ptr) :: label = c_null_ptr        !< NUL-terminated; see taskdag_view%create
    integer(c_int32_t) :: memory_space = TD_SPACE_HOST
    integer(c_int32_t) :: flags = 0
  end type td_view_args

  !> One dimension of td_view_subview, with C's 0-based indices: TD_SLICE_ALL, TD_SLICE_INDEX
  !> (begin) or TD_SLICE_RANGE [begin, end). The taskdag_slice_* functions make them from
  !> 1-based Fortran indices.
  type, bind(c), public :: td_slice
    integer(c_int32_t) :: kind = TD_SLICE_ALL
    integer(c_int64_t) :: begin = 0
    integer(c_int64_t) :: end = 0
  end type td_slice

  public :: td_view_args_init
  public :: td_view_create, td_view_wrap, td_view_retain, td_view_release, td_view_rank
  public :: td_view_extent, td_view_stride, td_view_span, td_view_data, td_view_layout
  public :: td_view_element_type, td_view_element_size, td_view_label, td_view_is_contiguous
  public :: td_view_is_managed, td_view_memory_space, td_view_use_count, td_view_ptr
  public :: td_view_ptr_unchecked, td_view_create_mirror, td_view_create_mirror_view
  public :: td_view_deep_copy, td_view_fill, td_view_subview, td_view_resize, td_view_realloc

  interface
    !> Allocates a view; `out` receives a handle with one reference.
    function td_view_create(args, out) bind(c, name="td_view_create") result(status)
      import :: c_int, c_ptr, td_view_args
      type(td_view_args), intent(in) :: args
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_create

    !> Makes an unmanaged view of the memory at `data` (never freed by taskdag).
    function td_view_wrap(args, data, out) bind(c, name="td_view_wrap") result(status)
      import :: c_int, c_ptr, td_view_args
      type(td_view_args), intent(in) :: args
      type(c_ptr), value :: data
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_wrap

    !> Adds a reference to a view.
    function td_view_retain(view) bind(c, name="td_view_retain") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      integer(c_int) :: status
    end function td_view_retain

    !> Releases one reference to a view; c_null_ptr is a no-op.
    function td_view_release(view) bind(c, name="td_view_release") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      integer(c_int) :: status
    end function td_view_release

    !> Rank (0..8).
    function td_view_rank(view, out) bind(c, name="td_view_rank") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      integer(c_int), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_rank

    !> Extent of C dimension `dim` (0-based).
    function td_view_extent(view, dim, out) bind(c, name="td_view_extent") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: view
      integer(c_int), value :: dim
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_extent

    !> Stride in elements of C dimension `dim` (0-based).
    function td_view_stride(view, dim, out) bind(c, name="td_view_stride") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: view
      integer(c_int), value :: dim
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_stride

    !> Elements from the first to one past the last.
    function td_view_span(view, out) bind(c, name="td_view_span") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: view
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_span

    !> Address of the first element.
    function td_view_data(view, out) bind(c, name="td_view_data") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_data

    !> TD_LAYOUT_RIGHT, TD_LAYOUT_LEFT or TD_LAYOUT_STRIDE.
    function td_view_layout(view, out) bind(c, name="td_view_layout") result(status)
      import :: c_int, c_ptr, c_int32_t
      type(c_ptr), value :: view
      integer(c_int32_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_layout

    !> TD_ELEMENT_* of the elements.
    function td_view_element_type(view, out) bind(c, name="td_view_element_type") result(status)
      import :: c_int, c_ptr, c_int32_t
      type(c_ptr), value :: view
      integer(c_int32_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_element_type

    !> Bytes per element.
    function td_view_element_size(view, out) bind(c, name="td_view_element_size") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: view
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_element_size

    !> The label (owned by the view).
    function td_view_label(view, out) bind(c, name="td_view_label") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_label

    !> 1 if the elements have no gaps.
    function td_view_is_contiguous(view, out) bind(c, name="td_view_is_contiguous") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      integer(c_int), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_is_contiguous

    !> 1 if taskdag owns the memory, 0 for wrapped memory.
    function td_view_is_managed(view, out) bind(c, name="td_view_is_managed") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      integer(c_int), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_is_managed

    !> TD_SPACE_* of the elements.
    function td_view_memory_space(view, out) bind(c, name="td_view_memory_space") result(status)
      import :: c_int, c_ptr, c_int32_t
      type(c_ptr), value :: view
      integer(c_int32_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_memory_space

    !> Views sharing the array.
    function td_view_use_count(view, out) bind(c, name="td_view_use_count") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: view
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_use_count

    !> Address of the element at the `rank` 0-based C indices, bounds-checked.
    function td_view_ptr(view, indices, out) bind(c, name="td_view_ptr") result(status)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: view
      integer(c_int64_t), intent(in) :: indices(*)
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_ptr

    !> Address of the element at the 0-based C indices, without bounds checks.
    function td_view_ptr_unchecked(view, indices) bind(c, name="td_view_ptr_unchecked") &
        result(address)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: view
      integer(c_int64_t), intent(in) :: indices(*)
      type(c_ptr) :: address
    end function td_view_ptr_unchecked

    !> New zero-filled host view shaped like `view`, labelled "<label>_mirror".
    function td_view_create_mirror(view, out) bind(c, name="td_view_create_mirror") &
        result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_create_mirror

    !> `view` itself for host memory, else td_view_create_mirror.
    function td_view_create_mirror_view(view, out) bind(c, name="td_view_create_mirror_view") &
        result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: view
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_create_mirror_view

    !> Copies every element of `src` into `dst` (any layouts, equal shapes).
    function td_view_deep_copy(dst, src) bind(c, name="td_view_deep_copy") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: dst
      type(c_ptr), value :: src
      integer(c_int) :: status
    end function td_view_deep_copy

    !> Writes the element at `value` to every element of `dst`.
    function td_view_fill(dst, value) bind(c, name="td_view_fill") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: dst
      type(c_ptr), value :: value
      integer(c_int) :: status
    end function td_view_fill

    !> View of part of `view`: one td_slice per dimension.
    function td_view_subview(view, slices, count, out) bind(c, name="td_view_subview") &
        result(status)
      import :: c_int, c_ptr, c_size_t, td_slice
      type(c_ptr), value :: view
      type(td_slice), intent(in) :: slices(*)
      integer(c_size_t), value :: count
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_view_subview

    !> Reassigns `view` to a new array of `extents`, keeping the overlap.
    function td_view_resize(view, extents, rank) bind(c, name="td_view_resize") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), intent(inout) :: view
      integer(c_size_t), intent(in) :: extents(*)
      integer(c_size_t), value :: rank
      integer(c_int) :: status
    end function td_view_resize

    !> Reassigns `view` to a new array of `extents`, keeping nothing (old array freed first).
    function td_view_realloc(view, extents, rank) bind(c, name="td_view_realloc") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), intent(inout) :: view
      integer(c_size_t), intent(in) :: extents(*)
      integer(c_size_t), value :: rank
      integer(c_int) :: status
    end function td_view_realloc
  end interface

  public :: taskdag_deep_copy, taskdag_slice_all, taskdag_slice_index, taskdag_slice_range

  !> A view: a reference to a multidimensional array (rank 0..8) with a label, an element type,
  !> a layout and extents, shared by reference counting. Fortran-side conventions: dimensions
  !> and indices are 1-based (dimension 1 is C's dimension 0), and create() makes
  !> TD_LAYOUT_LEFT (column-major) arrays unless told otherwise, so a view and a Fortran array
  !> of the same shape have the same element order.
  !>
  !>   type(taskdag_view) :: v
  !>   real(real64), pointer :: a(:,:)
  !>   call v%create('A', TD_ELEMENT_DOUBLE, [100, 200])   ! zero-filled, column-major
  !>   call v%as_array(a)                                  ! a(1:100, 1:200) is the view
  !>   a(3, 4) = 1.0_real64
  !>   call v%release()
  !>
  !> wrap() makes a view of a Fortran array (no copy; the array must be contiguous and have the
  !> target attribute, and outlive the view). as_array() points a Fortran pointer at a view's
  !> elements; it exists for real64, int32 and int64 arrays of rank 1, 2 and 3, and needs a
  !> column-major view (TD_LAYOUT_LEFT, possibly padded, or a subview that keeps that form;
  !> rank 1: any stride). Other ranks and types are reachable through the td_view_* interfaces.
  !>
  !> Assignment `b = a` shares the view (td_view_retain), releasing what `b` held; each variable
  !> holds its own reference, released by release() or, where the compiler finalizes, the final
  !> procedure.
  type, public :: taskdag_view
    type(c_ptr), private :: handle = c_null_ptr
  contains
    generic :: create => view_create_int32, view_create_int64
    generic :: wrap => view_wrap_real64_1, view_wrap_real64_2, view_wrap_real64_3
    generic :: wrap => view_wrap_int32_1, view_wrap_int32_2, view_wrap_int32_3
    generic :: wrap => view_wrap_int64_1, view_wrap_int64_2, view_wrap_int64_3
    generic :: as_array => view_as_array_real64_1, view_as_array_real64_2, view_as_array_real64_3
    generic :: as_array => view_as_array_int32_1, view_as_array_int32_2, view_as_array_int32_3
    generic :: as_array => view_as_array_int64_1, view_as_array_int64_2, view_as_array_int64_3
    generic :: fill => view_fill_real64, view_fill_int32, view_fill_int64
    generic :: resize => view_resize_int32, view_resize_int64
    generic :: realloc => view_realloc_int32, view_realloc_int64
    procedure :: rank => view_rank
    procedure :: extent => view_extent
    procedure :: stride => view_stride
    procedure :: span => view_span
    procedure :: label => view_label
    procedure :: layout => view_layout
    procedure :: element_type => view_element_type
    procedure :: is_contiguous => view_is_contiguous
    procedure :: is_managed => view_is_managed
    procedure :: use_count => view_use_count
    procedure :: create_mirror => view_create_mirror
    procedure :: create_mirror_view => view_create_mirror_view
    procedure :: subview => view_subview
    procedure :: release => view_release
    procedure :: is_created => view_is_created
    procedure :: c_handle => view_c_handle
    generic :: assignment(=) => view_assign
    procedure, private :: view_create_int32, view_create_int64
    procedure, private :: view_wrap_real64_1, view_wrap_real64_2, view_wrap_real64_3
    procedure, private :: view_wrap_int32_1, view_wrap_int32_2, view_wrap_int32_3
    procedure, private :: view_wrap_int64_1, view_wrap_int64_2, view_wrap_int64_3
    procedure, private :: view_as_array_real64_1, view_as_array_real64_2, view_as_array_real64_3
    procedure, private :: view_as_array_int32_1, view_as_array_int32_2, view_as_array_int32_3
    procedure, private :: view_as_array_int64_1, view_as_array_int64_2, view_as_array_int64_3
    procedure, private :: view_fill_real64, view_fill_int32, view_fill_int64
    procedure, private :: view_resize_int32, view_resize_int64
    procedure, private :: view_realloc_int32, view_realloc_int64
    procedure, private :: view_assign
    final :: view_finalize
  end type taskdag_view

  ! ==========================================================================================
  ! Execution spaces and data-parallel dispatch (003, 004): the C API (constants, structs,
  ! interfaces), the callback interfaces, and the idiomatic types taskdag_space and
  ! taskdag_team. Bodies are bind(c) procedures with the abstract interfaces below; they get
  ! the caller's data as type(c_ptr) (pass c_loc of a target variable, recover it with
  ! c_f_pointer). Ranges are half-open: [begin, end), int64 indices.
  ! ==========================================================================================

  !> td_exec_kind values.
  integer(c_int), parameter, public :: TD_EXEC_SERIAL = 0
  integer(c_int), parameter, public :: TD_EXEC_THREADS = 1
  !> td_reduce_op values: the built-in reduction operators.
  integer(c_int32_t), parameter, public :: TD_REDUCE_SUM = 0
  integer(c_int32_t), parameter, public :: TD_REDUCE_MIN = 1
  integer(c_int32_t), parameter, public :: TD_REDUCE_MAX = 2
  integer(c_int32_t), parameter, public :: TD_REDUCE_PROD = 3
  !> td_scalar_type values: the element types of built-in reductions.
  integer(c_int32_t), parameter, public :: TD_SCALAR_INT32 = 0
  integer(c_int32_t), parameter, public :: TD_SCALAR_INT64 = 1
  integer(c_int32_t), parameter, public :: TD_SCALAR_FLOAT = 2
  integer(c_int32_t), parameter, public :: TD_SCALAR_DOUBLE = 3

  !> Indices [begin, end) to run over; start from td_range_policy_init().
  type, bind(c), public :: td_range_policy
    integer(c_size_t) :: struct_size = 0
    integer(c_int64_t) :: begin = 0
    integer(c_int64_t) :: end = 0
    integer(c_int64_t) :: chunk_size = 0   !< C uint64_t; 0 = one block per thread
    real(c_double) :: mask = 1.0_c_double  !< fraction (0, 1] of the threads; 0 = all
  end type td_range_policy

  !> A league of teams; start from td_team_policy_init().
  type, bind(c), public :: td_team_policy
    integer(c_size_t) :: struct_size = 0
    integer(c_int64_t) :: league_size = 0
    integer(c_int64_t) :: team_size = 0    !< 0 = the hardware threads of a core
    integer(c_size_t) :: scratch_bytes = 0
    real(c_double) :: mask = 1.0_c_double
  end type td_team_policy

  !> A sub-instance for td_space_run_instances; start from td_instance_request_init().
  type, bind(c), public :: td_instance_request
    integer(c_size_t) :: struct_size = 0
    integer(c_size_t) :: num_threads = 0
    integer(c_size_t) :: numa_count = 0
    integer(c_size_t) :: cores_per_numa = 0
  end type td_instance_request

  !> A custom reduction (values of value_size bytes, init and join as c_funloc of bind(c)
  !> procedures with the interfaces taskdag_reducer_init and taskdag_reducer_join); start from
  !> td_reducer_init().
  type, bind(c), public :: td_reducer
    integer(c_size_t) :: struct_size = 0
    integer(c_size_t) :: value_size = 0
    type(c_funptr) :: init = c_null_funptr
    type(c_funptr) :: join = c_null_funptr
    type(c_ptr) :: user = c_null_ptr
  end type td_reducer

  public :: td_range_policy_init, td_team_policy_init, td_instance_request_init, td_reducer_init
  public :: td_space_serial, td_space_threads, td_space_retain, td_space_release, td_space_kind
  public :: td_space_concurrency, td_space_mask, td_space_thread_pool_size, td_space_fence
  public :: td_space_run_instances, td_thread_pool_rank, td_hardware_thread_id
  public :: td_max_hardware_threads, td_in_parallel
  public :: td_parallel_for, td_parallel_reduce, td_parallel_reduce_custom, td_parallel_scan
  public :: td_parallel_scan_custom, td_parallel_team
  public :: td_team_rank, td_team_size, td_team_league_rank, td_team_league_size, td_team_barrier
  public :: td_team_reduce, td_team_reduce_custom, td_team_scan, td_team_broadcast
  public :: td_team_scratch, td_team_parallel_for, td_team_parallel_reduce

  ! The C functions; see taskdag.h for ownership, thread safety and statuses. Callbacks are
  ! type(c_funptr) (c_funloc of a bind(c) procedure).
  interface
    function td_space_serial(out) bind(c, name="td_space_serial") result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_space_serial

    function td_space_threads(out) bind(c, name="td_space_threads") result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_space_threads

    function td_space_retain(space) bind(c, name="td_space_retain") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: space
      integer(c_int) :: status
    end function td_space_retain

    function td_space_release(space) bind(c, name="td_space_release") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: space
      integer(c_int) :: status
    end function td_space_release

    function td_space_kind(space, out) bind(c, name="td_space_kind") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: space
      integer(c_int), intent(inout) :: out
      integer(c_int) :: status
    end function td_space_kind

    function td_space_concurrency(space, out) bind(c, name="td_space_concurrency") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: space
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_space_concurrency

    function td_space_mask(space, fraction, out) bind(c, name="td_space_mask") result(status)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: space
      real(c_double), value :: fraction
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_space_mask

    function td_space_thread_pool_size(space, depth, out) &
        bind(c, name="td_space_thread_pool_size") result(status)
      import :: c_int, c_ptr, c_int32_t, c_size_t
      type(c_ptr), value :: space
      integer(c_int32_t), value :: depth
      integer(c_size_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_space_thread_pool_size

    function td_space_fence(space) bind(c, name="td_space_fence") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: space
      integer(c_int) :: status
    end function td_space_fence

    function td_space_run_instances(space, requests, count, control, user) &
        bind(c, name="td_space_run_instances") result(status)
      import :: c_int, c_ptr, c_size_t, c_funptr, td_instance_request
      type(c_ptr), value :: space
      type(td_instance_request), intent(in) :: requests(*)
      integer(c_size_t), value :: count
      type(c_funptr), value :: control
      type(c_ptr), value :: user
      integer(c_int) :: status
    end function td_space_run_instances

    function td_thread_pool_rank() bind(c, name="td_thread_pool_rank") result(rank)
      import :: c_int64_t
      integer(c_int64_t) :: rank
    end function td_thread_pool_rank

    function td_hardware_thread_id() bind(c, name="td_hardware_thread_id") result(id)
      import :: c_int64_t
      integer(c_int64_t) :: id
    end function td_hardware_thread_id

    function td_max_hardware_threads() bind(c, name="td_max_hardware_threads") result(n)
      import :: c_size_t
      integer(c_size_t) :: n
    end function td_max_hardware_threads

    function td_in_parallel() bind(c, name="td_in_parallel") result(inside)
      import :: c_int
      integer(c_int) :: inside
    end function td_in_parallel

    function td_parallel_for(space, policy, body, user) bind(c, name="td_parallel_for") &
        result(status)
      import :: c_int, c_ptr, c_funptr, td_range_policy
      type(c_ptr), value :: space
      type(td_range_policy), intent(in) :: policy
      type(c_funptr), value :: body
      type(c_ptr), value :: user
      integer(c_int) :: status
    end function td_parallel_for

    function td_parallel_reduce(space, policy, body, user, op, scalar_type, result_value) &
        bind(c, name="td_parallel_reduce") result(status)
      import :: c_int, c_ptr, c_funptr, c_int32_t, td_range_policy
      type(c_ptr), value :: space
      type(td_range_policy), intent(in) :: policy
      type(c_funptr), value :: body
      type(c_ptr), value :: user
      integer(c_int32_t), value :: op, scalar_type
      type(c_ptr), value :: result_value
      integer(c_int) :: status
    end function td_parallel_reduce

    function td_parallel_reduce_custom(space, policy, body, user, reducer, result_value) &
        bind(c, name="td_parallel_reduce_custom") result(status)
      import :: c_int, c_ptr, c_funptr, td_range_policy, td_reducer
      type(c_ptr), value :: space
      type(td_range_policy), intent(in) :: policy
      type(c_funptr), value :: body
      type(c_ptr), value :: user
      type(td_reducer), intent(in) :: reducer
      type(c_ptr), value :: result_value
      integer(c_int) :: status
    end function td_parallel_reduce_custom

    function td_parallel_scan(space, policy, body, user, op, scalar_type, total) &
        bind(c, name="td_parallel_scan") result(status)
      import :: c_int, c_ptr, c_funptr, c_int32_t, td_range_policy
      type(c_ptr), value :: space
      type(td_range_policy), intent(in) :: policy
      type(c_funptr), value :: body
      type(c_ptr), value :: user
      integer(c_int32_t), value :: op, scalar_type
      type(c_ptr), value :: total
      integer(c_int) :: status
    end function td_parallel_scan

    function td_parallel_scan_custom(space, policy, body, user, reducer, total) &
        bind(c, name="td_parallel_scan_custom") result(status)
      import :: c_int, c_ptr, c_funptr, td_range_policy, td_reducer
      type(c_ptr), value :: space
      type(td_range_policy), intent(in) :: policy
      type(c_funptr), value :: body
      type(c_ptr), value :: user
      type(td_reducer), intent(in) :: reducer
      type(c_ptr), value :: total
      integer(c_int) :: status
    end function td_parallel_scan_custom

    function td_parallel_team(space, policy, body, user) bind(c, name="td_parallel_team") &
        result(status)
      import :: c_int, c_ptr, c_funptr, td_team_policy
      type(c_ptr), value :: space
      type(td_team_policy), intent(in) :: policy
      type(c_funptr), value :: body
      type(c_ptr), value :: user
      integer(c_int) :: status
    end function td_parallel_team

    function td_team_rank(team) bind(c, name="td_team_rank") result(rank)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: team
      integer(c_int64_t) :: rank
    end function td_team_rank

    function td_team_size(team) bind(c, name="td_team_size") result(size)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: team
      integer(c_int64_t) :: size
    end function td_team_size

    function td_team_league_rank(team) bind(c, name="td_team_league_rank") result(rank)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: team
      integer(c_int64_t) :: rank
    end function td_team_league_rank

    function td_team_league_size(team) bind(c, name="td_team_league_size") result(size)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: team
      integer(c_int64_t) :: size
    end function td_team_league_size

    function td_team_barrier(team) bind(c, name="td_team_barrier") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: team
      integer(c_int) :: status
    end function td_team_barrier

    function td_team_reduce(team, op, scalar_type, value) bind(c, name="td_team_reduce") &
        result(status)
      import :: c_int, c_ptr, c_int32_t
      type(c_ptr), value :: team
      integer(c_int32_t), value :: op, scalar_type
      type(c_ptr), value :: value
      integer(c_int) :: status
    end function td_team_reduce

    function td_team_reduce_custom(team, reducer, value) bind(c, name="td_team_reduce_custom") &
        result(status)
      import :: c_int, c_ptr, td_reducer
      type(c_ptr), value :: team
      type(td_reducer), intent(in) :: reducer
      type(c_ptr), value :: value
      integer(c_int) :: status
    end function td_team_reduce_custom

    function td_team_scan(team, op, scalar_type, inclusive, value, total) bind(c, name="td_team_scan") &
        result(status)
      import :: c_int, c_ptr, c_int32_t
      type(c_ptr), value :: team
      integer(c_int32_t), value :: op, scalar_type
      integer(c_int), value :: inclusive
      type(c_ptr), value :: value, total
      integer(c_int) :: status
    end function td_team_scan

    function td_team_broadcast(team, value, bytes, root) bind(c, name="td_team_broadcast") &
        result(status)
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: team
      type(c_ptr), value :: value
      integer(c_size_t), value :: bytes
      integer(c_int64_t), value :: root
      integer(c_int) :: status
    end function td_team_broadcast

    !> Team scratch memory; `bytes` (optional, C: NULL) receives its size.
    function td_team_scratch(team, bytes) bind(c, name="td_team_scratch") result(memory)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: team
      integer(c_size_t), intent(inout), optional :: bytes
      type(c_ptr) :: memory
    end function td_team_scratch

    function td_team_parallel_for(team, begin, end, body, user) &
        bind(c, name="td_team_parallel_for") result(status)
      import :: c_int, c_ptr, c_int64_t, c_funptr
      type(c_ptr), value :: team
      integer(c_int64_t), value :: begin, end
      type(c_funptr), value :: body
      type(c_ptr), value :: user
      integer(c_int) :: status
    end function td_team_parallel_for

    function td_team_parallel_reduce(team, begin, end, body, user, op, scalar_type, result_value) &
        bind(c, name="td_team_parallel_reduce") result(status)
      import :: c_int, c_ptr, c_int64_t, c_funptr, c_int32_t
      type(c_ptr), value :: team
      integer(c_int64_t), value :: begin, end
      type(c_funptr), value :: body
      type(c_ptr), value :: user
      integer(c_int32_t), value :: op, scalar_type
      type(c_ptr), value :: result_value
      integer(c_int) :: status
    end function td_team_parallel_reduce
  end interface

  ! The interfaces of user callbacks: write bind(c) procedures with these arguments.
  public :: taskdag_range_body, taskdag_reduce_body_int32, taskdag_reduce_body_int64
  public :: taskdag_reduce_body_real32, taskdag_reduce_body_real64, taskdag_scan_body
  public :: taskdag_team_body, taskdag_instance_body, taskdag_reducer_init, taskdag_reducer_join

  abstract interface
    !> A parallel_for body: handles indices begin .. end-1.
    subroutine taskdag_range_body(begin, end, user) bind(c)
      import :: c_int64_t, c_ptr
      integer(c_int64_t), value :: begin, end
      type(c_ptr), value :: user
    end subroutine taskdag_range_body

    !> A parallel_reduce body: folds indices begin .. end-1 into `acc` (this thread's value).
    subroutine taskdag_reduce_body_int32(begin, end, acc, user) bind(c)
      import :: c_int64_t, c_int32_t, c_ptr
      integer(c_int64_t), value :: begin, end
      integer(c_int32_t), intent(inout) :: acc
      type(c_ptr), value :: user
    end subroutine taskdag_reduce_body_int32

    subroutine taskdag_reduce_body_int64(begin, end, acc, user) bind(c)
      import :: c_int64_t, c_ptr
      integer(c_int64_t), value :: begin, end
      integer(c_int64_t), intent(inout) :: acc
      type(c_ptr), value :: user
    end subroutine taskdag_reduce_body_int64

    subroutine taskdag_reduce_body_real32(begin, end, acc, user) bind(c)
      import :: c_int64_t, c_float, c_ptr
      integer(c_int64_t), value :: begin, end
      real(c_float), intent(inout) :: acc
      type(c_ptr), value :: user
    end subroutine taskdag_reduce_body_real32

    subroutine taskdag_reduce_body_real64(begin, end, acc, user) bind(c)
      import :: c_int64_t, c_double, c_ptr
      integer(c_int64_t), value :: begin, end
      real(c_double), intent(inout) :: acc
      type(c_ptr), value :: user
    end subroutine taskdag_reduce_body_real64

    !> A td_parallel_scan body (C API): `update` points to the running value.
    subroutine taskdag_scan_body(begin, end, update, final_pass, user) bind(c)
      import :: c_int64_t, c_int, c_ptr
      integer(c_int64_t), value :: begin, end
      type(c_ptr), value :: update
      integer(c_int), value :: final_pass
      type(c_ptr), value :: user
    end subroutine taskdag_scan_body

    !> A parallel_team body: runs on every member; wrap `team` with taskdag_team_member(team).
    subroutine taskdag_team_body(team, user) bind(c)
      import :: c_ptr
      type(c_ptr), value :: team, user
    end subroutine taskdag_team_body

    !> A run_instances control function: `instance` is borrowed (`call mine%retain(instance)`
    !> makes a taskdag_space of it); `index` counts from 0.
    subroutine taskdag_instance_body(instance, index, user) bind(c)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: instance
      integer(c_size_t), value :: index
      type(c_ptr), value :: user
    end subroutine taskdag_instance_body

    !> td_reducer%init: writes the identity into `value`.
    subroutine taskdag_reducer_init(value, user) bind(c)
      import :: c_ptr
      type(c_ptr), value :: value, user
    end subroutine taskdag_reducer_init

    !> td_reducer%join: dst = dst (+) src.
    subroutine taskdag_reducer_join(dst, src, user) bind(c)
      import :: c_ptr
      type(c_ptr), value :: dst, src, user
    end subroutine taskdag_reducer_join
  end interface

  public :: taskdag_team_member, taskdag_in_parallel

  !> An execution space instance (td_space): serial() for the Serial space, threads() for the
  !> root instance of the Threads space (its control thread is the one that initialized the
  !> runtime; only it may dispatch). Holds one reference; assignment shares it.
  !>
  !>   type(taskdag_space) :: space
  !>   call space%threads()
  !>   call space%parallel_for(0_int64, n, axpy_body, c_loc(data))
  !>   call space%parallel_reduce(0_int64, n, dot_body, TD_REDUCE_SUM, dot, c_loc(data))
  !>   call space%release()
  type, public :: taskdag_space
    type(c_ptr), private :: handle = c_null_ptr
  contains
    procedure :: serial => space_serial
    procedure :: threads => space_threads
    procedure :: retain => space_retain
    procedure :: concurrency => space_concurrency
    procedure :: kind => space_kind
    procedure :: mask => space_mask
    procedure :: fence => space_fence
    procedure :: parallel_for => space_parallel_for
    generic :: parallel_reduce => space_reduce_int32, space_reduce_int64, space_reduce_real32, &
                                  space_reduce_real64
    procedure :: parallel_team => space_parallel_team
    procedure :: run_instances => space_run_instances
    procedure :: release => space_release
    procedure :: is_created => space_is_created
    procedure :: c_handle => space_c_handle
    generic :: assignment(=) => space_assign
    procedure, private :: space_reduce_int32, space_reduce_int64, space_reduce_real32
    procedure, private :: space_reduce_real64, space_assign
    final :: space_finalize
  end type taskdag_space

  !> One member of a thread team, inside a parallel_team body: member = taskdag_team_member(team).
  !> Borrowed: valid during the body, on its thread. Collectives (barrier, reduce, scan,
  !> broadcast, parallel_for, parallel_reduce) must be called by every member, in the same order.
  type, public :: taskdag_team
    type(c_ptr), private :: handle = c_null_ptr
  contains
    procedure :: rank => team_rank
    procedure :: size => team_size
    procedure :: league_rank => team_league_rank
    procedure :: league_size => team_league_size
    procedure :: barrier => team_barrier
    generic :: reduce => team_reduce_int32, team_reduce_int64, team_reduce_real32, &
                         team_reduce_real64
    generic :: scan => team_scan_int32, team_scan_int64, team_scan_real32, team_scan_real64
    generic :: broadcast => team_broadcast_int32, team_broadcast_int64, team_broadcast_real32, &
                            team_broadcast_real64
    procedure :: scratch => team_scratch
    procedure :: parallel_for => team_parallel_for
    generic :: parallel_reduce => team_preduce_int32, team_preduce_int64, team_preduce_real32, &
                                  team_preduce_real64
    procedure, private :: team_reduce_int32, team_reduce_int64, team_reduce_real32
    procedure, private :: team_reduce_real64, team_scan_int32, team_scan_int64
    procedure, private :: team_scan_real32, team_scan_real64, team_broadcast_int32
    procedure, private :: team_broadcast_int64, team_broadcast_real32, team_broadcast_real64
    procedure, private :: team_preduce_int32, team_preduce_int64, team_preduce_real32
    procedure, private :: team_preduce_real64
  end type taskdag_team


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
    integer(c_int64_t) :: workers_sat_out = 0
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
  public :: td_task_respawn_when_all, td_task_respawn_when_all_private

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

    !> Runs the task again once all `count` futures have completed (c_null_ptr elements are
    !> skipped) at `priority`: td_task_respawn on their td_when_all in one call, no future made.
    !> With several workers it may first run, nested, the elements this worker runs next.
    function td_task_respawn_when_all(ctx, futures, count, priority) &
        bind(c, name="td_task_respawn_when_all") result(status)
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr), intent(in) :: futures(*)
      integer(c_int), value :: count
      integer(c_int32_t), value :: priority
      integer(c_int) :: status
    end function td_task_respawn_when_all

    !> td_task_respawn_when_all with a promise: until the call returns, no other task uses these
    !> futures through the caller's references (a task with a reference of its own may). With
    !> several workers the elements run ahead then complete without an atomic read-modify-write.
    function td_task_respawn_when_all_private(ctx, futures, count, priority) &
        bind(c, name="td_task_respawn_when_all_private") result(status)
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr), intent(in) :: futures(*)
      integer(c_int), value :: count
      integer(c_int32_t), value :: priority
      integer(c_int) :: status
    end function td_task_respawn_when_all_private

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
  public :: taskdag_task_respawn_when_all, taskdag_task_respawn_when_all_private
  public :: taskdag_future_int64, taskdag_future_release

  ! ==========================================================================================
  ! Work graph: the static work-DAG of 000 §2.4 and §3.3 (td_crs, td_work_graph)
  !
  ! Indices. taskdag counts items from 0 (C); Fortran programs usually count from 1. The
  ! idiomatic layer converts at the boundary so a Fortran program never sees a 0-based index:
  !  * taskdag_crs%create_one_based(row_map, entries): row_map(1) = 1, row_map(n+1) = nz + 1,
  !    and the entries of row i (items that execute after item i) are in 1..n;
  !  * taskdag_crs%row_map(one_based=.true.), %entries(one_based=.true.) read them back so;
  !  * taskdag_work_graph%run calls the work procedure with the 1-based item number.
  ! taskdag_crs%create takes 0-based arrays unchanged, and the td_* interfaces are the C API.
  ! ==========================================================================================

  public :: td_crs_create, td_crs_transpose, td_crs_retain, td_crs_release, td_crs_num_rows
  public :: td_crs_num_entries, td_crs_export, td_work_graph_create, td_work_graph_run
  public :: td_work_graph_num_items, td_work_graph_retain, td_work_graph_release

  interface
    !> Creates a graph from 0-based offsets (num_rows + 1) and entries (num_entries).
    function td_crs_create(num_rows, row_map, num_entries, entries, out) &
        bind(c, name="td_crs_create") result(status)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), value :: num_rows
      integer(c_int64_t), intent(in) :: row_map(*)
      integer(c_int64_t), value :: num_entries
      integer(c_int64_t), intent(in) :: entries(*)
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_crs_create

    !> Creates the transpose of a graph.
    function td_crs_transpose(crs, out) bind(c, name="td_crs_transpose") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: crs
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_crs_transpose

    !> Adds a reference to a graph.
    function td_crs_retain(crs) bind(c, name="td_crs_retain") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: crs
      integer(c_int) :: status
    end function td_crs_retain

    !> Releases one reference to a graph; c_null_ptr is a no-op.
    function td_crs_release(crs) bind(c, name="td_crs_release") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: crs
      integer(c_int) :: status
    end function td_crs_release

    !> Number of rows (work items).
    function td_crs_num_rows(crs, out) bind(c, name="td_crs_num_rows") result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: crs
      integer(c_int64_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_crs_num_rows

    !> Number of entries (dependences).
    function td_crs_num_entries(crs, out) bind(c, name="td_crs_num_entries") result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: crs
      integer(c_int64_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_crs_num_entries

    !> Copies the 0-based arrays out; either pointer may be c_null_ptr.
    function td_crs_export(crs, row_map, row_map_len, entries, entries_len) &
        bind(c, name="td_crs_export") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: crs
      type(c_ptr), value :: row_map
      integer(c_size_t), value :: row_map_len
      type(c_ptr), value :: entries
      integer(c_size_t), value :: entries_len
      integer(c_int) :: status
    end function td_crs_export

    !> Plans a work graph; `priorities` is c_null_ptr or points to one td_priority per item.
    function td_work_graph_create(graph, priorities, out) &
        bind(c, name="td_work_graph_create") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: graph
      type(c_ptr), value :: priorities
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_work_graph_create

    !> Runs a work graph: work_fn is a bind(c) subroutine (integer(c_int64_t), value :: i
    !> (0-based); type(c_ptr), value :: user), passed with c_funloc.
    function td_work_graph_run(plan, space, work_fn, user) bind(c, name="td_work_graph_run") &
        result(status)
      import :: c_funptr, c_int, c_ptr
      type(c_ptr), value :: plan
      type(c_ptr), value :: space
      type(c_funptr), value :: work_fn
      type(c_ptr), value :: user
      integer(c_int) :: status
    end function td_work_graph_run

    !> Number of work items of a plan.
    function td_work_graph_num_items(plan, out) bind(c, name="td_work_graph_num_items") &
        result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(inout) :: out
      integer(c_int) :: status
    end function td_work_graph_num_items

    !> Adds a reference to a plan.
    function td_work_graph_retain(plan) bind(c, name="td_work_graph_retain") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: status
    end function td_work_graph_retain

    !> Releases one reference to a plan; c_null_ptr is a no-op.
    function td_work_graph_release(plan) bind(c, name="td_work_graph_release") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: status
    end function td_work_graph_release

  end interface

  !> The work procedure of taskdag_work_graph%run: called once for every item `i` (1-based),
  !> after the items it executes after, concurrently on the space's threads. Declare it
  !> `recursive` (or compile with -frecursive or -fopenmp) so its local variables are per call.
  abstract interface
    subroutine taskdag_work_item(i, user)
      import :: c_ptr, int64
      integer(int64), intent(in) :: i
      type(c_ptr), intent(in) :: user
    end subroutine taskdag_work_item
  end interface
  public :: taskdag_work_item

  !> A graph in compressed row storage: row i lists the items that execute after item i.
  !> Holds one reference to a td_crs; assignment shares it, as for taskdag_pool.
  !>
  !>   type(taskdag_crs) :: graph
  !>   call graph%create_one_based([1, 3, 4, 5, 5], [2, 3, 4, 4])   ! 1 before 2, 3; both before 4
  type, public :: taskdag_crs
    type(c_ptr), private :: handle = c_null_ptr
  contains
    generic :: create => crs_create_int32, crs_create_int64
    generic :: create_one_based => crs_create_one_based_int32, crs_create_one_based_int64
    procedure :: create_transpose => crs_create_transpose
    procedure :: num_rows => crs_num_rows
    procedure :: num_entries => crs_num_entries
    procedure :: row_map => crs_row_map
    procedure :: entries => crs_entries
    procedure :: release => crs_release
    procedure :: is_created => crs_is_created
    procedure :: c_handle => crs_c_handle
    generic :: assignment(=) => crs_assign
    procedure, private :: crs_create_int32, crs_create_int64
    procedure, private :: crs_create_one_based_int32, crs_create_one_based_int64
    procedure, private :: crs_assign
    final :: crs_finalize
  end type taskdag_crs

  !> A planned work graph: created once from a taskdag_crs, run any number of times.
  !>
  !>   type(taskdag_work_graph) :: plan
  !>   call plan%create(graph)
  !>   call plan%run(work, c_loc(data))     ! work(i, user) for i = 1..n, in dependence order
  type, public :: taskdag_work_graph
    type(c_ptr), private :: handle = c_null_ptr
  contains
    procedure :: create => work_graph_create
    procedure :: run => work_graph_run
    procedure :: num_items => work_graph_num_items
    procedure :: release => work_graph_release
    procedure :: is_created => work_graph_is_created
    procedure :: c_handle => work_graph_c_handle
    generic :: assignment(=) => work_graph_assign
    procedure, private :: work_graph_assign
    final :: work_graph_finalize
  end type taskdag_work_graph

  !> What the C work function of a Fortran run receives: the Fortran procedure and its data.
  type :: work_graph_closure
    procedure(taskdag_work_item), pointer, nopass :: work => null()
    type(c_ptr) :: user = c_null_ptr
  end type work_graph_closure

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

  !> Starts the runtime with `num_threads` host threads (default 0: one per core) whose idle
  !> workers spin `idle_spin_us` microseconds before they sleep (default -1: the library's).
  subroutine taskdag_initialize(num_threads, stat, idle_spin_us)
    integer, intent(in), optional :: num_threads
    integer, intent(out), optional :: stat
    integer(c_int64_t), intent(in), optional :: idle_spin_us
    type(td_init_args) :: args

    args = td_init_args_init()
    if (present(num_threads)) args%num_threads = int(num_threads, c_int)
    if (present(idle_spin_us)) args%idle_spin_us = idle_spin_us
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
  !> optional sizes; 0 or absent = default; `thread_cache` = .false. turns the per-thread caches
  !> of freed blocks off). Releases the pool this variable held before.
  subroutine pool_create_int64(this, min_total_alloc_size, min_block_alloc_size, &
                               max_block_alloc_size, min_superblock_size, stat, memory_space, &
                               thread_cache)
    class(taskdag_pool), intent(inout) :: this
    integer(int64), intent(in) :: min_total_alloc_size
    integer(int64), intent(in), optional :: min_block_alloc_size, max_block_alloc_size, &
                                            min_superblock_size
    integer, intent(out), optional :: stat
    integer(c_int32_t), intent(in), optional :: memory_space
    logical, intent(in), optional :: thread_cache
    type(td_pool_args) :: args
    type(c_ptr) :: created
    integer(c_int) :: status

    args = td_pool_args_init()
    args%min_total_alloc_size = int(min_total_alloc_size, c_size_t)
    if (present(min_block_alloc_size)) args%min_block_alloc_size = int(min_block_alloc_size, c_size_t)
    if (present(max_block_alloc_size)) args%max_block_alloc_size = int(max_block_alloc_size, c_size_t)
    if (present(min_superblock_size)) args%min_superblock_size = int(min_superblock_size, c_size_t)
    if (present(memory_space)) args%memory_space = memory_space
    if (present(thread_cache)) args%thread_cache = merge(1_c_int, 0_c_int, thread_cache)
    status = td_pool_create(args, created)
    if (status == TD_OK) then
      call this%release()
      this%handle = created
    end if
    call report(status, stat)
  end subroutine pool_create_int64

  subroutine pool_create_int32(this, min_total_alloc_size, min_block_alloc_size, &
                               max_block_alloc_size, min_superblock_size, stat, memory_space, &
                               thread_cache)
    class(taskdag_pool), intent(inout) :: this
    integer(int32), intent(in) :: min_total_alloc_size
    integer(int32), intent(in), optional :: min_block_alloc_size, max_block_alloc_size, &
                                            min_superblock_size
    integer, intent(out), optional :: stat
    integer(c_int32_t), intent(in), optional :: memory_space
    logical, intent(in), optional :: thread_cache
    integer(int64) :: min_block, max_block, superblock

    ! Absent sizes are passed as 0, which td_pool_create reads as "default".
    min_block = 0
    max_block = 0
    superblock = 0
    if (present(min_block_alloc_size)) min_block = min_block_alloc_size
    if (present(max_block_alloc_size)) max_block = max_block_alloc_size
    if (present(min_superblock_size)) superblock = min_superblock_size
    call pool_create_int64(this, int(min_total_alloc_size, int64), min_block, max_block, &
                           superblock, stat, memory_space, thread_cache)
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

  !> Frees every block of a TD_SPACE_CUDA pool at once and zeroes its statistics (td_pool_reset).
  !> No kernel may use the pool meanwhile. A host pool is misuse (TD_ERROR_INVALID_ARGUMENT).
  subroutine pool_reset(this, stat)
    class(taskdag_pool), intent(inout) :: this
    integer, intent(out), optional :: stat

    call report(td_pool_reset(this%handle), stat)
  end subroutine pool_reset

  !> Returns the blocks in the calling thread's cache to the pool, so other threads can allocate
  !> them (td_pool_flush_thread_cache).
  subroutine pool_flush_thread_cache(this, stat)
    class(taskdag_pool), intent(inout) :: this
    integer, intent(out), optional :: stat

    call report(td_pool_flush_thread_cache(this%handle), stat)
  end subroutine pool_flush_thread_cache

  !> True when TD_SPACE_CUDA can be used: built with CUDA support, a driver and a device.
  logical function taskdag_cuda_available()
    taskdag_cuda_available = td_cuda_available() /= 0
  end function taskdag_cuda_available

  !> Number of CUDA devices the driver reports; 0 without a driver or device.
  function taskdag_cuda_device_count() result(count)
    integer :: count
    integer(c_int) :: out

    out = 0
    call report(td_cuda_device_count(out))
    count = int(out)
  end function taskdag_cuda_device_count

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
  ! Views (td_view): procedures
  ! ==========================================================================================

  !> TD_VIEW_ARGS_INIT: host LayoutRight defaults with struct_size set.
  function td_view_args_init() result(args)
    type(td_view_args) :: args
    args = td_view_args()
    args%struct_size = c_sizeof(args)
  end function td_view_args_init

  !> `text` with a NUL appended, for C.
  function c_string(text) result(chars)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=:), allocatable :: chars

    chars = text//c_null_char
  end function c_string

  !> Stops with `message` (no stat), or stores `status` in `stat`: for failures found on the
  !> Fortran side, which td_last_error_message does not know.
  subroutine report_here(status, message, stat)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: message
    integer, intent(out), optional :: stat

    if (present(stat)) then
      stat = int(status)
    else if (status /= TD_OK) then
      error stop 'taskdag: '//message
    end if
  end subroutine report_here

  !> Makes `this` hold `handle` (one reference, owned), releasing what it held.
  subroutine view_take(this, handle)
    class(taskdag_view), intent(inout) :: this
    type(c_ptr), intent(in) :: handle
    integer(c_int) :: status

    status = td_view_release(this%handle)
    this%handle = handle
  end subroutine view_take

  !> Allocates a zero-filled view of `extents` (Fortran order: extents(1) is the first
  !> dimension) with elements of `element_type` (TD_ELEMENT_*; for TD_ELEMENT_OPAQUE also
  !> `element_size` bytes). `layout` defaults to TD_LAYOUT_LEFT; `flags` takes TD_VIEW_NO_INIT
  !> and TD_VIEW_PAD. Releases the view this variable held before.
  subroutine view_create_int64(this, label, element_type, extents, layout, flags, element_size, &
                               stat)
    class(taskdag_view), intent(inout) :: this
    character(len=*), intent(in) :: label
    integer(c_int32_t), intent(in) :: element_type
    integer(int64), intent(in) :: extents(:)
    integer(c_int32_t), intent(in), optional :: layout, flags
    integer(int64), intent(in), optional :: element_size
    integer, intent(out), optional :: stat
    type(td_view_args) :: args
    character(kind=c_char, len=:), allocatable, target :: c_label
    type(c_ptr) :: created
    integer(c_int) :: status

    if (size(extents) > TD_VIEW_MAX_RANK) then
      call report_here(TD_ERROR_INVALID_ARGUMENT, 'view "'//label//'": rank '// &
                       itoa(int(size(extents), int64))//' exceeds the maximum rank 8', stat)
      return
    end if
    c_label = c_string(label)
    args = td_view_args_init()
    args%element_type = element_type
    args%rank = int(size(extents), c_int)
    args%extents(1:size(extents)) = int(extents, c_size_t)
    args%layout = TD_LAYOUT_LEFT
    if (present(layout)) args%layout = layout
    if (present(flags)) args%flags = flags
    if (present(element_size)) args%element_size = int(element_size, c_size_t)
    args%label = c_loc(c_label)
    created = c_null_ptr
    status = td_view_create(args, created)
    if (status == TD_OK) call view_take(this, created)
    call report(status, stat)
  end subroutine view_create_int64

  subroutine view_create_int32(this, label, element_type, extents, layout, flags, element_size, &
                               stat)
    class(taskdag_view), intent(inout) :: this
    character(len=*), intent(in) :: label
    integer(c_int32_t), intent(in) :: element_type
    integer(int32), intent(in) :: extents(:)
    integer(c_int32_t), intent(in), optional :: layout, flags
    integer(int32), intent(in), optional :: element_size
    integer, intent(out), optional :: stat

    if (present(element_size)) then
      call view_create_int64(this, label, element_type, int(extents, int64), layout, flags, &
                             int(element_size, int64), stat)
    else
      call view_create_int64(this, label, element_type, int(extents, int64), layout, flags, &
                             stat=stat)
    end if
  end subroutine view_create_int32

  !> Decimal text of `n`.
  function itoa(n) result(text)
    integer(int64), intent(in) :: n
    character(len=:), allocatable :: text
    character(len=24) :: buffer

    write (buffer, '(i0)') n
    text = trim(buffer)
  end function itoa

  !> Wraps the contiguous array at `data` of `shape` as an unmanaged TD_LAYOUT_LEFT view.
  subroutine view_wrap_address(this, data, element_type, shape, is_contiguous, label, stat)
    class(taskdag_view), intent(inout) :: this
    type(c_ptr), intent(in) :: data
    integer(c_int32_t), intent(in) :: element_type
    integer(int64), intent(in) :: shape(:)
    logical, intent(in) :: is_contiguous
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat
    type(td_view_args) :: args
    character(kind=c_char, len=:), allocatable, target :: c_label
    type(c_ptr) :: created
    integer(c_int) :: status

    if (.not. is_contiguous) then
      call report_here(TD_ERROR_INVALID_ARGUMENT, 'view "'//label//'": wrap needs a contiguous '// &
                       'array (a whole array, not a strided section); copy the section first', stat)
      return
    end if
    c_label = c_string(label)
    args = td_view_args_init()
    args%element_type = element_type
    args%rank = int(size(shape), c_int)
    args%extents(1:size(shape)) = int(shape, c_size_t)
    args%layout = TD_LAYOUT_LEFT
    args%label = c_loc(c_label)
    created = c_null_ptr
    status = td_view_wrap(args, data, created)
    if (status == TD_OK) call view_take(this, created)
    call report(status, stat)
  end subroutine view_wrap_address

  !> Makes this variable an unmanaged view of `array` (real64, rank 1), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_real64_1(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    real(real64), intent(inout), target :: array(:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_DOUBLE, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_real64_1

  !> Makes this variable an unmanaged view of `array` (real64, rank 2), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_real64_2(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    real(real64), intent(inout), target :: array(:,:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_DOUBLE, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_real64_2

  !> Makes this variable an unmanaged view of `array` (real64, rank 3), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_real64_3(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    real(real64), intent(inout), target :: array(:,:,:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_DOUBLE, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_real64_3

  !> Makes this variable an unmanaged view of `array` (int32, rank 1), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_int32_1(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int32), intent(inout), target :: array(:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_INT32, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_int32_1

  !> Makes this variable an unmanaged view of `array` (int32, rank 2), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_int32_2(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int32), intent(inout), target :: array(:,:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_INT32, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_int32_2

  !> Makes this variable an unmanaged view of `array` (int32, rank 3), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_int32_3(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int32), intent(inout), target :: array(:,:,:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_INT32, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_int32_3

  !> Makes this variable an unmanaged view of `array` (int64, rank 1), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_int64_1(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int64), intent(inout), target :: array(:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_INT64, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_int64_1

  !> Makes this variable an unmanaged view of `array` (int64, rank 2), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_int64_2(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int64), intent(inout), target :: array(:,:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_INT64, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_int64_2

  !> Makes this variable an unmanaged view of `array` (int64, rank 3), without copying: the
  !> view's element (i1, ...) (0-based in C) is array(i1 + 1, ...). `array` must be contiguous,
  !> have the target attribute, and outlive the view and every view made from it.
  subroutine view_wrap_int64_3(this, array, label, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int64), intent(inout), target :: array(:,:,:)
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: stat

    call view_wrap_address(this, c_loc(array), TD_ELEMENT_INT64, int(shape(array), int64), &
                           is_contiguous(array), label, stat)
  end subroutine view_wrap_int64_3

  !> The data address, extents and strides of `this` if it has `element_type`, rank `rank` and
  !> a column-major form a Fortran pointer can express; else reports why and returns false.
  function view_fortran_shape(this, element_type, rank, extents, strides, data, stat) result(ok)
    class(taskdag_view), intent(in) :: this
    integer(c_int32_t), intent(in) :: element_type
    integer, intent(in) :: rank
    integer(int64), intent(out) :: extents(rank), strides(rank)
    type(c_ptr), intent(out) :: data
    integer, intent(out), optional :: stat
    logical :: ok
    integer(c_int32_t) :: actual_type, space
    integer(c_int) :: actual_rank, status
    integer(c_size_t) :: value
    integer :: d
    character(len=:), allocatable :: name

    ok = .false.
    data = c_null_ptr
    extents = 0
    strides = 0
    actual_type = 0
    actual_rank = 0
    space = TD_SPACE_HOST
    status = td_view_element_type(this%handle, actual_type)
    if (status == TD_OK) status = td_view_rank(this%handle, actual_rank)
    if (status == TD_OK) status = td_view_memory_space(this%handle, space)
    if (status /= TD_OK) then
      call report(status, stat)
      return
    end if
    name = this%label()
    ! Device memory is not addressable from the host: a Fortran pointer to it would fault on
    ! first use, far from the cause.
    if (space == TD_SPACE_CUDA) then
      call report_here(TD_ERROR_INVALID_ARGUMENT, 'view "'//name//'" lives in device memory '// &
                       '(TD_SPACE_CUDA), which the host cannot address; deep_copy it into a '// &
                       'host view (create_mirror_view) first', stat)
      return
    end if
    if (actual_type /= element_type .or. actual_rank /= rank) then
      call report_here(TD_ERROR_INVALID_ARGUMENT, 'view "'//name//'" has element type '// &
                       itoa(int(actual_type, int64))//' and rank '//itoa(int(actual_rank, int64))// &
                       ', but the pointer has element type '//itoa(int(element_type, int64))// &
                       ' and rank '//itoa(int(rank, int64)), stat)
      return
    end if
    do d = 1, rank
      value = 0
      status = td_view_extent(this%handle, int(d - 1, c_int), value)
      extents(d) = int(value, int64)
      value = 0
      if (status == TD_OK) status = td_view_stride(this%handle, int(d - 1, c_int), value)
      strides(d) = int(value, int64)
      if (status /= TD_OK) then
        call report(status, stat)
        return
      end if
    end do
    ! Column-major with a leading dimension: stride(1) = 1, stride(2) >= extent(1), and each
    ! further stride the product of the previous stride and extent. Rank 1 takes any stride.
    if (rank > 1) then
      ok = strides(1) == 1 .and. strides(2) >= extents(1)
      do d = 3, rank
        ok = ok .and. strides(d) == strides(d - 1) * extents(d - 1)
      end do
      if (.not. ok) then
        call report_here(TD_ERROR_INVALID_ARGUMENT, 'view "'//name//'" is not column-major '// &
                         '(TD_LAYOUT_LEFT), so no Fortran pointer describes it; deep_copy it '// &
                         'into a view created with TD_LAYOUT_LEFT', stat)
        return
      end if
    end if
    status = td_view_data(this%handle, data)
    call report(status, stat)
    ok = status == TD_OK
  end function view_fortran_shape

  !> Points `array` at the view's elements (real64, rank 1; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_real64_1(this, array, stat)
    class(taskdag_view), intent(in) :: this
    real(real64), pointer, intent(out) :: array(:)
    integer, intent(out), optional :: stat
    real(real64), pointer :: whole(:)
    integer(int64) :: e(1), s(1)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_DOUBLE, 1, e, s, data, stat)) return
    call c_f_pointer(data, whole, [(e(1) - 1) * s(1) + 1])
    array => whole(1::s(1))
  end subroutine view_as_array_real64_1

  !> Points `array` at the view's elements (real64, rank 2; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_real64_2(this, array, stat)
    class(taskdag_view), intent(in) :: this
    real(real64), pointer, intent(out) :: array(:,:)
    integer, intent(out), optional :: stat
    real(real64), pointer :: whole(:,:)
    integer(int64) :: e(2), s(2)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_DOUBLE, 2, e, s, data, stat)) return
    ! `whole` spans full columns of the leading dimension s(2); only the section is used.
    call c_f_pointer(data, whole, [s(2), e(2)])
    array => whole(1:e(1), :)
  end subroutine view_as_array_real64_2

  !> Points `array` at the view's elements (real64, rank 3; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_real64_3(this, array, stat)
    class(taskdag_view), intent(in) :: this
    real(real64), pointer, intent(out) :: array(:,:,:)
    integer, intent(out), optional :: stat
    real(real64), pointer :: whole(:,:,:)
    integer(int64) :: e(3), s(3)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_DOUBLE, 3, e, s, data, stat)) return
    ! `whole` spans full columns of the leading dimension s(2); only the section is used.
    call c_f_pointer(data, whole, [s(2), e(2), e(3)])
    array => whole(1:e(1), :, :)
  end subroutine view_as_array_real64_3

  !> Points `array` at the view's elements (int32, rank 1; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_int32_1(this, array, stat)
    class(taskdag_view), intent(in) :: this
    integer(int32), pointer, intent(out) :: array(:)
    integer, intent(out), optional :: stat
    integer(int32), pointer :: whole(:)
    integer(int64) :: e(1), s(1)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_INT32, 1, e, s, data, stat)) return
    call c_f_pointer(data, whole, [(e(1) - 1) * s(1) + 1])
    array => whole(1::s(1))
  end subroutine view_as_array_int32_1

  !> Points `array` at the view's elements (int32, rank 2; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_int32_2(this, array, stat)
    class(taskdag_view), intent(in) :: this
    integer(int32), pointer, intent(out) :: array(:,:)
    integer, intent(out), optional :: stat
    integer(int32), pointer :: whole(:,:)
    integer(int64) :: e(2), s(2)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_INT32, 2, e, s, data, stat)) return
    ! `whole` spans full columns of the leading dimension s(2); only the section is used.
    call c_f_pointer(data, whole, [s(2), e(2)])
    array => whole(1:e(1), :)
  end subroutine view_as_array_int32_2

  !> Points `array` at the view's elements (int32, rank 3; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_int32_3(this, array, stat)
    class(taskdag_view), intent(in) :: this
    integer(int32), pointer, intent(out) :: array(:,:,:)
    integer, intent(out), optional :: stat
    integer(int32), pointer :: whole(:,:,:)
    integer(int64) :: e(3), s(3)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_INT32, 3, e, s, data, stat)) return
    ! `whole` spans full columns of the leading dimension s(2); only the section is used.
    call c_f_pointer(data, whole, [s(2), e(2), e(3)])
    array => whole(1:e(1), :, :)
  end subroutine view_as_array_int32_3

  !> Points `array` at the view's elements (int64, rank 1; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_int64_1(this, array, stat)
    class(taskdag_view), intent(in) :: this
    integer(int64), pointer, intent(out) :: array(:)
    integer, intent(out), optional :: stat
    integer(int64), pointer :: whole(:)
    integer(int64) :: e(1), s(1)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_INT64, 1, e, s, data, stat)) return
    call c_f_pointer(data, whole, [(e(1) - 1) * s(1) + 1])
    array => whole(1::s(1))
  end subroutine view_as_array_int64_1

  !> Points `array` at the view's elements (int64, rank 2; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_int64_2(this, array, stat)
    class(taskdag_view), intent(in) :: this
    integer(int64), pointer, intent(out) :: array(:,:)
    integer, intent(out), optional :: stat
    integer(int64), pointer :: whole(:,:)
    integer(int64) :: e(2), s(2)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_INT64, 2, e, s, data, stat)) return
    ! `whole` spans full columns of the leading dimension s(2); only the section is used.
    call c_f_pointer(data, whole, [s(2), e(2)])
    array => whole(1:e(1), :)
  end subroutine view_as_array_int64_2

  !> Points `array` at the view's elements (int64, rank 3; 1-based: array(1, ...) is the C
  !> element (0, ...)). Nullified on failure (wrong type or rank, not column-major).
  subroutine view_as_array_int64_3(this, array, stat)
    class(taskdag_view), intent(in) :: this
    integer(int64), pointer, intent(out) :: array(:,:,:)
    integer, intent(out), optional :: stat
    integer(int64), pointer :: whole(:,:,:)
    integer(int64) :: e(3), s(3)
    type(c_ptr) :: data

    nullify (array)
    if (.not. view_fortran_shape(this, TD_ELEMENT_INT64, 3, e, s, data, stat)) return
    ! `whole` spans full columns of the leading dimension s(2); only the section is used.
    call c_f_pointer(data, whole, [s(2), e(2), e(3)])
    array => whole(1:e(1), :, :)
  end subroutine view_as_array_int64_3

  !> Writes `value` to every element of a real64 view.
  subroutine view_fill_real64(this, value, stat)
    class(taskdag_view), intent(in) :: this
    real(real64), intent(in), target :: value
    integer, intent(out), optional :: stat
    integer(c_int32_t) :: actual_type
    integer(c_int) :: status

    actual_type = 0
    status = td_view_element_type(this%handle, actual_type)
    if (status == TD_OK .and. actual_type /= TD_ELEMENT_DOUBLE) then
      call report_here(TD_ERROR_INVALID_ARGUMENT, 'view "'//this%label()//'": fill with a real64 '// &
                       'value needs a view of element type '//itoa(int(TD_ELEMENT_DOUBLE, int64))// &
                       ', not '//itoa(int(actual_type, int64)), stat)
      return
    end if
    if (status == TD_OK) status = td_view_fill(this%handle, c_loc(value))
    call report(status, stat)
  end subroutine view_fill_real64

  !> Writes `value` to every element of a int32 view.
  subroutine view_fill_int32(this, value, stat)
    class(taskdag_view), intent(in) :: this
    integer(int32), intent(in), target :: value
    integer, intent(out), optional :: stat
    integer(c_int32_t) :: actual_type
    integer(c_int) :: status

    actual_type = 0
    status = td_view_element_type(this%handle, actual_type)
    if (status == TD_OK .and. actual_type /= TD_ELEMENT_INT32) then
      call report_here(TD_ERROR_INVALID_ARGUMENT, 'view "'//this%label()//'": fill with a int32 '// &
                       'value needs a view of element type '//itoa(int(TD_ELEMENT_INT32, int64))// &
                       ', not '//itoa(int(actual_type, int64)), stat)
      return
    end if
    if (status == TD_OK) status = td_view_fill(this%handle, c_loc(value))
    call report(status, stat)
  end subroutine view_fill_int32

  !> Writes `value` to every element of a int64 view.
  subroutine view_fill_int64(this, value, stat)
    class(taskdag_view), intent(in) :: this
    integer(int64), intent(in), target :: value
    integer, intent(out), optional :: stat
    integer(c_int32_t) :: actual_type
    integer(c_int) :: status

    actual_type = 0
    status = td_view_element_type(this%handle, actual_type)
    if (status == TD_OK .and. actual_type /= TD_ELEMENT_INT64) then
      call report_here(TD_ERROR_INVALID_ARGUMENT, 'view "'//this%label()//'": fill with a int64 '// &
                       'value needs a view of element type '//itoa(int(TD_ELEMENT_INT64, int64))// &
                       ', not '//itoa(int(actual_type, int64)), stat)
      return
    end if
    if (status == TD_OK) status = td_view_fill(this%handle, c_loc(value))
    call report(status, stat)
  end subroutine view_fill_int64

  !> Copies every element of `src` into `dst`: any layouts, equal element types and shapes.
  subroutine taskdag_deep_copy(dst, src, stat)
    type(taskdag_view), intent(in) :: dst, src
    integer, intent(out), optional :: stat

    call report(td_view_deep_copy(dst%handle, src%handle), stat)
  end subroutine taskdag_deep_copy

  !> A subview slice keeping the whole dimension.
  function taskdag_slice_all() result(slice)
    type(td_slice) :: slice

    slice = td_slice(TD_SLICE_ALL, 0, 0)
  end function taskdag_slice_all

  !> A subview slice fixing the dimension at 1-based `index` (the dimension disappears).
  function taskdag_slice_index(index) result(slice)
    integer, intent(in) :: index
    type(td_slice) :: slice

    slice = td_slice(TD_SLICE_INDEX, int(index, c_int64_t) - 1, 0)
  end function taskdag_slice_index

  !> A subview slice keeping 1-based indices first..last (inclusive, like a(first:last)).
  function taskdag_slice_range(first, last) result(slice)
    integer, intent(in) :: first, last
    type(td_slice) :: slice

    slice = td_slice(TD_SLICE_RANGE, int(first, c_int64_t) - 1, int(last, c_int64_t))
  end function taskdag_slice_range

  !> Makes `sub` a view of part of this one: one slice per dimension (taskdag_slice_all,
  !> taskdag_slice_index, taskdag_slice_range). It shares the elements and keeps them alive.
  subroutine view_subview(this, sub, slices, stat)
    class(taskdag_view), intent(in) :: this
    type(taskdag_view), intent(inout) :: sub
    type(td_slice), intent(in) :: slices(:)
    integer, intent(out), optional :: stat
    type(c_ptr) :: created
    integer(c_int) :: status

    created = c_null_ptr
    status = td_view_subview(this%handle, slices, int(size(slices), c_size_t), created)
    if (status == TD_OK) call view_take(sub, created)
    call report(status, stat)
  end subroutine view_subview

  !> Makes `mirror` a new zero-filled host view shaped like this one ("<label>_mirror").
  subroutine view_create_mirror(this, mirror, stat)
    class(taskdag_view), intent(in) :: this
    type(taskdag_view), intent(inout) :: mirror
    integer, intent(out), optional :: stat
    type(c_ptr) :: created
    integer(c_int) :: status

    created = c_null_ptr
    status = td_view_create_mirror(this%handle, created)
    if (status == TD_OK) call view_take(mirror, created)
    call report(status, stat)
  end subroutine view_create_mirror

  !> Makes `mirror` this view itself when it is in host memory, else a new host mirror.
  subroutine view_create_mirror_view(this, mirror, stat)
    class(taskdag_view), intent(in) :: this
    type(taskdag_view), intent(inout) :: mirror
    integer, intent(out), optional :: stat
    type(c_ptr) :: created
    integer(c_int) :: status

    created = c_null_ptr
    status = td_view_create_mirror_view(this%handle, created)
    if (status == TD_OK) call view_take(mirror, created)
    call report(status, stat)
  end subroutine view_create_mirror_view

  !> Reassigns this variable to a new zero-filled array of `extents`, keeping the elements both
  !> shapes share; other variables sharing the old array keep it.
  subroutine view_resize_int64(this, extents, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int64), intent(in) :: extents(:)
    integer, intent(out), optional :: stat

    call report(td_view_resize(this%handle, int(extents, c_size_t), &
                               int(size(extents), c_size_t)), stat)
  end subroutine view_resize_int64

  subroutine view_resize_int32(this, extents, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int32), intent(in) :: extents(:)
    integer, intent(out), optional :: stat

    call view_resize_int64(this, int(extents, int64), stat)
  end subroutine view_resize_int32

  !> Reassigns this variable to a new zero-filled array of `extents`, keeping nothing; the old
  !> array is released first. If the allocation fails, the variable is left empty.
  subroutine view_realloc_int64(this, extents, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int64), intent(in) :: extents(:)
    integer, intent(out), optional :: stat

    call report(td_view_realloc(this%handle, int(extents, c_size_t), &
                                int(size(extents), c_size_t)), stat)
  end subroutine view_realloc_int64

  subroutine view_realloc_int32(this, extents, stat)
    class(taskdag_view), intent(inout) :: this
    integer(int32), intent(in) :: extents(:)
    integer, intent(out), optional :: stat

    call view_realloc_int64(this, int(extents, int64), stat)
  end subroutine view_realloc_int32

  !> Rank (0..8); 0 on failure with `stat`.
  function view_rank(this, stat) result(rank)
    class(taskdag_view), intent(in) :: this
    integer, intent(out), optional :: stat
    integer :: rank
    integer(c_int) :: out

    out = 0
    call report(td_view_rank(this%handle, out), stat)
    rank = int(out)
  end function view_rank

  !> Extent of 1-based dimension `dim`.
  function view_extent(this, dim, stat) result(extent)
    class(taskdag_view), intent(in) :: this
    integer, intent(in) :: dim
    integer, intent(out), optional :: stat
    integer(int64) :: extent
    integer(c_size_t) :: out

    out = 0
    call report(td_view_extent(this%handle, int(dim - 1, c_int), out), stat)
    extent = int(out, int64)
  end function view_extent

  !> Stride in elements of 1-based dimension `dim`.
  function view_stride(this, dim, stat) result(stride)
    class(taskdag_view), intent(in) :: this
    integer, intent(in) :: dim
    integer, intent(out), optional :: stat
    integer(int64) :: stride
    integer(c_size_t) :: out

    out = 0
    call report(td_view_stride(this%handle, int(dim - 1, c_int), out), stat)
    stride = int(out, int64)
  end function view_stride

  !> Elements from the first to one past the last, gaps included.
  function view_span(this, stat) result(span)
    class(taskdag_view), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: span
    integer(c_size_t) :: out

    out = 0
    call report(td_view_span(this%handle, out), stat)
    span = int(out, int64)
  end function view_span

  !> The label ('' on failure with `stat`).
  function view_label(this, stat) result(label)
    class(taskdag_view), intent(in) :: this
    integer, intent(out), optional :: stat
    character(len=:), allocatable :: label
    type(c_ptr) :: out
    integer(c_int) :: status

    out = c_null_ptr
    status = td_view_label(this%handle, out)
    label = c_to_fortran_string(out)
    call report(status, stat)
  end function view_label

  !> TD_LAYOUT_RIGHT, TD_LAYOUT_LEFT or TD_LAYOUT_STRIDE.
  function view_layout(this, stat) result(layout)
    class(taskdag_view), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(c_int32_t) :: layout

    layout = -1
    call report(td_view_layout(this%handle, layout), stat)
  end function view_layout

  !> TD_ELEMENT_* of the elements.
  function view_element_type(this, stat) result(element_type)
    class(taskdag_view), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(c_int32_t) :: element_type

    element_type = 0
    call report(td_view_element_type(this%handle, element_type), stat)
  end function view_element_type

  !> True when the elements have no gaps.
  logical function view_is_contiguous(this, stat)
    class(taskdag_view), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: out

    out = 0
    call report(td_view_is_contiguous(this%handle, out), stat)
    view_is_contiguous = out /= 0
  end function view_is_contiguous

  !> False for wrapped memory (and views of it).
  logical function view_is_managed(this, stat)
    class(taskdag_view), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: out

    out = 0
    call report(td_view_is_managed(this%handle, out), stat)
    view_is_managed = out /= 0
  end function view_is_managed

  !> Views sharing the array: subviews and mirror views count; variables sharing one view by
  !> assignment count once.
  function view_use_count(this, stat) result(count)
    class(taskdag_view), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: count
    integer(c_size_t) :: out

    out = 0
    call report(td_view_use_count(this%handle, out), stat)
    count = int(out, int64)
  end function view_use_count

  !> Releases this variable's reference; the last reference to an array frees it (never
  !> wrapped memory). Releasing an empty variable does nothing.
  subroutine view_release(this, stat)
    class(taskdag_view), intent(inout) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: status

    status = td_view_release(this%handle)
    this%handle = c_null_ptr
    call report(status, stat)
  end subroutine view_release

  !> True if the variable holds a view.
  logical function view_is_created(this)
    class(taskdag_view), intent(in) :: this

    view_is_created = c_associated(this%handle)
  end function view_is_created

  !> The td_view handle for the C interfaces; still owned by the variable.
  function view_c_handle(this) result(handle)
    class(taskdag_view), intent(in) :: this
    type(c_ptr) :: handle

    handle = this%handle
  end function view_c_handle

  !> `lhs = rhs`: lhs shares rhs's view (one more reference) and releases its previous one.
  subroutine view_assign(lhs, rhs)
    class(taskdag_view), intent(inout) :: lhs
    class(taskdag_view), intent(in) :: rhs
    type(c_ptr) :: previous

    if (c_associated(rhs%handle)) call report(td_view_retain(rhs%handle))
    previous = lhs%handle
    lhs%handle = rhs%handle
    call report(td_view_release(previous))
  end subroutine view_assign

  !> Releases a reference the program did not release itself.
  subroutine view_finalize(this)
    type(taskdag_view), intent(inout) :: this
    integer(c_int) :: status

    status = td_view_release(this%handle)
    this%handle = c_null_ptr
  end subroutine view_finalize

  ! ==========================================================================================
  ! Execution spaces and data-parallel dispatch: parameter structs, taskdag_space, taskdag_team
  ! ==========================================================================================

  !> TD_RANGE_POLICY_INIT: an empty range on all threads; set begin and end.
  function td_range_policy_init() result(policy)
    type(td_range_policy) :: policy
    policy = td_range_policy()
    policy%struct_size = c_sizeof(policy)
  end function td_range_policy_init

  !> TD_TEAM_POLICY_INIT: an empty league, automatic team size, no scratch; set league_size.
  function td_team_policy_init() result(policy)
    type(td_team_policy) :: policy
    policy = td_team_policy()
    policy%struct_size = c_sizeof(policy)
  end function td_team_policy_init

  !> TD_INSTANCE_REQUEST_INIT: a request on any NUMA domain; set num_threads.
  function td_instance_request_init() result(request)
    type(td_instance_request) :: request
    request = td_instance_request()
    request%struct_size = c_sizeof(request)
  end function td_instance_request_init

  !> TD_REDUCER_INIT: no callbacks yet; set value_size, init, join (and user).
  function td_reducer_init() result(reducer)
    type(td_reducer) :: reducer
    reducer = td_reducer()
    reducer%struct_size = c_sizeof(reducer)
  end function td_reducer_init

  !> True inside a dispatched body (td_in_parallel).
  logical function taskdag_in_parallel()
    taskdag_in_parallel = td_in_parallel() /= 0
  end function taskdag_in_parallel

  !> Makes this variable hold a new reference to a borrowed td_space handle, such as the
  !> instance a run_instances control function receives (releasing what it held).
  subroutine space_retain(this, handle, stat)
    class(taskdag_space), intent(inout) :: this
    type(c_ptr), intent(in) :: handle
    integer, intent(out), optional :: stat
    integer(c_int) :: status

    status = td_space_retain(handle)
    if (status == TD_OK) then
      call this%release()
      this%handle = handle
    end if
    call report(status, stat)
  end subroutine space_retain

  !> Makes the Serial space of this variable (releasing what it held).
  subroutine space_serial(this, stat)
    class(taskdag_space), intent(inout) :: this
    integer, intent(out), optional :: stat
    type(c_ptr) :: made
    integer(c_int) :: status

    made = c_null_ptr
    status = td_space_serial(made)
    if (status == TD_OK) then
      call this%release()
      this%handle = made
    end if
    call report(status, stat)
  end subroutine space_serial

  !> Makes the root instance of the Threads space of this variable (releasing what it held).
  subroutine space_threads(this, stat)
    class(taskdag_space), intent(inout) :: this
    integer, intent(out), optional :: stat
    type(c_ptr) :: made
    integer(c_int) :: status

    made = c_null_ptr
    status = td_space_threads(made)
    if (status == TD_OK) then
      call this%release()
      this%handle = made
    end if
    call report(status, stat)
  end subroutine space_threads

  !> Threads a dispatch on this space runs on.
  function space_concurrency(this, stat) result(n)
    class(taskdag_space), intent(in) :: this
    integer, intent(out), optional :: stat
    integer :: n
    integer(c_size_t) :: out

    out = 0
    call report(td_space_concurrency(this%handle, out), stat)
    n = int(out)
  end function space_concurrency

  !> TD_EXEC_SERIAL or TD_EXEC_THREADS.
  function space_kind(this, stat) result(kind)
    class(taskdag_space), intent(in) :: this
    integer, intent(out), optional :: stat
    integer :: kind
    integer(c_int) :: out

    out = -1
    call report(td_space_kind(this%handle, out), stat)
    kind = int(out)
  end function space_kind

  !> Makes `masked` the same instance restricted to its first ceiling(fraction * concurrency)
  !> threads (releasing what `masked` held); fraction in (0, 1].
  subroutine space_mask(this, fraction, masked, stat)
    class(taskdag_space), intent(in) :: this
    real(c_double), intent(in) :: fraction
    class(taskdag_space), intent(inout) :: masked
    integer, intent(out), optional :: stat
    type(c_ptr) :: made
    integer(c_int) :: status

    made = c_null_ptr
    status = td_space_mask(this%handle, fraction, made)
    if (status == TD_OK) then
      call masked%release()
      masked%handle = made
    end if
    call report(status, stat)
  end subroutine space_mask

  !> Waits for work dispatched to this space (CPU dispatches return when done).
  subroutine space_fence(this, stat)
    class(taskdag_space), intent(in) :: this
    integer, intent(out), optional :: stat

    call report(td_space_fence(this%handle), stat)
  end subroutine space_fence

  !> A range policy for [begin, end) with an optional chunk size.
  function range_of(begin, end, chunk_size) result(policy)
    integer(int64), intent(in) :: begin, end
    integer(int64), intent(in), optional :: chunk_size
    type(td_range_policy) :: policy

    policy = td_range_policy_init()
    policy%begin = begin
    policy%end = end
    if (present(chunk_size)) policy%chunk_size = chunk_size
  end function range_of

  !> Calls body(b, e, user) on disjoint ranges covering [begin, end) on the space's threads.
  !> `user` (default c_null_ptr) reaches every call; `chunk_size` > 0 hands out chunks
  !> dynamically. Only the space's control thread may call it.
  subroutine space_parallel_for(this, begin, end, body, user, chunk_size, stat)
    class(taskdag_space), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_range_body) :: body
    type(c_ptr), intent(in), optional :: user
    integer(int64), intent(in), optional :: chunk_size
    integer, intent(out), optional :: stat
    type(c_ptr) :: data

    data = c_null_ptr
    if (present(user)) data = user
    call report(td_parallel_for(this%handle, range_of(begin, end, chunk_size), c_funloc(body), &
                                data), stat)
  end subroutine space_parallel_for

  !> The reduction behind the typed parallel_reduce procedures.
  subroutine space_reduce(this, begin, end, body, op, scalar_type, result, user, chunk_size, stat)
    class(taskdag_space), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    type(c_funptr), intent(in) :: body
    integer(c_int32_t), intent(in) :: op, scalar_type
    type(c_ptr), intent(in) :: result
    type(c_ptr), intent(in), optional :: user
    integer(int64), intent(in), optional :: chunk_size
    integer, intent(out), optional :: stat
    type(c_ptr) :: data

    data = c_null_ptr
    if (present(user)) data = user
    call report(td_parallel_reduce(this%handle, range_of(begin, end, chunk_size), body, data, &
                                   op, scalar_type, result), stat)
  end subroutine space_reduce

  !> Reduces over [begin, end) with op (TD_REDUCE_SUM, _MIN, _MAX, _PROD): each thread's `acc`
  !> starts at the identity, body(b, e, acc, user) folds its ranges in, and the threads' values
  !> are joined in thread order into `result` (deterministic for a given thread count).
  subroutine space_reduce_real64(this, begin, end, body, op, result, user, chunk_size, stat)
    class(taskdag_space), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_reduce_body_real64) :: body
    integer(c_int32_t), intent(in) :: op
    real(c_double), intent(inout), target :: result
    type(c_ptr), intent(in), optional :: user
    integer(int64), intent(in), optional :: chunk_size
    integer, intent(out), optional :: stat

    call space_reduce(this, begin, end, c_funloc(body), op, TD_SCALAR_DOUBLE, c_loc(result), &
                      user, chunk_size, stat)
  end subroutine space_reduce_real64

  subroutine space_reduce_real32(this, begin, end, body, op, result, user, chunk_size, stat)
    class(taskdag_space), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_reduce_body_real32) :: body
    integer(c_int32_t), intent(in) :: op
    real(c_float), intent(inout), target :: result
    type(c_ptr), intent(in), optional :: user
    integer(int64), intent(in), optional :: chunk_size
    integer, intent(out), optional :: stat

    call space_reduce(this, begin, end, c_funloc(body), op, TD_SCALAR_FLOAT, c_loc(result), &
                      user, chunk_size, stat)
  end subroutine space_reduce_real32

  subroutine space_reduce_int64(this, begin, end, body, op, result, user, chunk_size, stat)
    class(taskdag_space), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_reduce_body_int64) :: body
    integer(c_int32_t), intent(in) :: op
    integer(c_int64_t), intent(inout), target :: result
    type(c_ptr), intent(in), optional :: user
    integer(int64), intent(in), optional :: chunk_size
    integer, intent(out), optional :: stat

    call space_reduce(this, begin, end, c_funloc(body), op, TD_SCALAR_INT64, c_loc(result), &
                      user, chunk_size, stat)
  end subroutine space_reduce_int64

  subroutine space_reduce_int32(this, begin, end, body, op, result, user, chunk_size, stat)
    class(taskdag_space), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_reduce_body_int32) :: body
    integer(c_int32_t), intent(in) :: op
    integer(c_int32_t), intent(inout), target :: result
    type(c_ptr), intent(in), optional :: user
    integer(int64), intent(in), optional :: chunk_size
    integer, intent(out), optional :: stat

    call space_reduce(this, begin, end, c_funloc(body), op, TD_SCALAR_INT32, c_loc(result), &
                      user, chunk_size, stat)
  end subroutine space_reduce_int32

  !> Runs body(team, user) on every member of a team for each of league_size league entries;
  !> teams of team_size threads (0 = automatic) share scratch_bytes (default 0) of memory.
  subroutine space_parallel_team(this, league_size, team_size, body, user, scratch_bytes, stat)
    class(taskdag_space), intent(in) :: this
    integer, intent(in) :: league_size, team_size
    procedure(taskdag_team_body) :: body
    type(c_ptr), intent(in), optional :: user
    integer, intent(in), optional :: scratch_bytes
    integer, intent(out), optional :: stat
    type(td_team_policy) :: policy
    type(c_ptr) :: data

    data = c_null_ptr
    if (present(user)) data = user
    policy = td_team_policy_init()
    policy%league_size = int(league_size, c_int64_t)
    policy%team_size = int(team_size, c_int64_t)
    if (present(scratch_bytes)) policy%scratch_bytes = int(scratch_bytes, c_size_t)
    call report(td_parallel_team(this%handle, policy, c_funloc(body), data), stat)
  end subroutine space_parallel_team

  !> Partitions this instance into sub-instances of thread_counts(i) threads and runs
  !> control(instance, i - 1, user) for each on its control thread (the caller runs the first);
  !> returns when all have returned. Requests that cannot be satisfied fail before any runs.
  subroutine space_run_instances(this, thread_counts, control, user, stat)
    class(taskdag_space), intent(in) :: this
    integer, intent(in) :: thread_counts(:)
    procedure(taskdag_instance_body) :: control
    type(c_ptr), intent(in), optional :: user
    integer, intent(out), optional :: stat
    type(td_instance_request) :: requests(size(thread_counts))
    type(c_ptr) :: data
    integer :: i

    data = c_null_ptr
    if (present(user)) data = user
    do i = 1, size(thread_counts)
      requests(i) = td_instance_request_init()
      requests(i)%num_threads = int(max(thread_counts(i), 0), c_size_t)
    end do
    call report(td_space_run_instances(this%handle, requests, int(size(requests), c_size_t), &
                                       c_funloc(control), data), stat)
  end subroutine space_run_instances

  !> Releases this variable's reference; releasing an empty variable does nothing.
  subroutine space_release(this, stat)
    class(taskdag_space), intent(inout) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: status

    status = td_space_release(this%handle)
    this%handle = c_null_ptr
    call report(status, stat)
  end subroutine space_release

  !> True if the variable holds a space.
  logical function space_is_created(this)
    class(taskdag_space), intent(in) :: this

    space_is_created = c_associated(this%handle)
  end function space_is_created

  !> The td_space handle for the C interfaces; still owned by the variable.
  function space_c_handle(this) result(handle)
    class(taskdag_space), intent(in) :: this
    type(c_ptr) :: handle

    handle = this%handle
  end function space_c_handle

  !> `lhs = rhs`: lhs shares rhs's space and releases its previous one.
  subroutine space_assign(lhs, rhs)
    class(taskdag_space), intent(inout) :: lhs
    class(taskdag_space), intent(in) :: rhs
    type(c_ptr) :: previous

    if (c_associated(rhs%handle)) call report(td_space_retain(rhs%handle))
    previous = lhs%handle
    lhs%handle = rhs%handle
    call report(td_space_release(previous))
  end subroutine space_assign

  !> Releases a reference the program did not release itself.
  subroutine space_finalize(this)
    type(taskdag_space), intent(inout) :: this
    integer(c_int) :: status

    status = td_space_release(this%handle)
    this%handle = c_null_ptr
  end subroutine space_finalize

  ! --- taskdag_team --------------------------------------------------------------------------

  !> The member a parallel_team body's `team` argument stands for.
  function taskdag_team_member(team) result(member)
    type(c_ptr), intent(in) :: team
    type(taskdag_team) :: member

    member%handle = team
  end function taskdag_team_member

  !> This member's rank in its team, 0 .. size-1.
  integer function team_rank(this)
    class(taskdag_team), intent(in) :: this
    team_rank = int(td_team_rank(this%handle))
  end function team_rank

  !> Members in the team.
  integer function team_size(this)
    class(taskdag_team), intent(in) :: this
    team_size = int(td_team_size(this%handle))
  end function team_size

  !> The league entry the team works on, 0 .. league_size-1.
  integer function team_league_rank(this)
    class(taskdag_team), intent(in) :: this
    team_league_rank = int(td_team_league_rank(this%handle))
  end function team_league_rank

  !> Entries in the league.
  integer function team_league_size(this)
    class(taskdag_team), intent(in) :: this
    team_league_size = int(td_team_league_size(this%handle))
  end function team_league_size

  !> Waits for every member; writes before it are visible to all after it.
  subroutine team_barrier(this, stat)
    class(taskdag_team), intent(in) :: this
    integer, intent(out), optional :: stat

    call report(td_team_barrier(this%handle), stat)
  end subroutine team_barrier

  !> Team reduction: every member passes `value` and gets the join of all members' values
  !> (op is TD_REDUCE_SUM, _MIN, _MAX or _PROD).
  subroutine team_reduce_real64(this, op, value, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op
    real(c_double), intent(inout), target :: value
    integer, intent(out), optional :: stat

    call report(td_team_reduce(this%handle, op, TD_SCALAR_DOUBLE, c_loc(value)), stat)
  end subroutine team_reduce_real64

  subroutine team_reduce_real32(this, op, value, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op
    real(c_float), intent(inout), target :: value
    integer, intent(out), optional :: stat

    call report(td_team_reduce(this%handle, op, TD_SCALAR_FLOAT, c_loc(value)), stat)
  end subroutine team_reduce_real32

  subroutine team_reduce_int64(this, op, value, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op
    integer(c_int64_t), intent(inout), target :: value
    integer, intent(out), optional :: stat

    call report(td_team_reduce(this%handle, op, TD_SCALAR_INT64, c_loc(value)), stat)
  end subroutine team_reduce_int64

  subroutine team_reduce_int32(this, op, value, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op
    integer(c_int32_t), intent(inout), target :: value
    integer, intent(out), optional :: stat

    call report(td_team_reduce(this%handle, op, TD_SCALAR_INT32, c_loc(value)), stat)
  end subroutine team_reduce_int32

  !> The td_team_scan call of the typed scan procedures; `total` may be c_null_ptr.
  subroutine team_scan_any(this, op, scalar_type, inclusive, value, total, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op, scalar_type
    logical, intent(in) :: inclusive
    type(c_ptr), intent(in) :: value, total
    integer, intent(out), optional :: stat

    call report(td_team_scan(this%handle, op, scalar_type, merge(1_c_int, 0_c_int, inclusive), &
                             value, total), stat)
  end subroutine team_scan_any

  !> Team prefix over ranks: member r gets the join of the values of ranks 0..r (inclusive) or
  !> 0..r-1 (exclusive; the identity on rank 0) in `value`; `total`, if present, the join of all.
  subroutine team_scan_real64(this, op, inclusive, value, total, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op
    logical, intent(in) :: inclusive
    real(c_double), intent(inout), target :: value
    real(c_double), intent(inout), optional, target :: total
    integer, intent(out), optional :: stat
    type(c_ptr) :: t

    t = c_null_ptr
    if (present(total)) t = c_loc(total)
    call team_scan_any(this, op, TD_SCALAR_DOUBLE, inclusive, c_loc(value), t, stat)
  end subroutine team_scan_real64

  subroutine team_scan_real32(this, op, inclusive, value, total, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op
    logical, intent(in) :: inclusive
    real(c_float), intent(inout), target :: value
    real(c_float), intent(inout), optional, target :: total
    integer, intent(out), optional :: stat
    type(c_ptr) :: t

    t = c_null_ptr
    if (present(total)) t = c_loc(total)
    call team_scan_any(this, op, TD_SCALAR_FLOAT, inclusive, c_loc(value), t, stat)
  end subroutine team_scan_real32

  subroutine team_scan_int64(this, op, inclusive, value, total, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op
    logical, intent(in) :: inclusive
    integer(c_int64_t), intent(inout), target :: value
    integer(c_int64_t), intent(inout), optional, target :: total
    integer, intent(out), optional :: stat
    type(c_ptr) :: t

    t = c_null_ptr
    if (present(total)) t = c_loc(total)
    call team_scan_any(this, op, TD_SCALAR_INT64, inclusive, c_loc(value), t, stat)
  end subroutine team_scan_int64

  subroutine team_scan_int32(this, op, inclusive, value, total, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(in) :: op
    logical, intent(in) :: inclusive
    integer(c_int32_t), intent(inout), target :: value
    integer(c_int32_t), intent(inout), optional, target :: total
    integer, intent(out), optional :: stat
    type(c_ptr) :: t

    t = c_null_ptr
    if (present(total)) t = c_loc(total)
    call team_scan_any(this, op, TD_SCALAR_INT32, inclusive, c_loc(value), t, stat)
  end subroutine team_scan_int32

  !> Copies member `root`'s `value` into `value` of every member.
  subroutine team_broadcast_real64(this, value, root, stat)
    class(taskdag_team), intent(in) :: this
    real(c_double), intent(inout), target :: value
    integer, intent(in) :: root
    integer, intent(out), optional :: stat

    call report(td_team_broadcast(this%handle, c_loc(value), c_sizeof(value), &
                                  int(root, c_int64_t)), stat)
  end subroutine team_broadcast_real64

  subroutine team_broadcast_real32(this, value, root, stat)
    class(taskdag_team), intent(in) :: this
    real(c_float), intent(inout), target :: value
    integer, intent(in) :: root
    integer, intent(out), optional :: stat

    call report(td_team_broadcast(this%handle, c_loc(value), c_sizeof(value), &
                                  int(root, c_int64_t)), stat)
  end subroutine team_broadcast_real32

  subroutine team_broadcast_int64(this, value, root, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int64_t), intent(inout), target :: value
    integer, intent(in) :: root
    integer, intent(out), optional :: stat

    call report(td_team_broadcast(this%handle, c_loc(value), c_sizeof(value), &
                                  int(root, c_int64_t)), stat)
  end subroutine team_broadcast_int64

  subroutine team_broadcast_int32(this, value, root, stat)
    class(taskdag_team), intent(in) :: this
    integer(c_int32_t), intent(inout), target :: value
    integer, intent(in) :: root
    integer, intent(out), optional :: stat

    call report(td_team_broadcast(this%handle, c_loc(value), c_sizeof(value), &
                                  int(root, c_int64_t)), stat)
  end subroutine team_broadcast_int32

  !> The team's scratch memory (c_f_pointer it to an array) and, in `bytes`, its size.
  function team_scratch(this, bytes) result(memory)
    class(taskdag_team), intent(in) :: this
    integer(int64), intent(out), optional :: bytes
    type(c_ptr) :: memory
    integer(c_size_t) :: n

    n = 0
    memory = td_team_scratch(this%handle, n)
    if (present(bytes)) bytes = int(n, int64)
  end function team_scratch

  !> Team-level loop: this member calls body(b, e, user) on its own part of [begin, end).
  !> No barrier is implied.
  subroutine team_parallel_for(this, begin, end, body, user, stat)
    class(taskdag_team), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_range_body) :: body
    type(c_ptr), intent(in), optional :: user
    integer, intent(out), optional :: stat
    type(c_ptr) :: data

    data = c_null_ptr
    if (present(user)) data = user
    call report(td_team_parallel_for(this%handle, begin, end, c_funloc(body), data), stat)
  end subroutine team_parallel_for

  !> The td_team_parallel_reduce call of the typed team parallel_reduce procedures.
  subroutine team_preduce_any(this, begin, end, body, op, scalar_type, result, user, stat)
    class(taskdag_team), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    type(c_funptr), intent(in) :: body
    integer(c_int32_t), intent(in) :: op, scalar_type
    type(c_ptr), intent(in) :: result
    type(c_ptr), intent(in), optional :: user
    integer, intent(out), optional :: stat
    type(c_ptr) :: data

    data = c_null_ptr
    if (present(user)) data = user
    call report(td_team_parallel_reduce(this%handle, begin, end, body, data, op, scalar_type, &
                                        result), stat)
  end subroutine team_preduce_any

  !> Team-level reduction over [begin, end): every member gets the join in `result`.
  subroutine team_preduce_real64(this, begin, end, body, op, result, user, stat)
    class(taskdag_team), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_reduce_body_real64) :: body
    integer(c_int32_t), intent(in) :: op
    real(c_double), intent(inout), target :: result
    type(c_ptr), intent(in), optional :: user
    integer, intent(out), optional :: stat

    call team_preduce_any(this, begin, end, c_funloc(body), op, TD_SCALAR_DOUBLE, &
                          c_loc(result), user, stat)
  end subroutine team_preduce_real64

  subroutine team_preduce_real32(this, begin, end, body, op, result, user, stat)
    class(taskdag_team), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_reduce_body_real32) :: body
    integer(c_int32_t), intent(in) :: op
    real(c_float), intent(inout), target :: result
    type(c_ptr), intent(in), optional :: user
    integer, intent(out), optional :: stat

    call team_preduce_any(this, begin, end, c_funloc(body), op, TD_SCALAR_FLOAT, &
                          c_loc(result), user, stat)
  end subroutine team_preduce_real32

  subroutine team_preduce_int64(this, begin, end, body, op, result, user, stat)
    class(taskdag_team), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_reduce_body_int64) :: body
    integer(c_int32_t), intent(in) :: op
    integer(c_int64_t), intent(inout), target :: result
    type(c_ptr), intent(in), optional :: user
    integer, intent(out), optional :: stat

    call team_preduce_any(this, begin, end, c_funloc(body), op, TD_SCALAR_INT64, &
                          c_loc(result), user, stat)
  end subroutine team_preduce_int64

  subroutine team_preduce_int32(this, begin, end, body, op, result, user, stat)
    class(taskdag_team), intent(in) :: this
    integer(int64), intent(in) :: begin, end
    procedure(taskdag_reduce_body_int32) :: body
    integer(c_int32_t), intent(in) :: op
    integer(c_int32_t), intent(inout), target :: result
    type(c_ptr), intent(in), optional :: user
    integer, intent(out), optional :: stat

    call team_preduce_any(this, begin, end, c_funloc(body), op, TD_SCALAR_INT32, &
                          c_loc(result), user, stat)
  end subroutine team_preduce_int32

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

  !> Runs the running task again once all `futures` have completed (c_null_ptr elements are
  !> skipped; none incomplete: as soon as possible) at `priority` (default regular):
  !> taskdag_task_respawn on taskdag_task_when_all(futures) in one call that makes no future
  !> (000 Fig. 3.4). The futures are borrowed for the call only; at most one respawn per run.
  subroutine taskdag_task_respawn_when_all(ctx, futures, priority, stat)
    type(c_ptr), intent(in) :: ctx
    type(c_ptr), intent(in) :: futures(:)
    integer(c_int32_t), intent(in), optional :: priority
    integer, intent(out), optional :: stat

    call respawn_after_all(td_task_respawn_when_all, ctx, futures, priority, stat)
  end subroutine taskdag_task_respawn_when_all

  !> taskdag_task_respawn_when_all with td_task_respawn_when_all_private's promise: until the
  !> call returns, no other task uses these futures through this task's references. For the
  !> children a task just spawned and keeps to itself (000 Fig. 3.4); faster with several
  !> workers.
  subroutine taskdag_task_respawn_when_all_private(ctx, futures, priority, stat)
    type(c_ptr), intent(in) :: ctx
    type(c_ptr), intent(in) :: futures(:)
    integer(c_int32_t), intent(in), optional :: priority
    integer, intent(out), optional :: stat

    call respawn_after_all(td_task_respawn_when_all_private, ctx, futures, priority, stat)
  end subroutine taskdag_task_respawn_when_all_private

  !> Calls `respawn` (td_task_respawn_when_all or its private form) on `futures` at `priority`
  !> (default regular) and reports its status.
  subroutine respawn_after_all(respawn, ctx, futures, priority, stat)
    procedure(td_task_respawn_when_all) :: respawn
    type(c_ptr), intent(in) :: ctx
    type(c_ptr), intent(in) :: futures(:)
    integer(c_int32_t), intent(in), optional :: priority
    integer, intent(out), optional :: stat
    integer(c_int32_t) :: p

    p = TD_PRIORITY_REGULAR
    if (present(priority)) p = priority
    call report(respawn(ctx, futures, int(size(futures), c_int), p), stat)
  end subroutine respawn_after_all

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

  ! ==========================================================================================
  ! Work graph: taskdag_crs and taskdag_work_graph
  ! ==========================================================================================

  !> Creates the graph from 0-based arrays: row_map(1) = 0, row_map(n+1) = size(entries), and
  !> entries in 0..n-1. Releases the graph this variable held before.
  subroutine crs_create_int64(this, row_map, entries, stat)
    class(taskdag_crs), intent(inout) :: this
    integer(int64), intent(in) :: row_map(:), entries(:)
    integer, intent(out), optional :: stat
    type(c_ptr) :: created
    integer(c_int) :: status

    created = c_null_ptr
    status = td_crs_create(int(size(row_map) - 1, c_int64_t), int(row_map, c_int64_t), &
                           int(size(entries), c_int64_t), int(entries, c_int64_t), created)
    call crs_take(this, status, created, stat)
  end subroutine crs_create_int64

  subroutine crs_create_int32(this, row_map, entries, stat)
    class(taskdag_crs), intent(inout) :: this
    integer(int32), intent(in) :: row_map(:), entries(:)
    integer, intent(out), optional :: stat

    call crs_create_int64(this, int(row_map, int64), int(entries, int64), stat)
  end subroutine crs_create_int32

  !> Creates the graph from Fortran's 1-based arrays (see the banner above): subtracts 1 from
  !> every offset and entry, so taskdag's 0-based item i is the program's item i + 1. A row_map
  !> that does not start at 1 is reported (TD_ERROR_INVALID_ARGUMENT) as one that does not start
  !> at 0 after the conversion.
  subroutine crs_create_one_based_int64(this, row_map, entries, stat)
    class(taskdag_crs), intent(inout) :: this
    integer(int64), intent(in) :: row_map(:), entries(:)
    integer, intent(out), optional :: stat

    call crs_create_int64(this, row_map - 1_int64, entries - 1_int64, stat)
  end subroutine crs_create_one_based_int64

  subroutine crs_create_one_based_int32(this, row_map, entries, stat)
    class(taskdag_crs), intent(inout) :: this
    integer(int32), intent(in) :: row_map(:), entries(:)
    integer, intent(out), optional :: stat

    call crs_create_int64(this, int(row_map, int64) - 1_int64, int(entries, int64) - 1_int64, &
                          stat)
  end subroutine crs_create_one_based_int32

  !> Creates the transpose of `source` (000 §3.3.1 transpose_crs): row j lists the items whose
  !> rows in `source` contain j. Releases the graph this variable held before.
  subroutine crs_create_transpose(this, source, stat)
    class(taskdag_crs), intent(inout) :: this
    class(taskdag_crs), intent(in) :: source
    integer, intent(out), optional :: stat
    type(c_ptr) :: created
    integer(c_int) :: status

    created = c_null_ptr
    status = td_crs_transpose(source%handle, created)
    call crs_take(this, status, created, stat)
  end subroutine crs_create_transpose

  !> On success, replaces the graph `this` holds by `created`; reports `status`.
  subroutine crs_take(this, status, created, stat)
    class(taskdag_crs), intent(inout) :: this
    integer(c_int), intent(in) :: status
    type(c_ptr), intent(in) :: created
    integer, intent(out), optional :: stat

    if (status == TD_OK) then
      call this%release()
      this%handle = created
    end if
    call report(status, stat)
  end subroutine crs_take

  !> Number of rows (work items); 0 on failure with `stat`.
  function crs_num_rows(this, stat) result(n)
    class(taskdag_crs), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: n
    integer(c_int64_t) :: out

    out = 0
    call report(td_crs_num_rows(this%handle, out), stat)
    n = int(out, int64)
  end function crs_num_rows

  !> Number of entries (dependences); 0 on failure with `stat`.
  function crs_num_entries(this, stat) result(nz)
    class(taskdag_crs), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: nz
    integer(c_int64_t) :: out

    out = 0
    call report(td_crs_num_entries(this%handle, out), stat)
    nz = int(out, int64)
  end function crs_num_entries

  !> The n + 1 row offsets: 0-based as stored, or 1-based with one_based = .true.
  function crs_row_map(this, one_based, stat) result(row_map)
    class(taskdag_crs), intent(in) :: this
    logical, intent(in), optional :: one_based
    integer, intent(out), optional :: stat
    integer(int64), allocatable, target :: row_map(:)

    allocate (row_map(this%num_rows() + 1))
    call report(td_crs_export(this%handle, c_loc(row_map), int(size(row_map), c_size_t), &
                              c_null_ptr, 0_c_size_t), stat)
    if (present(one_based)) then
      if (one_based) row_map = row_map + 1
    end if
  end function crs_row_map

  !> The entries: 0-based as stored, or 1-based with one_based = .true.
  function crs_entries(this, one_based, stat) result(entries)
    class(taskdag_crs), intent(in) :: this
    logical, intent(in), optional :: one_based
    integer, intent(out), optional :: stat
    integer(int64), allocatable, target :: entries(:)

    allocate (entries(this%num_entries()))
    call report(td_crs_export(this%handle, c_null_ptr, 0_c_size_t, c_loc(entries), &
                              int(size(entries), c_size_t)), stat)
    if (present(one_based)) then
      if (one_based) entries = entries + 1
    end if
  end function crs_entries

  !> Releases this variable's reference; plans made from the graph keep their own.
  subroutine crs_release(this, stat)
    class(taskdag_crs), intent(inout) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: status

    status = td_crs_release(this%handle)
    this%handle = c_null_ptr
    call report(status, stat)
  end subroutine crs_release

  !> True if the variable holds a graph.
  logical function crs_is_created(this)
    class(taskdag_crs), intent(in) :: this

    crs_is_created = c_associated(this%handle)
  end function crs_is_created

  !> The td_crs handle for the C interfaces; still owned by the variable.
  function crs_c_handle(this) result(handle)
    class(taskdag_crs), intent(in) :: this
    type(c_ptr) :: handle

    handle = this%handle
  end function crs_c_handle

  !> `lhs = rhs`: lhs shares rhs's graph and releases its previous one.
  subroutine crs_assign(lhs, rhs)
    class(taskdag_crs), intent(inout) :: lhs
    class(taskdag_crs), intent(in) :: rhs
    type(c_ptr) :: previous

    if (c_associated(rhs%handle)) call report(td_crs_retain(rhs%handle))
    previous = lhs%handle
    lhs%handle = rhs%handle
    call report(td_crs_release(previous))
  end subroutine crs_assign

  !> Releases a reference the program did not release itself.
  subroutine crs_finalize(this)
    type(taskdag_crs), intent(inout) :: this
    integer(c_int) :: status

    status = td_crs_release(this%handle)
    this%handle = c_null_ptr
  end subroutine crs_finalize

  !> Plans a work graph over `graph`; `priorities`, if present, holds one TD_PRIORITY_* per item
  !> (priorities(i) for item i). A cycle is reported as TD_ERROR_CYCLE, naming (0-based) an item
  !> on it. Releases the plan this variable held before.
  subroutine work_graph_create(this, graph, priorities, stat)
    class(taskdag_work_graph), intent(inout) :: this
    class(taskdag_crs), intent(in) :: graph
    integer, intent(in), optional, target :: priorities(:)
    integer, intent(out), optional :: stat
    integer(c_int32_t), allocatable, target :: levels(:)
    type(c_ptr) :: created, levels_ptr
    integer(c_int) :: status

    levels_ptr = c_null_ptr
    if (present(priorities)) then
      if (size(priorities, kind=int64) /= graph%num_rows()) then
        ! The C API cannot see the array's size, so this check is the binding's own.
        if (.not. present(stat)) error stop 'taskdag: taskdag_work_graph%create: priorities '// &
          'needs one entry per item of the graph'
        stat = int(TD_ERROR_INVALID_ARGUMENT)
        return
      end if
      levels = int(priorities, c_int32_t)
      levels_ptr = c_loc(levels)
    end if
    created = c_null_ptr
    status = td_work_graph_create(graph%handle, levels_ptr, created)
    if (status == TD_OK) then
      call this%release()
      this%handle = created
    end if
    call report(status, stat)
  end subroutine work_graph_create

  !> Calls `work(i, user)` once for every item i = 1..n, each after the calls of the items it
  !> executes after, on `space` (a td_space handle; default: the Threads space of
  !> td_initialize, which only the thread that called taskdag_initialize may use). `user`
  !> (default c_null_ptr) is passed through, typically c_loc of the program's data. Returns when
  !> every call has returned. Runs on several threads share the work as finely as the cost of an
  !> item measured in the plan's earlier runs warrants, so time later runs, not only the first; a
  !> run so measured to take one thread under about 12 us, or clearly less on one thread than on all
  !> of them, or of a graph too narrow to share anywhere, runs on the calling thread alone.
  subroutine work_graph_run(this, work, user, space, stat)
    class(taskdag_work_graph), intent(in) :: this
    procedure(taskdag_work_item) :: work
    type(c_ptr), intent(in), optional :: user
    type(c_ptr), intent(in), optional :: space
    integer, intent(out), optional :: stat
    type(work_graph_closure), target :: closure
    type(c_ptr) :: threads
    integer(c_int) :: status

    closure%work => work
    if (present(user)) closure%user = user
    if (present(space)) then
      status = td_work_graph_run(this%handle, space, c_funloc(work_graph_trampoline), &
                                 c_loc(closure))
    else
      threads = c_null_ptr
      status = td_space_threads(threads)
      if (status == TD_OK) then
        status = td_work_graph_run(this%handle, threads, c_funloc(work_graph_trampoline), &
                                   c_loc(closure))
        if (td_space_release(threads) /= TD_OK .and. status == TD_OK) status = td_last_error()
      end if
    end if
    call report(status, stat)
  end subroutine work_graph_run

  !> The C work function of Fortran runs: converts the 0-based item to the program's 1-based
  !> number and calls the program's procedure. Recursive, so concurrent calls share nothing.
  recursive subroutine work_graph_trampoline(i, user) bind(c)
    integer(c_int64_t), value :: i
    type(c_ptr), value :: user
    type(work_graph_closure), pointer :: closure

    call c_f_pointer(user, closure)
    call closure%work(int(i, int64) + 1_int64, closure%user)
  end subroutine work_graph_trampoline

  !> Number of work items; 0 on failure with `stat`.
  function work_graph_num_items(this, stat) result(n)
    class(taskdag_work_graph), intent(in) :: this
    integer, intent(out), optional :: stat
    integer(int64) :: n
    integer(c_int64_t) :: out

    out = 0
    call report(td_work_graph_num_items(this%handle, out), stat)
    n = int(out, int64)
  end function work_graph_num_items

  !> Releases this variable's reference.
  subroutine work_graph_release(this, stat)
    class(taskdag_work_graph), intent(inout) :: this
    integer, intent(out), optional :: stat
    integer(c_int) :: status

    status = td_work_graph_release(this%handle)
    this%handle = c_null_ptr
    call report(status, stat)
  end subroutine work_graph_release

  !> True if the variable holds a plan.
  logical function work_graph_is_created(this)
    class(taskdag_work_graph), intent(in) :: this

    work_graph_is_created = c_associated(this%handle)
  end function work_graph_is_created

  !> The td_work_graph handle for the C interfaces; still owned by the variable.
  function work_graph_c_handle(this) result(handle)
    class(taskdag_work_graph), intent(in) :: this
    type(c_ptr) :: handle

    handle = this%handle
  end function work_graph_c_handle

  !> `lhs = rhs`: lhs shares rhs's plan and releases its previous one.
  subroutine work_graph_assign(lhs, rhs)
    class(taskdag_work_graph), intent(inout) :: lhs
    class(taskdag_work_graph), intent(in) :: rhs
    type(c_ptr) :: previous

    if (c_associated(rhs%handle)) call report(td_work_graph_retain(rhs%handle))
    previous = lhs%handle
    lhs%handle = rhs%handle
    call report(td_work_graph_release(previous))
  end subroutine work_graph_assign

  !> Releases a reference the program did not release itself.
  subroutine work_graph_finalize(this)
    type(taskdag_work_graph), intent(inout) :: this
    integer(c_int) :: status

    status = td_work_graph_release(this%handle)
    this%handle = c_null_ptr
  end subroutine work_graph_finalize

end module taskdag
