!> Tests of the Fortran CUDA entry points (include/taskdag.f90): device detection, pools in a
!> memory space (device and pinned), reset, and the statuses without a usable GPU (CI) or with one.
!> Prints one line per failed check and "fortran cuda: all checks passed" at the end.
program test_fortran_cuda
  use, intrinsic :: iso_c_binding, only: c_ptr, c_associated
  use taskdag
  use fortran_checks, only: check, finish
  implicit none

  integer :: stat, count
  type(taskdag_pool) :: host, device
  type(c_ptr) :: block

  call taskdag_initialize()

  count = taskdag_cuda_device_count()
  call check(count >= 0, 'device count is not negative')
  if (taskdag_cuda_available()) call check(count > 0, 'available implies a device')

  ! A host pool has nothing to reset: misuse is reported, and the pool still works.
  call host%create(65536, stat=stat)
  call check(stat == TD_OK, 'host pool created')
  call host%reset(stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'reset of a host pool is INVALID_ARGUMENT')
  block = host%allocate(64)
  call check(c_associated(block), 'the host pool still allocates after a refused reset')
  call host%deallocate(block, 64)
  call host%release()

  call device%create(1048576, stat=stat, memory_space=TD_SPACE_CUDA)
  if (taskdag_cuda_available()) then
    call check(stat == TD_OK, 'device pool created')
    call check(device%capacity() >= 1048576_8, 'device pool capacity')
    call device%reset(stat=stat)
    call check(stat == TD_OK, 'device pool reset')
    call device%release()
  else
    call check(stat == TD_ERROR_UNAVAILABLE, 'a device pool without a GPU is UNAVAILABLE')
    call check(.not. device%is_created(), 'nothing is created on failure')
    print '(a)', 'fortran cuda: SKIPPED device pool: no usable GPU'
  end if

  ! A pinned pool is a host pool in page-locked memory, or UNAVAILABLE without a GPU.
  call host%create(65536, stat=stat, memory_space=TD_SPACE_CUDA_HOST_PINNED)
  if (taskdag_cuda_available()) then
    call check(stat == TD_OK, 'pinned pool created')
    block = host%allocate(64)
    call check(c_associated(block), 'the pinned pool allocates on the host')
    call host%deallocate(block, 64)
    call host%release()
  else
    call check(stat == TD_ERROR_UNAVAILABLE, 'a pinned pool without a GPU is UNAVAILABLE')
  end if

  call taskdag_finalize()
  call finish('fortran cuda')
end program test_fortran_cuda
