# Configures, builds and tests cpp-tests/consumer against an installed taskdag, as a user's
# project would: find_package(taskdag CONFIG REQUIRED) with CMAKE_PREFIX_PATH set to the prefix.
#
#   cmake -DSOURCE_DIR=... -DBINARY_DIR=... -DPREFIX=... -DGENERATOR=... \
#         [-DC_COMPILER=...] [-DCXX_COMPILER=...] -P test_cmake_consumer.cmake
foreach(var SOURCE_DIR BINARY_DIR PREFIX GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "test_cmake_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "consumer project: ${what} failed (${status})")
  endif()
endfunction()

set(compilers)
if(C_COMPILER)
  list(APPEND compilers "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
if(CXX_COMPILER)
  list(APPEND compilers "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()

file(REMOVE_RECURSE "${BINARY_DIR}")
run_step(configure "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
         "-DCMAKE_PREFIX_PATH=${PREFIX}" -DCMAKE_BUILD_TYPE=Release ${compilers})
run_step(build "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --config Release)
run_step(ctest "${CMAKE_CTEST_COMMAND}" --test-dir "${BINARY_DIR}" -C Release --output-on-failure)
