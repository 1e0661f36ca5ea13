!> Checks of the Fortran task-DAG layer: spawning a bind(c) task with bind(c) state from the
!> host and from a task, futures with shared ownership, when_all, respawn, respawn_when_all (and
!> its private form), statistics, and failures reported through `stat`.
module fortran_task_checks
  use, intrinsic :: iso_c_binding
  use taskdag
  implicit none

  type, bind(c) :: add_state
    integer(c_int64_t) :: a = 0, b = 0
    integer(c_int64_t) :: runs = 0
    type(c_ptr) :: child = c_null_ptr
  end type add_state

  type, bind(c) :: fan_in_state
    integer(c_int64_t) :: runs = 0
    integer(c_int64_t) :: private = 0  ! 1: taskdag_task_respawn_when_all_private
    type(c_ptr) :: child(4) = c_null_ptr  ! the fourth stays c_null_ptr
  end type fan_in_state

  integer :: second_respawn_stat = -1

contains

  !> First run: spawns a child computing b*2 and respawns after it; second run: a + child.
  recursive subroutine add_task(ctx, state) bind(c)
    type(c_ptr), value :: ctx, state
    type(add_state), pointer :: s
    type(add_state), target :: child_state
    integer(c_int64_t), pointer :: result
    type(c_funptr) :: double_it

    call c_f_pointer(state, s)
    call c_f_pointer(td_task_result(ctx), result)
    s%runs = s%runs + 1
    if (s%runs == 1) then
      double_it = c_funloc(double_task)
      child_state%a = s%b
      s%child = taskdag_task_spawn(ctx, double_it, c_loc(child_state), c_sizeof(child_state), &
                                   8_c_size_t, TD_PRIORITY_HIGH)
      call taskdag_task_respawn(ctx, s%child, TD_PRIORITY_LOW)
    else
      result = s%a + taskdag_future_int64(s%child)
    end if
  end subroutine add_task

  subroutine double_task(ctx, state) bind(c)
    type(c_ptr), value :: ctx, state
    type(add_state), pointer :: s
    integer(c_int64_t), pointer :: result

    call c_f_pointer(state, s)
    call c_f_pointer(td_task_result(ctx), result)
    result = 2 * s%a
  end subroutine double_task

  !> First run: spawns three children computing 2*1, 2*2, 2*3 and respawns once all of them
  !> completed (a c_null_ptr element is skipped), then tries a second respawn; second run: their
  !> sum.
  recursive subroutine fan_in_task(ctx, state) bind(c)
    type(c_ptr), value :: ctx, state
    type(fan_in_state), pointer :: s
    type(add_state), target :: child_state
    integer(c_int64_t), pointer :: result
    type(c_funptr) :: double_it
    integer :: i

    call c_f_pointer(state, s)
    call c_f_pointer(td_task_result(ctx), result)
    s%runs = s%runs + 1
    if (s%runs == 1) then
      double_it = c_funloc(double_task)
      do i = 1, 3
        child_state%a = i
        s%child(i) = taskdag_task_spawn(ctx, double_it, c_loc(child_state), &
                                        c_sizeof(child_state), 8_c_size_t)
      end do
      if (s%private == 0) then
        call taskdag_task_respawn_when_all(ctx, s%child, TD_PRIORITY_HIGH)
      else
        call taskdag_task_respawn_when_all_private(ctx, s%child, TD_PRIORITY_HIGH)
      end if
      call taskdag_task_respawn_when_all(ctx, s%child(1:1), stat=second_respawn_stat)
    else
      result = 0
      do i = 1, 3
        result = result + taskdag_future_int64(s%child(i))
      end do
    end if
  end subroutine fan_in_task

  subroutine release_children(state) bind(c)
    type(c_ptr), value :: state
    type(fan_in_state), pointer :: s
    integer :: i

    call c_f_pointer(state, s)
    do i = 1, size(s%child)
      call taskdag_future_release(s%child(i))
    end do
  end subroutine release_children

  subroutine release_child(state) bind(c)
    type(c_ptr), value :: state
    type(add_state), pointer :: s

    call c_f_pointer(state, s)
    call taskdag_future_release(s%child)
  end subroutine release_child

end module fortran_task_checks

