!> Tests of the Fortran module (include/taskdag.f90): statuses through `stat`, the bind(c) structs
!> against the C library's struct_size checks, pool sharing by assignment, and release.
!> Prints one line per failed check and "fortran module: all checks passed" at the end.
program test_fortran_module
  use, intrinsic :: iso_c_binding, only: c_ptr, c_associated, c_sizeof
  use, intrinsic :: iso_fortran_env, only: int64
  use taskdag
  use fortran_checks, only: check, finish
  implicit none

  integer :: stat
  integer(int64) :: bytes
  character(len=:), allocatable :: text
  type(taskdag_pool) :: pool, shared
  type(td_pool_stats) :: stats
  type(td_pool_args) :: args
  type(c_ptr) :: block, raw

  ! --- the runtime ---------------------------------------------------------------------------
  call check(.not. taskdag_is_initialized(), 'runtime starts uninitialized')
  text = taskdag_configuration(stat=stat)
  call check(stat == TD_ERROR_NOT_INITIALIZED, 'configuration before initialize: not initialized')
  call check(index(taskdag_last_error_message(), 'td_initialize') > 0, &
             'the message tells to call td_initialize')
  call check(len(text) == 0, 'configuration on failure is empty')
  call taskdag_finalize(stat=stat)
  call check(stat == TD_ERROR_NOT_INITIALIZED, 'finalize before initialize: not initialized')

  call taskdag_initialize(num_threads=-1, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'negative num_threads: invalid argument')
  call check(index(taskdag_last_error_message(), 'num_threads') > 0, 'the message names num_threads')

  call taskdag_initialize(num_threads=1, stat=stat, idle_spin_us=-2_int64)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'idle_spin_us below -1: invalid argument')
  call check(index(taskdag_last_error_message(), 'idle_spin_us') > 0, 'the message names idle_spin_us')

  call taskdag_initialize(num_threads=1, stat=stat, idle_spin_us=250_int64)
  call check(stat == TD_OK, 'initialize with one thread')
  call taskdag_initialize(stat=stat)
  call check(stat == TD_ERROR_ALREADY_INITIALIZED, 'second initialize: already initialized')
  text = taskdag_configuration()
  call check(index(text, 'taskdag '//taskdag_version()) == 1, 'configuration starts with the version')
  call check(index(text, 'threads 1') > 0, 'configuration shows num_threads')
  call check(index(text, 'idle workers spin 250 us') > 0, 'configuration shows idle_spin_us')
  call check(taskdag_status_name(TD_ERROR_STRUCT_SIZE) == 'TD_ERROR_STRUCT_SIZE', 'status names')
  call check(td_version() == TD_VERSION_MAJOR * 10000 + TD_VERSION_MINOR * 100 + TD_VERSION_PATCH, &
             'version constants match the library')

  ! --- structs: the library accepts exactly the sizes the module computes ---------------------
  args = td_pool_args_init()
  call check(args%struct_size == c_sizeof(args), 'td_pool_args_init sets struct_size')
  args%min_total_alloc_size = 65536
  stat = td_pool_create(args, raw)
  call check(stat == TD_OK, 'td_pool_create accepts the Fortran td_pool_args')
  stats = td_pool_stats_init()
  call check(td_pool_usage_statistics(raw, stats) == TD_OK, 'td_pool_usage_statistics accepts td_pool_stats')
  call check(stats%capacity_bytes == 65536 .and. stats%max_block_bytes == 4096 .and. &
             stats%min_block_bytes == 64, 'td_pool_stats fields line up with C')
  call check(td_pool_release(raw) == TD_OK, 'td_pool_release of the raw handle')
  args%struct_size = args%struct_size + 8
  call check(td_pool_create(args, raw) == TD_ERROR_STRUCT_SIZE, 'a wrong struct_size is rejected')

  ! --- taskdag_pool -----------------------------------------------------------------------------
  call pool%create(8, 64, 4096, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'a total below the max block: invalid argument')
  call check(index(taskdag_last_error_message(), 'min_total_alloc_size') > 0, &
             'the message names min_total_alloc_size')
  call check(.not. pool%is_created(), 'a failed create leaves the variable empty')

  call pool%create(1048576_int64, max_block_alloc_size=8192_int64)
  call check(pool%is_created(), 'create with int64 sizes')
  call check(pool%max_block_size() == 8192, 'max_block_size')
  ! Fortran may evaluate `stat` before the call inside one expression: call first, then check.
  bytes = pool%block_size(8193, stat=stat)
  call check(bytes == 0 .and. stat == TD_ERROR_INVALID_ARGUMENT, &
             'block_size above the max: invalid argument')

  block = pool%allocate(0)
  call check(.not. c_associated(block), 'allocate(0) gives c_null_ptr')
  block = pool%allocate(64, attempt_limit=0, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'attempt_limit 0: invalid argument')
  block = pool%allocate(100_int64)
  call check(c_associated(block), 'allocate with an int64 size')
  call pool%deallocate(block, 100, stat=stat)
  call check(stat == TD_OK, 'deallocate')
  call pool%deallocate(block, 100, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'double free: invalid argument')
  call check(index(taskdag_last_error_message(), 'not allocated') > 0, 'the message says not allocated')

  ! Assignment shares the pool: each variable releases its own reference.
  shared = pool
  call check(c_associated(shared%c_handle(), pool%c_handle()), 'assignment shares the handle')
  call pool%release()
  call check(.not. pool%is_created(), 'release empties the variable')
  block = shared%allocate(64)
  call check(c_associated(block), 'the shared reference keeps the pool alive')
  stats = shared%statistics()
  call check(stats%consumed_blocks == 1, 'statistics through the shared reference')
  call shared%release()
  stats = shared%statistics(stat=stat)
  call check(stat == TD_ERROR_NULL_ARGUMENT, 'a released variable holds no pool')
  call pool%release(stat=stat)
  call check(stat == TD_OK, 'releasing an empty variable does nothing')

  call taskdag_finalize()
  call check(.not. taskdag_is_initialized(), 'finalize')

  call finish('fortran module')

end program test_fortran_module
