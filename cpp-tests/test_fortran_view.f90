!> Tests of the Fortran views (include/taskdag.f90): a Fortran array wrapped without copying,
!> views seen as Fortran pointer arrays, round trips through LayoutRight views, subviews with
!> 1-based slices, fill, resize, mirrors, sharing, and the statuses of misuse.
!> Prints one line per failed check and "fortran views: all checks passed" at the end.
program test_fortran_view
  use, intrinsic :: iso_c_binding, only: c_ptr, c_associated, c_loc, c_int64_t, c_null_ptr
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64
  use taskdag
  use fortran_checks, only: check, finish
  implicit none

  integer :: stat, i, j, k
  real(real64), allocatable, target :: a(:,:)
  integer(int64), allocatable, target :: cube(:,:,:)
  real(real64), pointer :: p(:,:), row(:), q(:,:)
  integer(int32), pointer :: ip(:)
  integer(int64), pointer :: cp(:,:,:)
  type(taskdag_view) :: wrapped, right, left, sub, ints, padded, mirror, shared, w3
  type(c_ptr) :: address
  integer(c_int64_t) :: c_index(2)
  logical :: same

  call taskdag_initialize()

  ! --- wrap a Fortran array: no copy, column-major, 1-based on the Fortran side --------------
  allocate (a(3, 4))
  do j = 1, 4
    do i = 1, 3
      a(i, j) = 10 * i + j
    end do
  end do
  call wrapped%wrap(a, 'a')
  call check(wrapped%rank() == 2 .and. wrapped%extent(1) == 3 .and. wrapped%extent(2) == 4, &
             'wrap keeps the shape')
  call check(wrapped%layout() == TD_LAYOUT_LEFT, 'a wrapped Fortran array is TD_LAYOUT_LEFT')
  call check(.not. wrapped%is_managed(), 'a wrapped array is unmanaged')
  call check(wrapped%label() == 'a', 'the label')
  c_index = [1_c_int64_t, 2_c_int64_t]  ! C's (1, 2) is Fortran's (2, 3)
  call check(td_view_ptr(wrapped%c_handle(), c_index, address) == TD_OK, 'td_view_ptr')
  call check(c_associated(address, c_loc(a(2, 3))), 'C element (1, 2) is a(2, 3): no copy')
  call wrapped%as_array(p)
  call check(associated(p) .and. all(shape(p) == [3, 4]), 'as_array has the shape')
  call check(c_associated(c_loc(p(1, 1)), c_loc(a(1, 1))), 'as_array points at the array')
  p(3, 4) = -1.0_real64
  call check(a(3, 4) == -1.0_real64, 'writes through the pointer reach the array')
  a(3, 4) = 34.0_real64

  ! --- round trip through a LayoutRight view -------------------------------------------------
  call right%create('right', TD_ELEMENT_DOUBLE, [3, 4], layout=TD_LAYOUT_RIGHT)
  call taskdag_deep_copy(right, wrapped)
  same = .true.
  do j = 1, 4
    do i = 1, 3
      c_index = [int(i - 1, c_int64_t), int(j - 1, c_int64_t)]
      call check(td_view_ptr(right%c_handle(), c_index, address) == TD_OK, 'td_view_ptr right')
      call c_value(address, same, a(i, j))
    end do
  end do
  call check(same, 'deep_copy into LayoutRight permutes the elements')
  call right%as_array(q, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT .and. .not. associated(q), &
             'as_array refuses a LayoutRight view')
  call left%create('left', TD_ELEMENT_DOUBLE, [3_int64, 4_int64])
  call taskdag_deep_copy(left, right)
  call left%as_array(q)
  call check(all(q == a), 'LayoutLeft -> LayoutRight -> LayoutLeft gives the array back')

  ! --- subviews with 1-based slices ------------------------------------------------------------
  call wrapped%subview(sub, [taskdag_slice_index(2), taskdag_slice_all()])
  call sub%as_array(row)
  call check(size(row) == 4 .and. all(row == a(2, :)), 'row 2 of the array, strided')
  call wrapped%subview(sub, [taskdag_slice_range(2, 3), taskdag_slice_range(2, 4)])
  call sub%as_array(q)
  call check(all(shape(q) == [2, 3]) .and. all(q == a(2:3, 2:4)), 'a(2:3, 2:4) as a subview')
  call wrapped%subview(sub, [taskdag_slice_all(), taskdag_slice_index(5)], stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'an index past the extent is rejected')
  call check(index(taskdag_last_error_message(), 'view "a"') > 0 .and. &
             index(taskdag_last_error_message(), 'dimension 1') > 0, &
             'the message names the label and the (C) dimension')

  ! --- padded column-major views --------------------------------------------------------------
  call padded%create('padded', TD_ELEMENT_DOUBLE, [100, 3], flags=TD_VIEW_PAD)
  call check(padded%stride(2) == 104, 'columns of 100 doubles padded to 104')
  call padded%as_array(q)
  call check(all(shape(q) == [100, 3]), 'a padded view as a Fortran array section')
  q(100, 3) = 7.0_real64
  call padded%fill(2.5_real64)
  call check(all(q == 2.5_real64), 'fill reaches every element of the section')

  ! --- integer views, fill and type checks -----------------------------------------------------
  call ints%create('ints', TD_ELEMENT_INT32, [5])
  call ints%fill(7_int32)
  call ints%as_array(ip)
  call check(all(ip == 7), 'fill an int32 view')
  call ints%fill(1.0_real64, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'fill with a value of another type is refused')
  call ints%as_array(row, stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'as_array of another type is refused')
  call ints%resize([8], stat=stat)
  call ints%as_array(ip)
  call check(stat == TD_OK .and. size(ip) == 8 .and. all(ip(1:5) == 7) .and. all(ip(6:8) == 0), &
             'resize keeps the old elements and zero-fills the rest')
  call ints%realloc([2])
  call ints%as_array(ip)
  call check(size(ip) == 2 .and. all(ip == 0), 'realloc starts over')

  allocate (cube(2, 3, 4))
  cube = reshape([(int(k, int64), k = 1, 24)], [2, 3, 4])
  call w3%wrap(cube, 'cube')
  call w3%as_array(cp)
  call check(all(cp == cube), 'a rank-3 int64 array round trip')
  call w3%wrap(cube(:, 1, :), 'section', stat=stat)
  call check(stat == TD_ERROR_INVALID_ARGUMENT, 'wrap refuses a non-contiguous section')

  ! --- mirrors and sharing -----------------------------------------------------------------------
  call right%create_mirror(mirror)
  call check(mirror%label() == 'right_mirror' .and. mirror%layout() == TD_LAYOUT_RIGHT, &
             'a mirror has the label and layout of its view')
  call wrapped%create_mirror_view(mirror)
  call check(mirror%use_count() == wrapped%use_count() .and. wrapped%use_count() >= 2, &
             'a host mirror view shares the array')
  shared = left
  call check(shared%label() == 'left', 'assignment shares the view')
  call left%release()
  call shared%as_array(q)
  call check(all(q == a), 'the shared view outlives the released variable')

  call shared%release()
  call mirror%release()
  call sub%release()
  call padded%release()
  call ints%release()
  call w3%release()
  call right%release()
  call wrapped%release()
  call check(a(2, 3) == 23.0_real64, 'the wrapped array is still ours after release')
  deallocate (a, cube)
  call taskdag_finalize()

  call finish('fortran views')

contains

  !> Compares the double at `address` with `expected`.
  subroutine c_value(address, same, expected)
    use, intrinsic :: iso_c_binding, only: c_f_pointer, c_double
    type(c_ptr), intent(in) :: address
    logical, intent(inout) :: same
    real(real64), intent(in) :: expected
    real(c_double), pointer :: x

    call c_f_pointer(address, x)
    same = same .and. x == expected
  end subroutine c_value
end program test_fortran_view