program test_fortran_task
  use, intrinsic :: iso_c_binding
  use taskdag
  use fortran_task_checks
  use fortran_checks, only: check, finish
  implicit none

  type(taskdag_pool) :: pool
  type(taskdag_scheduler) :: sched
  type(taskdag_future) :: f, g, none
  type(add_state), target :: state
  type(fan_in_state), target :: fan_state
  type(td_scheduler_stats) :: stats
  type(c_funptr) :: task, destroy
  integer :: stat

  task = c_funloc(add_task)
  destroy = c_funloc(release_child)
  call taskdag_initialize()
  call pool%create(1048576)
  call sched%create(pool)

  state%a = 1
  state%b = 20
  call sched%spawn(f, task, c_loc(state), c_sizeof(state), 8_c_size_t, destroy=destroy)
  g = f  ! a second reference
  call check(.not. f%is_ready(), 'a task does not run before wait')
  call sched%wait()
  call check(f%is_ready() .and. g%is_ready(), 'complete after wait')
  call check(f%get_int64() == 41, 'result of the respawned task: 1 + 2*20')
  stats = sched%statistics()
  call check(stats%tasks_spawned == 2 .and. stats%tasks_respawned == 1, 'statistics')
  call check(stats%struct_size == c_sizeof(stats) .and. stats%waits == 1 .and. &
             stats%workers_sat_out == 0, 'statistics up to workers_sat_out line up with C')
  call check(stats%alive == 1, 'one task alive while its futures are held')
  call f%release()
  call check(g%get_int64() == 41, 'the other reference still reads the result')
  call g%release()
  stats = sched%statistics()
  call check(stats%alive == 0, 'released futures free their task')

  ! A spawn after a dependence, and failures through stat.
  task = c_funloc(double_task)
  call sched%spawn(f, task, c_loc(state), c_sizeof(state), 8_c_size_t)
  call sched%spawn(g, task, c_loc(state), c_sizeof(state), 8_c_size_t, after=f)
  call sched%spawn(none, task, c_loc(state), c_sizeof(state), 8_c_size_t, &
                   priority=7_c_int32_t, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'unknown priority: '//taskdag_status_name(stat))
  call check(none%is_null(), 'a failed spawn gives the null future')
  call check(f%get_int64(stat=stat) == 0 .and. stat == TD_ERROR_NOT_READY, 'get before wait')
  call sched%wait()
  call check(g%get_int64() == 2, 'dependent task ran')
  call f%release()
  call g%release()

  ! respawn(when_all(...)) in one call.
  task = c_funloc(fan_in_task)
  destroy = c_funloc(release_children)
  stats = sched%statistics()
  call sched%spawn(f, task, c_loc(fan_state), c_sizeof(fan_state), 8_c_size_t, destroy=destroy)
  call sched%wait()
  call check(f%get_int64() == 12, 'respawn_when_all: 2*1 + 2*2 + 2*3')
  call check(second_respawn_stat == TD_ERROR_INVALID_ARGUMENT, &
             'a second respawn in a run: '//taskdag_status_name(second_respawn_stat))
  g = f
  call f%release()
  block
    type(td_scheduler_stats) :: after
    after = sched%statistics()
    call check(after%tasks_spawned - stats%tasks_spawned == 4, 'respawn_when_all: spawns')
    call check(after%tasks_respawned - stats%tasks_respawned == 1, 'respawn_when_all: respawns')
    call check(after%task_executions - stats%task_executions == 5, 'respawn_when_all: runs')
    call check(after%when_alls_created - stats%when_alls_created <= 1, &
               'respawn_when_all: at most one when_all')
    call check(after%alive == 1, 'respawn_when_all: only the held task is alive')
  end block
  call g%release()
  stats = sched%statistics()
  call check(stats%alive == 0, 'respawn_when_all: nothing alive')

  ! The same with the promise that no other task uses the children meanwhile.
  fan_state%runs = 0
  fan_state%private = 1
  fan_state%child = c_null_ptr
  second_respawn_stat = -1
  call sched%spawn(f, task, c_loc(fan_state), c_sizeof(fan_state), 8_c_size_t, destroy=destroy)
  call sched%wait()
  call check(f%get_int64() == 12, 'respawn_when_all_private: 2*1 + 2*2 + 2*3')
  call check(second_respawn_stat == TD_ERROR_INVALID_ARGUMENT, &
             'respawn_when_all_private, then a second respawn: '// &
             taskdag_status_name(second_respawn_stat))
  call f%release()
  stats = sched%statistics()
  call check(stats%alive == 0, 'respawn_when_all_private: nothing alive')

  call sched%release()
  call pool%release()
  call taskdag_finalize()
  call finish('fortran task')

end program test_fortran_task
