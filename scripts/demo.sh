#!/usr/bin/env bash
# Builds taskdag in release mode and runs the showcase program. Usage: scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release -DTASKDAG_BUILD_TESTS=OFF >/dev/null
cmake --build build/demo -j "$(nproc)" --target showcase
./build/demo/c-examples/showcase
# The task DAG: Fibonacci with one task per call (000 Fig. 3.4): result, tasks, time, memory.
cmake --build build/demo -j "$(nproc)" --target fib_task_c
./build/demo/c-examples/fib_task_c
# Data-parallel dispatch, two instances with a scheduler each, a work graph, and views.
cmake --build build/demo -j "$(nproc)" --target dot instances wavefront views_c
./build/demo/c-examples/dot
./build/demo/c-examples/instances
./build/demo/c-examples/wavefront
./build/demo/c-examples/views_c
# GPU: a user kernel allocating from a device pool (built when CMake found a CUDA compiler; it
# prints a skip line on a machine without a GPU).
if grep -E '^CMAKE_CUDA_COMPILER:[A-Z]+=.+' build/demo/CMakeCache.txt | grep -vq NOTFOUND; then
  cmake --build build/demo -j "$(nproc)" --target cuda_pool_example
  ./build/demo/c-examples/cuda_pool_example
fi
