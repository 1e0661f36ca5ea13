#!/usr/bin/env bash
# Builds taskdag in release mode and runs the showcase program. Usage: scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release -DTASKDAG_BUILD_TESTS=OFF >/dev/null
cmake --build build/demo -j "$(nproc)" --target showcase
./build/demo/c-examples/showcase
