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

  !> td_priority values.
  integer(c_int32_t), parameter, public :: TD_PRIORITY_HIGH = 0
  integer(c_int32_t), parameter, public :: TD_PRIORITY_REGULAR = 1
  integer(c_int32_t), parameter, public :: TD_PRIORITY_LOW = 2

  public :: td_crs_create, td_crs_transpose, td_crs_retain, td_crs_release, td_crs_num_rows
  public :: td_crs_num_entries, td_crs_export, td_work_graph_create, td_work_graph_run
  public :: td_work_graph_num_items, td_work_graph_retain, td_work_graph_release
  public :: td_space_serial, td_space_threads, td_space_release

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

    !> A handle to the Serial space (release with td_space_release).
    function td_space_serial(out) bind(c, name="td_space_serial") result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_space_serial

    !> A handle to the root Threads space made by td_initialize (release with td_space_release).
    function td_space_threads(out) bind(c, name="td_space_threads") result(status)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: status
    end function td_space_threads

    !> Releases one reference to a space; c_null_ptr is a no-op.
    function td_space_release(space) bind(c, name="td_space_release") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: space
      integer(c_int) :: status
    end function td_space_release
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
  !> every call has returned.
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
