!> fib_task.f90: the naive task-parallel Fibonacci of 000 Fig. 3.4 from Fortran.
!>
!> The task is a bind(c) subroutine; its state is a bind(c) derived type that taskdag copies into
!> the task. F(n-2) is spawned at high priority, F(n-1) at regular priority; the task respawns
!> once both have completed and adds their results on its second run. Its destroy procedure
!> releases the children's futures when it completes.
module fib_tasks
  use, intrinsic :: iso_c_binding
  use taskdag
  implicit none
  private
  public :: fib_state, fib_task, fib_destroy

  type, bind(c) :: fib_state
    integer(c_int64_t) :: n = 0
    type(c_ptr) :: child(2) = c_null_ptr
  end type fib_state

contains

  recursive subroutine fib_task(ctx, state) bind(c)
    type(c_ptr), value :: ctx, state
    type(fib_state), pointer :: s
    integer(c_int64_t), pointer :: result
    type(fib_state), target :: child
    type(c_funptr) :: task, destroy

    ! Function addresses in variables: gfortran puts c_funloc constants passed directly into
    ! read-only data, which needs text relocations in a position-independent executable.
    task = c_funloc(fib_task)
    destroy = c_funloc(fib_destroy)
    call c_f_pointer(state, s)
    call c_f_pointer(td_task_result(ctx), result)
    if (s%n < 2) then
      result = s%n
    else if (c_associated(s%child(1))) then
      result = taskdag_future_int64(s%child(1)) + taskdag_future_int64(s%child(2))
    else
      child%n = s%n - 2
      s%child(1) = taskdag_task_spawn(ctx, task, c_loc(child), c_sizeof(child), &
                                      c_sizeof(result), TD_PRIORITY_HIGH, destroy=destroy)
      child%n = s%n - 1
      s%child(2) = taskdag_task_spawn(ctx, task, c_loc(child), c_sizeof(child), &
                                      c_sizeof(result), destroy=destroy)
      ! Fig. 3.4's respawn(when_all(...)) in one call, no future made; the children are this
      ! task's own (no other task uses its futures).
      call taskdag_task_respawn_when_all_private(ctx, s%child, TD_PRIORITY_HIGH)
    end if
  end subroutine fib_task

  subroutine fib_destroy(state) bind(c)
    type(c_ptr), value :: state
    type(fib_state), pointer :: s

    call c_f_pointer(state, s)
    call taskdag_future_release(s%child(1))
    call taskdag_future_release(s%child(2))
  end subroutine fib_destroy

end module fib_tasks

program fib_task_example
  use, intrinsic :: iso_c_binding
  use taskdag
  use fib_tasks
  implicit none

  integer(c_int64_t), parameter :: n = 25, expected = 75025
  type(taskdag_pool) :: pool
  type(taskdag_scheduler) :: sched
  type(taskdag_future) :: f
  type(fib_state), target :: root
  type(td_scheduler_stats) :: stats
  integer(c_int64_t) :: value
  type(c_funptr) :: task, destroy

  task = c_funloc(fib_task)
  destroy = c_funloc(fib_destroy)
  call taskdag_initialize()
  call pool%create(8388608)
  call sched%create(pool)
  root%n = n
  call sched%spawn(f, task, c_loc(root), c_sizeof(root), 8_c_size_t, destroy=destroy)
  call sched%wait()
  value = f%get_int64()
  stats = sched%statistics()
  print '(a,i0,a,i0,a,i0,a)', 'F(', n, ') = ', value, ' on ', sched%concurrency(), ' worker(s)'
  print '(a,i0,a,i0,a,i0)', 'tasks ', stats%tasks_spawned, ', respawns ', stats%tasks_respawned, &
    ', peak alive ', stats%peak_alive
  if (value /= expected) error stop 'wrong Fibonacci number'
  call f%release()
  call sched%release()
  call pool%release()
  call taskdag_finalize()
  print '(a)', 'fib_task.f90: done'
end program fib_task_example
