!> Checks of the Fortran work-graph binding: the 1-based conversion (create_one_based, the
!> 1-based item numbers the work procedure receives, row_map/entries read back 1-based), the
!> transpose, runs on the Serial and Threads spaces in dependence order, priorities, reuse, and
!> errors reported through stat.
module work_graph_checks
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int64
  use taskdag
  implicit none

  integer, parameter :: n = 4
  !> Predecessors of each item (1-based), from the transposed graph.
  integer(int64), allocatable :: before_row(:), before(:)
  !> Per item: how often it ran; and the order of the calls on one thread.
  integer :: runs(n), order(n), calls
  integer :: violations

contains

  !> A work procedure: checks that every predecessor ran in this run, then counts the item.
  recursive subroutine record(i, user)
    integer(int64), intent(in) :: i
    type(c_ptr), intent(in) :: user
    integer, pointer :: run
    integer(int64) :: k

    call c_f_pointer(user, run)
    do k = before_row(i), before_row(i + 1) - 1
      if (runs(before(k)) /= run) violations = violations + 1
    end do
    runs(i) = runs(i) + 1
    if (run == 1) then
      calls = calls + 1
      order(calls) = int(i)
    end if
  end subroutine record

  subroutine expect(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what

    if (.not. condition) then
      print '(a)', 'FAILED: '//what
      error stop 1
    end if
  end subroutine expect

end module work_graph_checks

program test_fortran_work_graph
  use work_graph_checks
  implicit none

  type(taskdag_crs) :: graph, transposed, back, bad
  type(taskdag_work_graph) :: plan, by_priority
  type(c_ptr) :: serial, threads
  integer, target :: run
  integer :: stat
  ! The diamond 1 -> {2, 3} -> 4 in Fortran's 1-based numbering.
  integer, parameter :: row_map(n + 1) = [1, 3, 4, 5, 5]
  integer, parameter :: entries(4) = [2, 3, 4, 4]

  call taskdag_initialize()

  call graph%create_one_based(row_map, entries)
  call expect(graph%num_rows() == n .and. graph%num_entries() == 4, 'sizes')
  call expect(all(graph%row_map(one_based=.true.) == row_map), '1-based row_map read back')
  call expect(all(graph%entries(one_based=.true.) == entries), '1-based entries read back')
  call expect(all(graph%row_map() == row_map - 1), 'stored 0-based')

  call transposed%create_transpose(graph)
  before_row = transposed%row_map(one_based=.true.)
  before = transposed%entries(one_based=.true.)
  call expect(all(before == [1_int64, 1_int64, 2_int64, 3_int64]), 'predecessors of 2, 3 and 4')
  call back%create_transpose(transposed)
  call expect(all(back%row_map() == graph%row_map()) .and. all(back%entries() == graph%entries()), &
              'transpose of the transpose')

  call plan%create(graph)
  call expect(plan%num_items() == n, 'num_items')
  serial = c_null_ptr
  call expect(td_space_serial(serial) == TD_OK, 'td_space_serial')
  runs = 0
  violations = 0
  calls = 0
  run = 1
  call plan%run(record, c_loc(run), space=serial)
  call expect(all(runs == 1) .and. violations == 0, 'serial run in dependence order')
  call expect(order(1) == 1 .and. order(n) == 4, 'item 1 first and item 4 last, 1-based')
  threads = c_null_ptr
  call expect(td_space_threads(threads) == TD_OK, 'td_space_threads')
  do run = 2, 101
    call plan%run(record, c_loc(run), space=threads)
  end do
  call expect(all(runs == 101) .and. violations == 0, '100 runs on the Threads space')
  call plan%run(record, c_loc(run))   ! default space: the Threads space
  call expect(all(runs == 102) .and. violations == 0, 'run on the default space')

  ! Priorities: 2 (Low) and 3 (High) are ready together after 1; 3 runs first on one worker.
  call by_priority%create(graph, [TD_PRIORITY_REGULAR, TD_PRIORITY_LOW, TD_PRIORITY_HIGH, &
                                  TD_PRIORITY_REGULAR])
  runs = 0
  calls = 0
  run = 1
  call by_priority%run(record, c_loc(run), space=serial)
  call expect(all(order == [1, 3, 2, 4]), 'High before Low on one worker')
  call by_priority%create(graph, [TD_PRIORITY_HIGH], stat=stat)
  call expect(stat == TD_ERROR_INVALID_ARGUMENT, 'priorities of the wrong size')

  ! Errors through stat: offsets that are 0-based passed as 1-based, and a cycle.
  call bad%create_one_based([0, 1, 1], [1], stat=stat)
  call expect(stat == TD_ERROR_INVALID_ARGUMENT, 'a row_map not starting at 1')
  call expect(index(taskdag_last_error_message(), 'row_map[0] = -1') > 0, 'message names row_map')
  call bad%create_one_based([1, 2, 3], [2, 1])
  call plan%create(bad, stat=stat)
  call expect(stat == TD_ERROR_CYCLE, 'a cycle')
  call expect(index(taskdag_last_error_message(), 'cycle of length 2') > 0, 'cycle message')

  call expect(td_space_release(serial) == TD_OK .and. td_space_release(threads) == TD_OK, &
              'release spaces')
  call plan%release()
  call by_priority%release()
  call graph%release()
  call transposed%release()
  call back%release()
  call bad%release()
  call taskdag_finalize()
  print '(a)', 'fortran work graph: all checks passed'
end program test_fortran_work_graph
