# Installs the build tree into a fresh prefix for the installed-package tests.
#
#   cmake -DBUILD_DIR=<build> -DPREFIX=<prefix> -DLIBDIR=lib -DINCLUDEDIR=include
#         [-DCONFIG_ARGS="--config;<cfg>"] -P install_for_tests.cmake
# (LIBDIR and INCLUDEDIR relative to the prefix, as GNUInstallDirs gives them.)
foreach(var BUILD_DIR PREFIX LIBDIR INCLUDEDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_for_tests.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" ${CONFIG_ARGS}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed (${status})")
endif()

# What a user of the package relies on.
foreach(file
    "${LIBDIR}/libtaskdag.so" "${LIBDIR}/libtaskdag.a"
    "${INCLUDEDIR}/taskdag.h" "${INCLUDEDIR}/taskdag.hpp" "${INCLUDEDIR}/taskdag.f90"
    "${LIBDIR}/cmake/taskdag/taskdagConfig.cmake"
    "${LIBDIR}/cmake/taskdag/taskdagConfigVersion.cmake"
    "${LIBDIR}/pkgconfig/taskdag.pc")
  if(NOT EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "the installed package lacks ${file}")
  endif()
endforeach()
message(STATUS "taskdag installed into ${PREFIX}")
