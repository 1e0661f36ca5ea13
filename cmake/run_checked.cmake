# Runs a program for a ctest test and fails unless it exits with status 0.
#
#   cmake -P run_checked.cmake -- <program> [args...]   (arguments must not contain ";")
#
# The program's output is echoed so the test's PASS_REGULAR_EXPRESSION can check it; a nonzero
# exit (or a signal) prints "taskdag-run: FAILED", which the test's FAIL_REGULAR_EXPRESSION catches,
# because ctest ignores the exit status once PASS_REGULAR_EXPRESSION is set.
set(_command)
set(_after_separator FALSE)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE 1 ${_last})
  if(_after_separator)
    list(APPEND _command "${CMAKE_ARGV${_i}}")
  elseif(CMAKE_ARGV${_i} STREQUAL "--")
    set(_after_separator TRUE)
  endif()
endforeach()
if(NOT _command)
  message(FATAL_ERROR "taskdag-run: FAILED: usage: cmake -P run_checked.cmake -- <program> [args...]")
endif()

execute_process(COMMAND ${_command}
  OUTPUT_VARIABLE _output ERROR_VARIABLE _output RESULT_VARIABLE _status)
message("${_output}")
if(NOT _status STREQUAL "0")
  message(FATAL_ERROR "taskdag-run: FAILED (exit status ${_status}): ${_command}")
endif()
