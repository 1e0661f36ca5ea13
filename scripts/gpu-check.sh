#!/usr/bin/env bash
# GPU test suite and GPU benchmarks, for a machine with a GPU but no Rust toolchain.
#
#   scripts/gpu-check.sh --pack [DIR]   here (Rust, nvcc): build the GPU tests, the CUDA example,
#                                        the benchmarks and libtaskdag.so into DIR (gpu-pack/)
#   scripts/gpu-check.sh --run [DIR]    on the GPU machine, from the carried tree: run them all and
#                                        print a summary table (exit 1 if any test failed)
#
# The pack is git-ignored; carry it to the GPU machine with the working tree. Benchmark figures
# are medians of the repetitions; the full JSON lines are written to $OUT (or DIR/results).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:---pack}"
dir="${2:-gpu-pack}"

pack() {
  local nvcc
  nvcc="$(scripts/ensure-nvcc.sh)"
  export NVCC="$nvcc"
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib"
  cargo build --release --lib --example cuda_copy_bandwidth
  local tests
  tests=$(cargo test --release --no-run --lib --test cuda_capi --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"] + " " + m["executable"])')
  while read -r name exe; do
    cp "$exe" "$dir/bin/test_$name"
  done <<<"$tests"
  cp target/release/libtaskdag.so "$dir/lib/"
  cp target/release/examples/cuda_copy_bandwidth "$dir/bin/"
  local flags=(-O3 -std=c++17 -Iinclude -gencode arch=compute_80,code=sm_80
               -gencode arch=compute_90,code=sm_90 -Ltarget/release -ltaskdag)
  "$nvcc" "${flags[@]}" c-examples/cuda_pool.cu -o "$dir/bin/cuda_pool_example"
  "$nvcc" "${flags[@]}" bench/cuda_pool/cuda_pool.cu -o "$dir/bin/bench_cuda_pool_taskdag"
  "$nvcc" "${flags[@]}" -DBENCH_MIN_BLOCKS=8 bench/cuda_pool/cuda_pool.cu \
    -o "$dir/bin/bench_cuda_pool_taskdag_8blocks"
  "$nvcc" "${flags[@]}" -DBENCH_IMPL_MALLOC bench/cuda_pool/cuda_pool.cu \
    -o "$dir/bin/bench_cuda_pool_cuda_malloc"
  "$nvcc" "${flags[@]}" bench/cuda_pool/cuda_memcpy.cu -o "$dir/bin/bench_cuda_memcpy"
  # The C and C++ API tests that have a device half (doctest is header-only).
  local cxx=(-O2 -Iinclude -Icpp-tests -Ltarget/release -ltaskdag -pthread)
  cc -std=c11 cpp-tests/test_view_cuda.c "${cxx[@]}" -o "$dir/bin/test_view_cuda"
  c++ -std=c++17 cpp-tests/main_initialized.cpp cpp-tests/test_cpp_cuda.cpp "${cxx[@]}" \
    -o "$dir/bin/test_cpp_cuda"
  strip "$dir"/bin/* "$dir"/lib/*
  du -sh "$dir"
  echo "gpu-check: pack ready in $dir; on the GPU machine run: scripts/gpu-check.sh --run $dir"
}

run() {
  local results="${OUT:-$dir/results}"
  mkdir -p "$results"
  export LD_LIBRARY_PATH="$PWD/$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local summary="$results/summary.tsv" failed=0
  : >"$summary"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  # Tests: name, command; PASS when the command exits 0.
  check() {
    local name="$1"
    shift
    echo "=== $name: $*"
    if "$@" >"$results/$name.log" 2>&1; then
      printf '%s\tPASS\t%s\n' "$name" "$(grep -c 'SKIPPED' "$results/$name.log" || true) skipped" >>"$summary"
    else
      printf '%s\tFAIL\tsee %s.log\n' "$name" "$name" >>"$summary"
      failed=1
    fi
    tail -n 5 "$results/$name.log"
  }
  check rust_gpu_tests "$dir/bin/test_taskdag" --test-threads 1 cuda::
  check rust_device_view_tests "$dir/bin/test_taskdag" --test-threads 1 view::tests::device
  check capi_tests "$dir/bin/test_cuda_capi"
  check c_view_test "$dir/bin/test_view_cuda"
  check cpp_cuda_test "$dir/bin/test_cpp_cuda"
  check cuda_example "$dir/bin/cuda_pool_example"
  # Benchmarks: JSON lines to $results/<name>.jsonl.
  bench() {
    local name="$1"
    shift
    echo "=== $name: $*"
    if ! "$@" >"$results/$name.jsonl" 2>"$results/$name.err"; then
      printf '%s\tFAIL\t%s\n' "$name" "$(tail -n 1 "$results/$name.err")" >>"$summary"
      failed=1
    fi
  }
  local pool="$dir/bin/bench_cuda_pool"
  for size in 64 1024; do
    bench "pool_taskdag_$size" "${pool}_taskdag" --size "$size" --pairs 64 --reps 5
    bench "pool_taskdag_8blocks_$size" "${pool}_taskdag_8blocks" --size "$size" --pairs 64 --reps 5
    bench "pool_malloc_$size" "${pool}_cuda_malloc" --size "$size" --pairs 4 --reps 3
  done
  bench copy_taskdag "$dir/bin/cuda_copy_bandwidth" --mib 256 --reps 7
  bench copy_cudamemcpy "$dir/bin/bench_cuda_memcpy" --mib 256 --reps 7
  python3 - "$results" <<'PY' >>"$summary"
import json, pathlib, statistics, sys
results = pathlib.Path(sys.argv[1])
for path in sorted(results.glob("*.jsonl")):
    lines = [json.loads(l) for l in path.read_text().splitlines() if l.startswith("{")]
    meas = [l for l in lines if l.get("type") == "measurement" and not l.get("warmup")]
    if "mpairs_per_s" in (meas[0] if meas else {}):
        rates = [m["mpairs_per_s"] * 1e6 for m in meas]
        print(f"{path.stem}\tBENCH\t{statistics.median(rates):.3e} pairs/s (median of "
              f"{len(rates)}, {min(rates):.3e}-{max(rates):.3e})")
    for m in meas:
        if "gb_per_s" in m:
            print(f"{path.stem}:{m['impl']}:{m['case']}\tBENCH\t{m['gb_per_s']:.2f} GB/s")
PY
  echo
  echo "=== summary (files in $results)"
  column -t -s $'\t' "$summary" 2>/dev/null || cat "$summary"
  return "$failed"
}

case "$mode" in
  --pack) pack ;;
  --run) run ;;
  *) echo "usage: $0 --pack [DIR] | --run [DIR]" >&2; exit 2 ;;
esac
