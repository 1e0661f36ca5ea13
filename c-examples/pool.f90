!> pool.f90: a memory pool from Fortran.
!>
!> Allocates blocks from a taskdag pool, views them as Fortran arrays, and shows the pool's
!> statistics and how a full pool and a bad request are reported through `stat`.
program pool_example
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated, c_double
  use taskdag
  implicit none

  integer, parameter :: n = 100  ! doubles per block: 800 bytes, a 1024-byte block
  type(taskdag_pool) :: pool, uncached
  type(td_pool_stats) :: stats
  type(c_ptr) :: blocks(8)
  real(c_double), pointer :: x(:)
  integer :: i, stat
  logical :: ok

  call taskdag_initialize()
  call pool%create(65536, min_superblock_size=8192)  ! 64 KiB in 8 superblocks
  print '(a,i0,a,i0,a,i0)', 'capacity ', pool%capacity(), ' bytes, blocks of ', &
    pool%min_block_size(), ' to ', pool%max_block_size()
  print '(a,i0)', 'a block of 800 bytes takes ', pool%block_size(8 * n)

  ! Each block holds n doubles; the pointer x views it as a Fortran array.
  ok = .true.
  do i = 1, size(blocks)
    blocks(i) = pool%allocate(8 * n)
    call c_f_pointer(blocks(i), x, [n])
    x = real(i, c_double)
  end do
  do i = 1, size(blocks)
    call c_f_pointer(blocks(i), x, [n])
    ok = ok .and. all(x == real(i, c_double))
  end do
  stats = pool%statistics()
  print '(a,i0,a,i0,a)', 'in use: ', stats%consumed_blocks, ' blocks, ', stats%consumed_bytes, ' bytes'
  ok = ok .and. stats%consumed_blocks == size(blocks) .and. stats%consumed_bytes == 1024 * size(blocks)
  do i = 1, size(blocks)
    call pool%deallocate(blocks(i), 8 * n)
  end do

  ! Freed blocks wait in this thread's cache for its next allocations of their size; a thread
  ! done with the pool for a while hands them back.
  stats = pool%statistics()
  print '(a,i0)', 'freed blocks in this thread''s cache: ', stats%cached_blocks
  ok = ok .and. stats%cached_blocks > 0 .and. stats%consumed_blocks == 0
  call pool%flush_thread_cache(stat)
  stats = pool%statistics()
  ok = ok .and. stat == TD_OK .and. stats%cached_blocks == 0

  ! A pool without thread caches returns every freed block at once.
  call uncached%create(65536, thread_cache=.false.)
  blocks(1) = uncached%allocate(64)
  call uncached%deallocate(blocks(1), 64)
  stats = uncached%statistics()
  ok = ok .and. stats%cached_blocks == 0 .and. stats%consumed_blocks == 0
  call uncached%release()

  ! A request above the max block size is misuse: with `stat` it is reported, not fatal.
  blocks(1) = pool%allocate(1000000, stat=stat)
  print '(a,a)', 'allocate(1000000): ', taskdag_status_name(stat)
  ok = ok .and. stat == TD_ERROR_INVALID_ARGUMENT .and. .not. c_associated(blocks(1))

  ! Filling the pool: the 17th block of 4096 bytes does not fit in 64 KiB.
  do i = 1, 17
    blocks(1) = pool%allocate(4096, stat=stat)
    if (stat /= TD_OK) exit
  end do
  print '(a,i0,a,a)', 'allocation ', i, ' of 4096 bytes: ', taskdag_status_name(stat)
  ok = ok .and. i == 17 .and. stat == TD_ERROR_POOL_EXHAUSTED
  stats = pool%statistics()
  print '(a,i0)', 'failed allocations: ', stats%failed_allocations
  ok = ok .and. stats%failed_allocations == 1

  call pool%release()  ! frees the pool and with it the 16 blocks still allocated
  call taskdag_finalize()
  if (.not. ok) error stop 'pool.f90: unexpected results'
  print '(a)', 'pool.f90: done'
end program pool_example
