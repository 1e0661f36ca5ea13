!> Callbacks of the Fortran dispatch test: bind(c) procedures that reach their data through the
!> `user` pointer (c_loc of a target variable).
module dispatch_test_bodies
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use taskdag
  implicit none

  !> Two vectors for the loops, and what the instance test saw.
  type :: vectors
    integer(int64) :: n = 0
    real(c_double), allocatable :: x(:), y(:)   ! indices 0 .. n-1
  end type vectors

  !> What each member of each league entry found wrong (0 = nothing), indexed (league, rank).
  integer, parameter :: max_league = 8, max_team = 64
  type :: team_checks
    integer :: wrong(0:max_league - 1, 0:max_team - 1) = -1
    integer :: covered(0:99, 0:max_league - 1) = 0   ! (index, league): a column per entry
  end type team_checks

  !> A custom reduction's value: a sum and a count.
  type, bind(c) :: sum_count
    real(c_double) :: sum
    integer(c_int64_t) :: count
  end type sum_count

  integer :: instance_calls = 0
  integer :: instance_threads = -1
  integer :: instance_status = -1

contains

  subroutine fill(begin, end, user) bind(c)
    integer(c_int64_t), value :: begin, end
    type(c_ptr), value :: user
    type(vectors), pointer :: v
    integer(int64) :: i

    call c_f_pointer(user, v)
    do i = begin, end - 1
      v%x(i) = real(i, c_double)
      v%y(i) = 2.0_c_double
    end do
  end subroutine fill

  subroutine dot(begin, end, acc, user) bind(c)
    integer(c_int64_t), value :: begin, end
    real(c_double), intent(inout) :: acc
    type(c_ptr), value :: user
    type(vectors), pointer :: v
    integer(int64) :: i

    call c_f_pointer(user, v)
    do i = begin, end - 1
      acc = acc + v%x(i) * v%y(i)
    end do
  end subroutine dot

  subroutine count_up(begin, end, acc, user) bind(c)
    integer(c_int64_t), value :: begin, end
    integer(c_int64_t), intent(inout) :: acc
    type(c_ptr), value :: user
    integer(int64) :: i

    do i = begin, end - 1
      acc = acc + i
    end do
  end subroutine count_up

  subroutine largest(begin, end, acc, user) bind(c)
    integer(c_int64_t), value :: begin, end
    integer(c_int32_t), intent(inout) :: acc
    type(c_ptr), value :: user
    integer(int64) :: i

    do i = begin, end - 1
      acc = max(acc, int(mod(i * 7919_int64, 1009_int64), c_int32_t))
    end do
  end subroutine largest

  subroutine halves(begin, end, acc, user) bind(c)
    integer(c_int64_t), value :: begin, end
    real(c_float), intent(inout) :: acc
    type(c_ptr), value :: user
    integer(int64) :: i

    do i = begin, end - 1
      acc = acc + 0.5_c_float
    end do
  end subroutine halves

  subroutine sum_count_body(begin, end, value, user) bind(c)
    integer(c_int64_t), value :: begin, end
    type(sum_count), intent(inout) :: value
    type(c_ptr), value :: user
    integer(int64) :: i

    do i = begin, end - 1
      value%sum = value%sum + 1.5_c_double
      value%count = value%count + 1
    end do
  end subroutine sum_count_body

  subroutine sum_count_init(value, user) bind(c)
    type(c_ptr), value :: value, user
    type(sum_count), pointer :: v

    call c_f_pointer(value, v)
    v = sum_count(0.0_c_double, 0_c_int64_t)
  end subroutine sum_count_init

  subroutine sum_count_join(dst, src, user) bind(c)
    type(c_ptr), value :: dst, src, user
    type(sum_count), pointer :: d, s

    call c_f_pointer(dst, d)
    call c_f_pointer(src, s)
    d%sum = d%sum + s%sum
    d%count = d%count + s%count
  end subroutine sum_count_join

  subroutine mark(begin, end, user) bind(c)
    integer(c_int64_t), value :: begin, end
    type(c_ptr), value :: user
    integer, pointer :: row(:)
    integer(int64) :: i

    call c_f_pointer(user, row, [100])
    do i = begin, end - 1
      row(i + 1) = row(i + 1) + 1
    end do
  end subroutine mark

  !> Every member checks scratch memory across barriers and the collectives; counts mistakes.
  subroutine team_body(team, user) bind(c)
    type(c_ptr), value :: team, user
    type(team_checks), pointer :: checks
    type(taskdag_team) :: member
    real(c_double), pointer :: scratch(:)
    integer(int64) :: bytes
    integer :: r, size, l, it, k, wrong
    integer(c_int64_t) :: total, v64
    integer(c_int32_t) :: v32
    real(c_double) :: d
    real(c_float) :: f

    call c_f_pointer(user, checks)
    member = taskdag_team_member(team)
    r = member%rank()
    size = member%size()
    l = member%league_rank()
    wrong = 0
    if (member%league_size() /= 4) wrong = wrong + 1
    call c_f_pointer(member%scratch(bytes), scratch, [size])
    if (bytes /= 8 * size) wrong = wrong + 1
    do it = 1, 100
      scratch(r + 1) = real(l * 1000 + it * 10 + r, c_double)
      call member%barrier()
      do k = 0, size - 1
        if (scratch(k + 1) /= real(l * 1000 + it * 10 + k, c_double)) wrong = wrong + 1
      end do
      call member%barrier()
    end do
    v64 = r + 1
    call member%reduce(TD_REDUCE_SUM, v64)
    if (v64 /= size * (size + 1) / 2) wrong = wrong + 1
    d = real(r, c_double)
    call member%reduce(TD_REDUCE_MAX, d)
    if (d /= real(size - 1, c_double)) wrong = wrong + 1
    v64 = 1
    call member%scan(TD_REDUCE_SUM, .false., v64, total)
    if (v64 /= r .or. total /= size) wrong = wrong + 1
    v32 = 2
    call member%scan(TD_REDUCE_SUM, .true., v32)
    if (v32 /= 2 * (r + 1)) wrong = wrong + 1
    f = real(r, c_float)
    call member%broadcast(f, size - 1)
    if (f /= real(size - 1, c_float)) wrong = wrong + 1
    call member%parallel_for(0_int64, 100_int64, mark, c_loc(checks%covered(0, l)))
    v64 = -1
    call member%parallel_reduce(0_int64, 100_int64, count_up, TD_REDUCE_SUM, v64)
    if (v64 /= 4950) wrong = wrong + 1
    if (.not. taskdag_in_parallel()) wrong = wrong + 1
    checks%wrong(l, r) = wrong
  end subroutine team_body

  !> run_instances' control function: dispatches on its own sub-instance.
  subroutine control(instance, index, user) bind(c)
    type(c_ptr), value :: instance
    integer(c_size_t), value :: index
    type(c_ptr), value :: user
    type(taskdag_space) :: mine
    integer(c_int64_t) :: sum

    instance_calls = instance_calls + 1
    call mine%retain(instance)
    instance_threads = mine%concurrency()
    sum = 0
    call mine%parallel_reduce(0_int64, 1000_int64, count_up, TD_REDUCE_SUM, sum, &
                              stat=instance_status)
    if (sum /= 499500 .or. index /= 0) instance_status = -2
    call mine%release()
  end subroutine control

