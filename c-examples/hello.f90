!> hello.f90: start the taskdag runtime, describe it, stop it, through the Fortran module.
!>
!> The module's procedures stop the program with taskdag's message when a call fails, unless
!> they are given a `stat` argument to check instead.
program hello
  use taskdag, only: taskdag_initialize, taskdag_finalize, taskdag_version, taskdag_configuration
  implicit none

  print '(a)', 'taskdag '//taskdag_version()

  call taskdag_initialize()  ! all cores, the first GPU if any
  write (*, '(a)', advance='no') taskdag_configuration()
  call taskdag_finalize()

  print '(a)', 'hello.f90: done'
end program hello
