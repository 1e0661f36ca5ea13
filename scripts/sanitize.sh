#!/usr/bin/env bash
# Runs the C/C++ tests and examples with the library and the tests instrumented by a sanitizer.
# Usage: scripts/sanitize.sh thread|address [ctest -R regex]
# Needs a nightly Rust toolchain with rust-src (installed here when missing) because the Rust
# side is instrumented too (-Zsanitizer, -Zbuild-std).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh thread|address [ctest regex]}
regex=${2:-}
scripts/ensure-deps.sh
if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
  rustup toolchain install nightly --profile minimal --component rust-src
fi
build=build/sanitize-$kind
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTASKDAG_SANITIZER="$kind" >/dev/null
cmake --build "$build" -j "$(nproc)"
# halt_on_error: the first report fails the test rather than scrolling past.
# allocator_may_return_null: tests of out-of-memory statuses ask for impossible sizes, which the
# sanitizers' allocators would otherwise treat as a fatal error instead of returning NULL.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1"
export ASAN_OPTIONS="detect_leaks=1 halt_on_error=1 allocator_may_return_null=1"
# The one leak that is by design (scripts/lsan.supp says which).
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp"
# Tests of the installed package rebuild without the sanitizer; they add nothing here.
ctest --test-dir "$build" --output-on-failure -E 'install|consumer|pkgconfig|fortran' \
  ${regex:+-R "$regex"}
