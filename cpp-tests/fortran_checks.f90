!> Checks for the Fortran test programs: check() counts and prints failed conditions, finish()
!> prints the verdict line the test expects and stops with an error when any check failed.
module fortran_checks
  implicit none
  private
  public :: check, finish

  integer :: failures = 0

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what

    if (.not. condition) then
      failures = failures + 1
      print '(a, a)', 'FAILED: ', what
    end if
  end subroutine check

  !> Prints "<name>: all checks passed", or the count of failures and stops with status 1.
  subroutine finish(name)
    character(len=*), intent(in) :: name

    if (failures == 0) then
      print '(a, a)', name, ': all checks passed'
    else
      print '(a, a, i0, a)', name, ': ', failures, ' check(s) failed'
      error stop 1
    end if
  end subroutine finish
end module fortran_checks
