!> views.f90: taskdag views from Fortran.
!>
!> Wraps a Fortran array as a view without copying, copies it into a C-order (LayoutRight) view
!> and back, looks at a column through a subview, and uses views as Fortran pointer arrays
!> (1-based, column-major). Misuse is reported through `stat`.
program views_example
  use, intrinsic :: iso_fortran_env, only: real64
  use taskdag
  implicit none

  real(real64), allocatable, target :: field(:,:)
  real(real64), pointer :: back(:,:), column(:), padded_array(:,:)
  type(taskdag_view) :: wrapped, c_order, copy, sub, padded
  integer :: i, j, stat

  call taskdag_initialize()

  allocate (field(4, 3))
  do j = 1, 3
    do i = 1, 4
      field(i, j) = 10 * i + j
    end do
  end do

  ! The Fortran array itself, as a column-major view: no copy is made.
  call wrapped%wrap(field, 'field')
  print '(a,i0,a,i0,a)', 'field: strides (', wrapped%stride(1), ', ', wrapped%stride(2), ')'

  ! deep_copy into C order permutes the elements; copying back restores Fortran order.
  call c_order%create('c_order', TD_ELEMENT_DOUBLE, [4, 3], layout=TD_LAYOUT_RIGHT)
  call taskdag_deep_copy(c_order, wrapped)
  print '(a,i0,a,i0,a)', 'c_order: strides (', c_order%stride(1), ', ', c_order%stride(2), ')'
  call copy%create('copy', TD_ELEMENT_DOUBLE, [4, 3])
  call taskdag_deep_copy(copy, c_order)
  call copy%as_array(back)
  print '(a,i0,a,i0,a)', 'round trip: ', count(back == field), ' of ', size(field), &
    ' elements equal'

  ! Column 2 as a subview, seen as a Fortran pointer (indices are 1-based here).
  call wrapped%subview(sub, [taskdag_slice_all(), taskdag_slice_index(2)])
  call sub%as_array(column)
  print '(a,4f6.1)', 'column 2:', column

  ! A padded view: each column starts on a cache line; the pointer covers only the elements.
  call padded%create('padded', TD_ELEMENT_DOUBLE, [100, 2], flags=TD_VIEW_PAD)
  call padded%fill(1.5_real64)
  call padded%as_array(padded_array)
  print '(a,i0,a,f4.1)', 'padded: stride(2) = ', padded%stride(2), ', sum/size = ', &
    sum(padded_array) / size(padded_array)

  ! A C-order view has no Fortran pointer form; the status says so instead of stopping.
  call c_order%as_array(back, stat=stat)
  print '(2a)', 'as_array of a LayoutRight view: ', taskdag_status_name(stat)

  call padded%release()
  call sub%release()
  call copy%release()
  call c_order%release()
  call wrapped%release()
  deallocate (field)  ! ours: the views never owned it
  call taskdag_finalize()
  print '(a)', 'views.f90: done'
end program views_example
