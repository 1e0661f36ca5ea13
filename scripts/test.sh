#!/usr/bin/env bash
# Runs every test of taskdag: Rust unit/integration tests (with the header check), the loom models,
# clippy, rustfmt, then the CMake build with ctest (C, C++, Fortran, installed-package consumers).
# Installs missing build tools first. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

step() { printf '\n=== %s\n' "$*"; }

step "dependencies"
scripts/ensure-deps.sh

step "nvcc for the CUDA kernels (installed into .venv-cuda/ once when missing)"
# build.rs compiles cuda/*.cu with $NVCC; CMake builds the CUDA example and benchmark with $CUDACXX.
if NVCC="$(scripts/ensure-nvcc.sh)"; then
  export NVCC CUDACXX="$NVCC"
  echo "nvcc: $NVCC"
else
  echo "no nvcc could be installed: the GPU kernels are not built (the build says so)"
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --all-targets -- -D warnings

step "cargo clippy -D warnings, without the cuda feature"
CARGO_TARGET_DIR=target/nocuda cargo clippy --no-default-features --all-targets -- -D warnings

step "cargo test (includes the header check)"
cargo test

step "loom model checks"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --test loom_pool
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --lib exec::loom
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --test loom_task
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --test loom_work_graph

step "CMake build and ctest"
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/test -j "$jobs"
ctest --test-dir build/test --output-on-failure -j "$jobs"

step "benchmark smoke test (quick mode, with the concurrent bounds; timings are not checked, results are)"
python3 bench/run.py --quick --no-write --bound

step "task DAG stress in release mode (fib(27) x 100 at 2 and 8 workers, random DAGs)"
cargo test --release --test task_stress

step "all tests passed"
