#!/usr/bin/env bash
# Builds a Fortran program against an installed taskdag the way the package documents it:
# compile include/taskdag.f90 with the program and link -ltaskdag; then runs it.
#
#   test_fortran_install.sh <fortran compiler> <prefix> <libdir> <includedir> <program.f90> <work dir>
# (libdir and includedir relative to the prefix)
set -euo pipefail
fc=$1 libdir=$2/$3 includedir=$2/$4 source=$5 work=$6

rm -rf "$work" && mkdir -p "$work"
cd "$work"
"$fc" -Wall -Werror -o program "$includedir/taskdag.f90" "$source" \
  -L"$libdir" -ltaskdag -Wl,-rpath,"$libdir"
./program | tee program.out
grep -q "done" program.out
echo "gfortran build: OK"