end module dispatch_test_bodies

!> Tests of the dispatch part of the Fortran module: taskdag_space, parallel_for and
!> parallel_reduce for the four types, parallel_team with taskdag_team members, run_instances,
!> a custom reduction through the C interfaces, and failures through `stat`.
!> Prints one line per failed check and "fortran dispatch: all checks passed" at the end.
program test_fortran_dispatch
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use taskdag
  use dispatch_test_bodies
  use fortran_checks, only: check, finish
  implicit none

  integer :: stat, threads, rep, team_size
  integer(int64), parameter :: n = 100000
  type(taskdag_space) :: space, serial, half, copy
  type(vectors), target :: v
  type(team_checks), target :: checks
  real(c_double) :: d, first
  integer(c_int64_t) :: total
  integer(c_int32_t) :: biggest
  real(c_float) :: f
  type(td_reducer) :: reducer
  type(td_range_policy) :: policy
  type(sum_count), target :: sc

  call taskdag_initialize()
  call space%threads()
  call serial%serial()
  threads = space%concurrency()
  call check(threads >= 1 .and. threads <= int(td_max_hardware_threads()), 'concurrency')
  call check(space%kind() == TD_EXEC_THREADS .and. serial%kind() == TD_EXEC_SERIAL, 'kinds')
  call check(serial%concurrency() == 1, 'the Serial space has one thread')
  call space%mask(0.5_c_double, half)
  call check(half%concurrency() == (threads + 1) / 2, 'a mask takes the ceiling')
  copy = space
  call check(copy%concurrency() == threads, 'assignment shares the space')
  call space%fence()
  call check(td_thread_pool_rank() == 0, 'the initializing thread is pool rank 0')

  ! --- parallel_for and parallel_reduce ------------------------------------------------------
  v%n = n
  allocate (v%x(0:n - 1), v%y(0:n - 1))
  v%x = -1
  call space%parallel_for(0_int64, n, fill, c_loc(v))
  call check(all(v%y == 2.0_c_double) .and. v%x(n - 1) == real(n - 1, c_double), 'parallel_for')
  d = -1
  call space%parallel_reduce(0_int64, n, dot, TD_REDUCE_SUM, d, c_loc(v))
  call check(d == real(n * (n - 1), c_double), 'a real64 dot product')
  first = d
  do rep = 1, 20
    call space%parallel_reduce(0_int64, n, dot, TD_REDUCE_SUM, d, c_loc(v), chunk_size=777_int64)
    call check(d == first, 'real64 sums repeat exactly')
  end do
  total = 0
  call space%parallel_reduce(0_int64, 10000000_int64, count_up, TD_REDUCE_SUM, total)
  call check(total == 10000000_int64 * 9999999_int64 / 2, 'an int64 sum equals the formula')
  biggest = 0
  call serial%parallel_reduce(0_int64, 5000_int64, largest, TD_REDUCE_MAX, biggest)
  call check(biggest == 1008, 'an int32 max on the Serial space')
  f = 0
  call space%parallel_reduce(0_int64, 1000_int64, halves, TD_REDUCE_SUM, f)
  call check(f == 500.0_c_float, 'a real32 sum')

  ! A custom reduction through the C interfaces.
  reducer = td_reducer_init()
  reducer%value_size = c_sizeof(sc)
  reducer%init = c_funloc(sum_count_init)
  reducer%join = c_funloc(sum_count_join)
  policy = td_range_policy_init()
  policy%end = 1000
  call check(td_parallel_reduce_custom(space%c_handle(), policy, c_funloc(sum_count_body), &
                                       c_null_ptr, reducer, c_loc(sc)) == TD_OK, &
             'td_parallel_reduce_custom')
  call check(sc%sum == 1500.0_c_double .and. sc%count == 1000, 'the custom reduction')

  ! --- teams --------------------------------------------------------------------------------
  do team_size = 1, min(threads, max_team)
    checks%wrong = -1
    checks%covered = 0
    call space%parallel_team(4, team_size, team_body, c_loc(checks), scratch_bytes=8 * team_size)
    call check(all(checks%wrong(0:3, 0:team_size - 1) == 0), 'every team member checked out')
    call check(all(checks%covered(:, 0:3) == 1), 'team-level parallel_for covers 0..99 once')
  end do

  ! --- instances ----------------------------------------------------------------------------
  call space%run_instances([1], control)
  call check(instance_calls == 1 .and. instance_threads == 1 .and. instance_status == TD_OK, &
             'run_instances runs the control function on a one-thread instance')
  call space%run_instances([threads + 1], control, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT .and. instance_calls == 1, &
             'over-subscription is rejected before anything runs')

  ! --- failures through stat ----------------------------------------------------------------
  call space%parallel_for(5_int64, 4_int64, fill, c_loc(v), stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'end < begin: invalid argument')
  call check(index(taskdag_last_error_message(), '[5, 4)') > 0, 'the message names the range')
  call space%parallel_reduce(0_int64, n, dot, 99_c_int32_t, d, c_loc(v), stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'an unknown operator: invalid argument')
  call space%parallel_team(1, threads + 1, team_body, c_loc(checks), stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'a team larger than the space: invalid argument')
  call space%parallel_team(-1, 1, team_body, c_loc(checks), stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'a negative league size: invalid argument')
  call space%mask(1.5_c_double, half, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'a mask above 1: invalid argument')
  call check(half%concurrency() == (threads + 1) / 2, 'a failed mask leaves the variable as it was')
  call half%release()

  call space%release()
  call check(.not. space%is_created(), 'release empties the variable')
  call space%parallel_for(0_int64, n, fill, c_loc(v), stat=stat)
  call check(stat == TD_ERROR_NULL_ARGUMENT, 'a released variable: null argument')
  call serial%release()
  call copy%release()
  call taskdag_finalize()

  call finish('fortran dispatch')

end program test_fortran_dispatch
