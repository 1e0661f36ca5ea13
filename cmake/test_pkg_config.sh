#!/usr/bin/env bash
# Builds a C program against an installed taskdag with nothing but pkg-config, once with the
# shared library and once with the static one (Libs.private), and runs both.
#
#   test_pkg_config.sh <pkg-config> <cc> <prefix> <libdir, relative to prefix> <program.c> <work dir>
set -euo pipefail
pkg_config=$1 cc=$2 prefix=$3 libdir_name=$4 source=$5 work=$6

export PKG_CONFIG_PATH="$prefix/$libdir_name/pkgconfig"
rm -rf "$work" && mkdir -p "$work"
cflags=$("$pkg_config" --cflags taskdag)
libs=$("$pkg_config" --libs taskdag)
libdir=$("$pkg_config" --variable=libdir taskdag)
echo "pkg-config --cflags: $cflags"
echo "pkg-config --libs: $libs"
echo "pkg-config --static --libs: $("$pkg_config" --static --libs taskdag)"

# Shared: the library is found at run time through LD_LIBRARY_PATH, like an unusual prefix.
# shellcheck disable=SC2086  # word splitting of the flags is intended
"$cc" -Wall -Wextra -Werror -o "$work/hello_shared" "$source" $cflags $libs
LD_LIBRARY_PATH="$libdir" "$work/hello_shared" | tee "$work/shared.out"
grep -q "done" "$work/shared.out"

# Static: -ltaskdag resolves to libtaskdag.a, and Libs.private supplies what the Rust standard
# library inside it needs.
# shellcheck disable=SC2086
"$cc" -Wall -Wextra -Werror -o "$work/hello_static" "$source" $cflags \
  $("$pkg_config" --libs-only-L taskdag) -Wl,-Bstatic -ltaskdag -Wl,-Bdynamic \
  $("$pkg_config" --static --libs-only-l --libs-only-other taskdag | sed 's/-ltaskdag//')
if ldd "$work/hello_static" | grep -q libtaskdag; then
  echo "hello_static is linked to the shared libtaskdag" >&2
  exit 1
fi
"$work/hello_static" | tee "$work/static.out"
grep -q "done" "$work/static.out"
echo "pkg-config builds: OK"
