#!/usr/bin/env python3
"""taskdag benchmark harness: builds the library and the peer programs, runs every benchmark,
writes JSON, a Markdown table and SVG plots. Python 3 standard library only.

    python3 bench/run.py                 build, run everything (5 repetitions after a warm-up),
                                         write bench/results/<machine>-<commit>.{json,md} + SVGs
                                         (-2, -3, ... after the stem for later runs of a commit)
    python3 bench/run.py --quick         smoke test in seconds: every benchmark and peer runs
                                         once on small inputs and must validate its result;
                                         writes nothing under bench/results (exit 0 = all valid)
    python3 bench/run.py --pack DIR      build, then copy binaries, libtaskdag.so, the non-glibc
                                         shared libraries they need and this runner into DIR
    python3 DIR/bench/run.py --packed DIR   run from such a pack on another machine (no build)

Other flags: --only NAME[,NAME] (benchmarks), --threads 1,2,4 (default: powers of two up to the
CPUs available, plus that count), --reps R, --warmup W, --processes N (each program run in N
processes per thread count, taking turns with its peers; every repetition pooled), --machine LABEL,
--no-write,
--results-dir DIR, --update-docs (put the tables into docs/PERFORMANCE.md), --no-cargo (use the
existing target/release/libtaskdag.so), --timeout S, --bound (below).

One-thread runs of the threaded benchmarks are pinned: in round r of --processes, every
implementation's one-thread process runs on the same CPU, the r-th from the top of the runner's
affinity. On a VM whose vCPUs run at different speeds (below) a floating process lands on a fast
or a slow one by chance, so one-thread ratios between implementations compared vCPUs more than
code; pinned, each round compares them on one vCPU, and more rounds sample more vCPUs. The
figures record the CPUs. (A vCPU also changes speed from one process to the next: judge one
thread from several rounds, and from the fastest repetitions as well as the medians.)

--bound: for each thread count T > 1 of fib_task and work_graph, every implementation also runs as
T one-thread processes at once, one pinned to each of the first T CPUs. Their per-item times t_c
give the best the T-thread run could do on those CPUs in that minute, 1 / sum(1 / t_c), and the
run's efficiency is that bound over its median. On a VM whose vCPUs run at different speeds
(the 16-core GPU machine: 60-125 ns per Fibonacci node on one vCPU, depending on which) this
separates what the scheduler loses from what the CPUs were worth.

Outside --quick, the machine's parallel capacity (bench/machine/vcpu_speed: the same loop on each
CPU alone and on all at once) is measured before and after the benchmarks and reported with them:
on a VM whose vCPUs share cores with other tenants it bounds every thread-scaling figure.

Protocol of a benchmark program (see bench/common/bench_util.h): it takes
--threads N --reps R --warmup W plus its own options, prints one JSON object per line
({"type":"measurement", ...} per repetition, {"type":"done","valid":true} at the end) and exits 0
only when it checked its results. Anything else is recorded as a failure, never as a figure.

To add a benchmark (fib_task, work_graph, dispatch, views, ...): build its programs in
bench/CMakeLists.txt with bench_program(...) and append a Benchmark descriptor to BENCHMARKS.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMA_VERSION = 1


# ---------------------------------------------------------------------------------------------
# Benchmark descriptors: the extension point.
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Impl:
    name: str              # as in the JSON lines and the manifest ("taskdag", "malloc", ...)
    binary: str            # program name in build/bench/bin
    ours: bool = False     # exactly one implementation per benchmark is ours
    max_threads: int = 0   # 0 = any; above it the cell is "n/a"
    note: str = ""         # shown under the table


@dataclasses.dataclass
class Config:
    key: str               # stable identifier in JSON ("size=64")
    label: str             # for tables and plots ("64 B")
    args: list[str]        # passed to every implementation's program


@dataclasses.dataclass
class Metric:
    field: str             # field of the measurement JSON line
    unit: str
    lower_is_better: bool
    title: str


@dataclasses.dataclass
class Benchmark:
    name: str
    title: str
    description: str
    impls: list[Impl]
    configs: list[Config]
    metric: Metric                                   # primary figure: table, plots, ratios
    extra_metrics: list[Metric] = dataclasses.field(default_factory=list)
    full_args: list[str] = dataclasses.field(default_factory=list)
    quick_args: list[str] = dataclasses.field(default_factory=list)
    threaded: bool = True                            # run at each thread count (else 1)
    # The metric is wall time per unit of a fixed amount of work, so T one-thread processes
    # running at once bound what T threads can reach (`--bound`, `concurrent_bound`).
    bound: bool = False
    # Exit status 2 (unsupported, e.g. no GPU on this machine) skips instead of failing.
    skip_unsupported: bool = False

    @property
    def ours(self) -> Impl:
        return next(i for i in self.impls if i.ours)


POOL_SIZES = ["64", "256", "1024", "4096", "mixed"]

BENCHMARKS: list[Benchmark] = [
    Benchmark(
        name="pool",
        title="Memory pool: alloc+free pairs",
        description=(
            "Each thread allocates a batch of 64 blocks, writes and re-reads a marker byte at "
            "both ends of each, and frees them; 2^20 pairs per thread and repetition (2^13 in "
            "quick mode). taskdag: one td_pool (64 MiB, blocks 64..4096 B, default superblock "
            "= 4096 B) shared by all threads, td_pool_allocate(pool, size, 1). Mixed sizes are "
            "uniform in [64, 4096] from a fixed-seed xorshift, identical for every "
            "implementation. Figure: wall time x threads / pairs = ns per pair as seen by one "
            "thread (lower is better). The wall time is the slowest thread's; the sum of the "
            "threads' own rates shows the scaling without the slowest CPU's pace."),
        impls=[
            Impl("taskdag", "bench_pool_taskdag", ours=True),
            Impl("malloc", "bench_pool_malloc", note="glibc malloc/free"),
            Impl("tbbmalloc", "bench_pool_tbbmalloc", note="oneTBB scalable_malloc/scalable_free"),
            Impl("kokkos", "bench_pool_kokkos", max_threads=1,
                 note="Kokkos::MemoryPool<Kokkos::Serial>, same pool parameters; 1 thread only "
                      "(the packaged Kokkos has the Serial back-end alone)"),
        ],
        configs=[Config(f"size={s}", "mixed 64-4096 B" if s == "mixed" else f"{s} B",
                        ["--size", s]) for s in POOL_SIZES],
        metric=Metric("ns_per_pair", "ns", True, "ns per alloc+free pair (per thread)"),
        extra_metrics=[Metric("mpairs_per_s", "Mpairs/s", False, "aggregate Mpairs/s"),
                       Metric("mpairs_per_s_threads", "Mpairs/s", False,
                              "sum of the threads' own Mpairs/s (each at its own pace)")],
        full_args=["--pairs", str(1 << 20), "--batch", "64"],
        quick_args=["--pairs", str(1 << 13), "--batch", "64"],
    ),
    Benchmark(
        name="work_graph",
        title="Work graph: ns per work item",
        description=(
            "One execution of a static work DAG (000 §2.4, §3.3): the work function runs once "
            "per item, each after the items it depends on. fib(n): the naive-Fibonacci graph of "
            "000 Fig. 3.6 (2 fib(n+1) - 1 items, each item adds its two inputs). random: 10^6 "
            "items in a random topological order with 0..8 successors each (mean 4), anywhere "
            "later ('wide') or among the next 64 items ('deep', long chains); each item hashes "
            "its inputs. The work function reads its inputs through the transposed graph, as in "
            "the figure. Planning is untimed; outputs are reset before and checked after every "
            "execution (untimed). Figure: wall time of an execution / items = ns per item "
            "(lower is better); speed-up with T threads = ns_per_item(1) / ns_per_item(T). "
            "taskdag: td_work_graph_run on the Threads space of T threads (one plan, reused). "
            "levels: topological levels with an OpenMP barrier between them."),
        impls=[
            Impl("taskdag", "bench_work_graph_taskdag", ours=True),
            Impl("kokkos", "bench_work_graph_kokkos", max_threads=1,
                 note="Kokkos::WorkGraphPolicy<Serial> (the packaged Kokkos has the Serial "
                      "back-end alone); a policy is used up by its run, so each execution "
                      "includes constructing it"),
            Impl("levels", "bench_work_graph_levels",
                 note="level-synchronous baseline: items grouped by topological level (untimed), "
                      "one OpenMP parallel for per level, barrier between levels (GCC OpenMP)"),
        ],
        configs=[
            Config("fib=15", "fib(15)", ["--shape", "fib", "--size", "15"]),
            Config("fib=17", "fib(17)", ["--shape", "fib", "--size", "17"]),
            Config("fib=20", "fib(20)", ["--shape", "fib", "--size", "20"]),
            Config("fib=25", "fib(25)", ["--shape", "fib", "--size", "25"]),
            Config("fib=30", "fib(30)", ["--shape", "fib", "--size", "30"]),
            Config("random=wide", "random 10^6 wide",
                   ["--shape", "random", "--size", "1000000", "--degree", "4"]),
            Config("random=deep", "random 10^6 deep",
                   ["--shape", "random", "--size", "1000000", "--degree", "4", "--window", "64"]),
        ],
        metric=Metric("ns_per_item", "ns", True, "ns per work item (wall time / items)"),
        bound=True,
        extra_metrics=[Metric("mitems_per_s", "Mitems/s", False, "Mitems/s"),
                       Metric("parallelism", "items", False,
                              "Available parallelism of the graph: items / items on its longest "
                              "path (work / span), the largest speed-up any schedule of equal "
                              "items can reach")],
        full_args=[],
        quick_args=["--quick"],
    ),
    Benchmark(
        name="cuda_pool",
        title="Device memory pool: alloc+free pairs from every GPU thread",
        description=(
            "2048 threads per SM (270,336 on an H100), each doing alloc, write+check a marker "
            "byte at both ends, free; 64 pairs per thread (4 and 256 threads per SM in quick "
            "mode). taskdag: one TD_SPACE_CUDA pool of 1 GiB (blocks 64 B..1 KiB, 64 KiB "
            "superblocks), td_dev_pool_allocate/deallocate, warp-aggregated. cuda_malloc: "
            "CUDA's in-kernel malloc/free with a 1 GiB heap. Figure: pairs / kernel time "
            "(CUDA events). Needs a GPU and nvcc; skipped otherwise."),
        impls=[
            Impl("taskdag", "bench_cuda_pool_taskdag", ours=True),
            Impl("cuda_malloc", "bench_cuda_pool_cuda_malloc", note="in-kernel malloc/free"),
        ],
        configs=[Config(f"size={s}", f"{s} B", ["--size", s]) for s in ["64", "1024"]],
        metric=Metric("mpairs_per_s", "Mpairs/s", False, "aggregate Mpairs/s"),
        full_args=["--pairs", "64"],
        quick_args=["--pairs", "4", "--threads-per-sm", "256"],
        threaded=False,
        skip_unsupported=True,
    ),
    Benchmark(
        name="views",
        title="Views: deep_copy between layouts",
        description=(
            "One array of doubles, 256 MiB (4 MiB in quick mode): a 5792 x 5792 matrix or a "
            "322 x 322 x 322 cube, copied from LayoutLeft to LayoutRight (l2r), the reverse "
            "(r2l), or between two contiguous LayoutRight arrays (same). taskdag: "
            "td_view_deep_copy(dst, src) on two td_views (threads: the CPUs the process is "
            "restricted to). Every program restricts itself to the first N CPUs for N threads "
            "and checks every destination element after the timed copies. Figure: bytes of one "
            "array / wall time of one copy (higher is better); memcpy copies the same bytes, so "
            "memcpy/taskdag is the inverse of the fraction of memcpy bandwidth reached."),
        impls=[
            Impl("taskdag", "bench_views_taskdag", ours=True),
            Impl("memcpy", "bench_views_memcpy",
                 note="glibc memcpy of the same bytes, one contiguous piece per thread: the "
                      "bandwidth a copy can reach"),
            Impl("kokkos", "bench_views_kokkos", max_threads=1,
                 note="Kokkos::deep_copy between Kokkos::Views of the same layouts; 1 thread "
                      "only (the packaged Kokkos has the Serial back-end alone)"),
        ],
        configs=[Config(f"{rank}d-{case}", f"{rank}-D {label}",
                        ["--rank", str(rank), "--case", case])
                 for rank, case, label in [(2, "l2r", "Left->Right"), (2, "r2l", "Right->Left"),
                                           (3, "l2r", "Left->Right"), (3, "r2l", "Right->Left"),
                                           (2, "same", "contiguous")]],
        metric=Metric("gb_per_s", "GB/s", False, "deep_copy bandwidth (bytes of one array / s)"),
        full_args=["--mib", "256"],
        quick_args=["--mib", "4"],
    ),
    Benchmark(
        name="dispatch",
        title="Data-parallel dispatch: empty parallel_for / parallel_reduce",
        description=(
            "Back-to-back dispatches over [0, threads), one index per thread: parallel_for "
            "increments a padded per-index counter (every counter checked), parallel_reduce sums "
            "i+1 (every sum checked); 20000 dispatches per repetition (200 in quick mode), timed "
            "together (the figure), then 20000 more timed one by one (their median, an extra "
            "figure that a shared machine's stalls do not inflate). "
            "taskdag: root Threads instance of td_initialize with num_threads = threads (pinned "
            "one per CPU), td_parallel_for / td_parallel_reduce with the default policy and C "
            "callbacks. OpenMP: parallel for schedule(static) [reduction(+)], OMP_PROC_BIND=close "
            "OMP_PLACES=cores set by the program. oneTBB: parallel_for / parallel_reduce with "
            "static_partitioner under global_control(threads), threads pinned by an observer. "
            "Figure: wall time / dispatches = us per dispatch (lower is better)."),
        impls=[
            Impl("taskdag", "bench_dispatch_taskdag", ours=True),
            Impl("openmp", "bench_dispatch_openmp",
                 note="GCC libgomp, OMP_PROC_BIND=close, OMP_PLACES=cores, default wait policy"),
            Impl("tbb", "bench_dispatch_tbb",
                 note="oneTBB, static_partitioner, threads pinned one per CPU"),
        ],
        configs=[Config("kernel=for", "parallel_for", ["--kernel", "for"]),
                 Config("kernel=reduce", "parallel_reduce", ["--kernel", "reduce"])],
        metric=Metric("us_per_dispatch", "us", True, "us per empty dispatch"),
        extra_metrics=[Metric("us_median", "us", True,
                              "median us of a dispatch timed alone (robust to stalls)")],
        full_args=["--dispatches", "20000"],
        quick_args=["--dispatches", "200"],
    ),
    Benchmark(
        name="dispatch_bandwidth",
        title="Data-parallel dispatch: sum reduction bandwidth",
        description=(
            "Sum of a 512 MiB array of doubles (16 MiB in quick mode), 5 sums per repetition, "
            "each checked exactly (values are i mod 1024). The array is filled in parallel with "
            "the same split as the sum (first touch). Every implementation runs the same "
            "`omp simd` reduction loop on its part; OpenMP runs the STREAM-like `parallel for "
            "simd reduction(+) schedule(static)` loop. Threads and pinning as in the dispatch "
            "benchmark. Figure: bytes read / wall time = GB/s (higher is better)."),
        impls=[
            Impl("taskdag", "bench_dispatch_taskdag", ours=True),
            Impl("openmp", "bench_dispatch_openmp",
                 note="GCC libgomp, parallel for simd reduction, OMP_PROC_BIND=close, "
                      "OMP_PLACES=cores"),
            Impl("tbb", "bench_dispatch_tbb", note="oneTBB parallel_reduce, static_partitioner"),
        ],
        configs=[Config("kernel=bandwidth", "sum of doubles", ["--kernel", "bandwidth"])],
        metric=Metric("gb_per_s", "GB/s", False, "GB/s read by a sum reduction"),
        extra_metrics=[Metric("ms_per_pass", "ms", True, "ms per sum")],
        full_args=["--mib", "512", "--passes", "5"],
        quick_args=["--mib", "16", "--passes", "2"],
    ),
    Benchmark(
        name="fib_task",
        title="Task DAG: naive Fibonacci, one task per call",
        description=(
            "F(n) with one task per call (000 §3.2.4; 2 F(n+1) - 1 nodes). taskdag: 000 Fig. "
            "3.4 through the C API: F(k-2) spawned at high priority, F(k-1) at regular, the "
            "task respawns on their when_all (td_task_respawn_when_all_private: the children's "
            "futures are the task's own) and adds their results "
            "on its second run "
            "(every node is one spawn; each node with n > 1 also makes one when_all and one "
            "respawn); td_initialize with T "
            "threads, the scheduler on the root Threads instance, a 64 MiB pool. Kokkos: the same "
            "functor on TaskScheduler<Serial>. oneTBB: task_group with both children run as "
            "tasks, then wait, in a task_arena of T threads. OpenMP (GCC libgomp): two `omp "
            "task`s and `taskwait`, started by one thread of a parallel region of T threads. "
            "Figure: wall time of one F(n) (spawn of the root to its result) / nodes = ns per "
            "node with all threads (lower is better). Every run checks F(n)."),
        impls=[
            Impl("taskdag", "bench_fib_taskdag", ours=True),
            Impl("taskdag-when-all", "bench_fib_taskdag_when_all",
                 note="taskdag with Fig. 3.4's own calls: td_when_all, td_task_respawn on its "
                      "future, td_future_release (taskdag's figure uses "
                      "td_task_respawn_when_all_private)"),
            Impl("taskdag-borrowed", "bench_fib_taskdag_borrowed",
                 note="taskdag with td_task_respawn_when_all, whose futures other tasks may use "
                      "through the caller's references meanwhile (its completions of run-ahead "
                      "children take an atomic exchange each)"),
            Impl("kokkos", "bench_fib_kokkos", max_threads=1,
                 note="Kokkos TaskScheduler<Serial> (the packaged Kokkos 3.4 has the Serial "
                      "back-end alone): 1 thread only"),
            Impl("tbb", "bench_fib_tbb", note="oneTBB task_group in a task_arena"),
            Impl("openmp", "bench_fib_openmp", note="GCC libgomp: omp task + taskwait"),
        ],
        configs=[Config(f"n={n}", f"F({n})", ["--n", str(n)]) for n in (20, 24, 27, 30)],
        metric=Metric("ns_per_node", "ns", True, "ns per node (wall time / nodes)"),
        extra_metrics=[Metric("mnodes_per_s", "Mnodes/s", False, "Mnodes/s")],
        bound=True,
        full_args=[],
        quick_args=["--quick"],
    ),
]

assert all(b.metric.lower_is_better for b in BENCHMARKS if b.bound), \
    "a concurrent bound is defined for a time per unit of work"

# Shared libraries that every Linux machine has (glibc and the loader); everything else a
# program needs is copied into a pack's lib/.
BASE_SYSTEM_LIBS = re.compile(
    r"^(linux-vdso|linux-gate|ld-linux[-\w.]*|libc|libm|libmvec|libpthread|libdl|librt|libresolv|"
    r"libutil|libanl|libnsl|libcrypt)\.so")
# The C++ runtime goes to lib/compat/ instead, outside the programs' run path: the target's own
# (it has g++) is used when it is new enough; otherwise --packed adds lib/compat for the
# programs that fail to load without it. (Ours needs a newer glibc than the rest of the pack.)
COMPAT_LIBS = re.compile(r"^(libstdc\+\+|libgcc_s)\.so")


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------
def log(msg: str) -> None:
    print(msg, flush=True)


def die(msg: str, code: int = 2) -> None:
    print(f"run.py: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def run_cmd(cmd: list[str], cwd: Path | None = None, quiet: bool = False) -> None:
    log("+ " + " ".join(str(c) for c in cmd))
    try:
        res = subprocess.run([str(c) for c in cmd], cwd=cwd,
                             stdout=subprocess.PIPE if quiet else None,
                             stderr=subprocess.STDOUT if quiet else None, text=True)
    except OSError as e:
        die(f"cannot run {cmd[0]}: {e} (a pack built elsewhere runs with --packed DIR)")
    if res.returncode != 0:
        if quiet and res.stdout:
            print(res.stdout[-8000:], file=sys.stderr)
        die(f"command failed with exit status {res.returncode}: {' '.join(map(str, cmd))}")


def capture(cmd: list[str], cwd: Path | None = None) -> str | None:
    try:
        res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# ---------------------------------------------------------------------------------------------
# Machine and source description
# ---------------------------------------------------------------------------------------------
def machine_info(label: str | None) -> dict:
    model, sockets_cores = "unknown CPU", set()
    phys, core = None, None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = (s.strip() for s in line.partition(":"))
            if key == "model name" and model == "unknown CPU":
                model = value
            elif key == "physical id":
                phys = value
            elif key == "core id":
                core = value
            elif key == "" and phys is not None:
                sockets_cores.add((phys, core))
                phys, core = None, None
        if phys is not None:
            sockets_cores.add((phys, core))
    except OSError:
        pass
    clean = re.sub(r"\((R|TM|tm|r)\)", "", model)
    clean = re.sub(r"\b(CPU|Processor|\d+-Core)\b", "", clean)
    clean = re.sub(r"@.*$", "", clean)
    clean = re.sub(r"\s+", " ", clean).strip()
    cpus = available_cpus()
    auto_label = f"{cpus}-core {clean}"
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return {
        "label": label or auto_label,
        "cpu_model": model,
        "cpus_available": cpus,
        "logical_cpus": os.cpu_count(),
        "physical_cores": len(sockets_cores) or None,
        "memory_gib": mem_gib,
        "os": platform.platform(),
        "glibc": os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None,
        "python": platform.python_version(),
        "loadavg_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def source_info(repo: Path) -> dict:
    commit = capture(["git", "rev-parse", "--short=12", "HEAD"], cwd=repo)
    status = capture(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo)
    return {"commit": commit or "nocommit", "dirty": bool(status) if commit else None}


# ---------------------------------------------------------------------------------------------
# Build and pack
# ---------------------------------------------------------------------------------------------
# The peers the benchmarks compare against, from Debian (oneTBB's task_group and tbbmalloc,
# Kokkos' MemoryPool, TaskScheduler and WorkGraphPolicy); GCC's OpenMP comes with the compiler.
PEER_PACKAGES = ["libtbb-dev", "libtrilinos-kokkos-dev"]


def build(repo: Path, build_dir: Path, args) -> dict:
    run_cmd([repo / "scripts" / "ensure-deps.sh", *PEER_PACKAGES], cwd=repo)
    meta = capture(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=repo)
    target_dir = Path(json.loads(meta)["target_directory"]) if meta else repo / "target"
    lib = target_dir / "release" / "libtaskdag.so"
    if not args.no_cargo:
        run_cmd(["cargo", "build", "--release", "--lib"], cwd=repo)
    if not lib.exists():
        die(f"{lib} not found; build it with: cargo build --release --lib")
    jobs = str(available_cpus())
    run_cmd(["cmake", "-S", repo / "bench", "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
             f"-DTASKDAG_INCLUDE_DIR={repo / 'include'}", f"-DTASKDAG_LIBRARY={lib}"], quiet=True)
    run_cmd(["cmake", "--build", build_dir, "-j", jobs], quiet=True)
    manifest = json.loads((build_dir / "bench_manifest.json").read_text())
    for prog in manifest["programs"]:
        if prog["status"] != "built":
            log(f"  skipped peer {prog['bench']}/{prog['impl']}: {prog['reason']}")
    cc = (capture(["cc", "--version"]) or "").splitlines()
    rustc = capture(["rustc", "--version"])
    manifest["toolchain"] = {"cc": cc[0] if cc else None, "rustc": rustc}
    manifest["bin_dir"] = str(build_dir / "bin")
    manifest["lib_dir"] = str(lib.parent)
    return manifest


def ldd_libs(path: Path) -> list[tuple[str, Path | None]]:
    out = capture(["ldd", str(path)]) or ""
    libs = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)\s+=>\s+(\S+|not found)", line)
        if m:
            libs.append((Path(m.group(1)).name,
                         None if m.group(2) == "not found" else Path(m.group(2))))
        else:
            m = re.match(r"\s*(\S+)\s+\(0x", line)  # vdso, the loader
            if m:
                libs.append((Path(m.group(1)).name, None))
    return libs


def glibc_required(paths: list[Path]) -> str | None:
    best = None
    for p in paths:
        out = capture(["objdump", "-T", str(p)]) or ""
        for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", out):
            key = tuple(int(x) for x in v.split("."))
            if best is None or key > best:
                best = key
    return ".".join(map(str, best)) if best else None


def make_pack(dest: Path, manifest: dict, repo: Path, machine: dict, source: dict) -> None:
    dest = dest.resolve()
    if dest.exists() and any(dest.iterdir()) and not (dest / "pack.json").exists():
        die(f"{dest} exists, is not empty and is no pack; choose another directory")
    for sub in ("bin", "lib", "bench"):
        shutil.rmtree(dest / sub, ignore_errors=True)
        (dest / sub).mkdir(parents=True)
    (dest / "lib" / "compat").mkdir()
    bin_dir, lib_dir = Path(manifest["bin_dir"]), Path(manifest["lib_dir"])
    programs = [p for p in manifest["programs"] if p["status"] == "built"]
    elf = []
    for p in programs:
        shutil.copy2(bin_dir / p["binary"], dest / "bin" / p["binary"])
        elf.append(bin_dir / p["binary"])
    # The machine probes (bench/machine) travel too: they tell what the other machine does.
    for probe in sorted(bin_dir.glob("machine_*")):
        shutil.copy2(probe, dest / "bin" / probe.name)
    shutil.copy2(lib_dir / "libtaskdag.so", dest / "lib" / "libtaskdag.so")
    elf.append(lib_dir / "libtaskdag.so")
    carried, compat = {"libtaskdag.so": str(lib_dir / "libtaskdag.so")}, {}
    for path in elf:
        for name, resolved in ldd_libs(path):
            if BASE_SYSTEM_LIBS.match(name) or name in carried or name in compat:
                continue
            if resolved is None:
                die(f"{path.name} needs {name}, which ldd cannot find here")
            if COMPAT_LIBS.match(name):
                shutil.copy2(resolved.resolve(), dest / "lib" / "compat" / name)
                compat[name] = str(resolved)
            else:
                shutil.copy2(resolved.resolve(), dest / "lib" / name)
                carried[name] = str(resolved)
    for f in ("run.py", "render.py"):
        shutil.copy2(HERE / f, dest / "bench" / f)
    pack_manifest = dict(manifest)
    pack_manifest.update({
        "packed_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "source": source,
        "built_on": {k: machine[k] for k in ("label", "cpu_model", "os", "glibc")},
        "carried_libs": carried,
        "compat_libs": compat,
        "glibc_required": glibc_required(elf + [dest / "lib" / n for n in carried]),
        "glibc_required_compat": glibc_required([dest / "lib" / "compat" / n for n in compat]),
        "bin_dir": "bin", "lib_dir": "lib",
    })
    (dest / "pack.json").write_text(json.dumps(pack_manifest, indent=2) + "\n")
    log(f"pack written to {dest}: {len(programs)} programs, libraries: {', '.join(sorted(carried))}"
        f"; C++ runtime for old targets in lib/compat: {', '.join(sorted(compat)) or 'none'}")
    log(f"needs glibc >= {pack_manifest['glibc_required']}; run it with: "
        f"python3 {dest}/bench/run.py --packed {dest}")


def load_pack(dest: Path) -> dict:
    dest = dest.resolve()
    try:
        manifest = json.loads((dest / "pack.json").read_text())
    except OSError as e:
        die(f"{dest} is not a pack (no pack.json): {e}")
    manifest["bin_dir"] = str(dest / manifest["bin_dir"])
    manifest["lib_dir"] = str(dest / manifest["lib_dir"])
    need, have = manifest.get("glibc_required"), os.confstr("CS_GNU_LIBC_VERSION").split()[-1]
    if need and tuple(map(int, have.split("."))) < tuple(map(int, need.split("."))):
        die(f"this machine has glibc {have}; the pack was built against glibc {need}. Build the "
            f"pack on a machine with glibc <= {have}.")
    # Probe every program (--help loads all its libraries): with lib/ only, else with
    # lib/compat too; a program that loads with neither is reported as failed when it runs.
    lib, compat = manifest["lib_dir"], str(Path(manifest["lib_dir"]) / "compat")
    for prog in manifest["programs"]:
        if prog["status"] != "built":
            continue
        exe = Path(manifest["bin_dir"]) / prog["binary"]
        errors = []
        for paths in ([lib], [lib, compat]):
            env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(
                paths + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]))
            res = subprocess.run([str(exe), "--help"], capture_output=True, text=True, env=env)
            if res.returncode == 0:
                prog["ld_library_path"] = env["LD_LIBRARY_PATH"]
                if len(paths) > 1:
                    log(f"  {prog['binary']}: using the packed C++ runtime (lib/compat)")
                break
            errors.append(res.stderr.strip()[-600:])
        else:
            prog["load_error"] = errors[-1] or errors[0]
            log(f"  {prog['binary']} does not load here: {prog['load_error']}")
    return manifest


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------
def summarize(values: list[float], unit: str) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "unit": unit, "values": values}


def program_command(bench: Benchmark, impl: Impl, cfg: Config, threads: int,
                    program: dict | None, manifest: dict, env: dict,
                    args) -> tuple[list[str], dict] | dict:
    """The command line and environment that run `impl` on `cfg` with `threads` threads, or the
    figure that stands for a run that cannot happen (skipped, n/a, failed to load)."""
    if program is None:
        return {"status": "skipped", "reason": "program not declared in bench/CMakeLists.txt"}
    if program["status"] != "built":
        return {"status": "skipped", "reason": program["reason"]}
    if impl.max_threads and threads > impl.max_threads:
        return {"status": "n/a", "reason": f"supports at most {impl.max_threads} thread(s)"}
    if program.get("load_error"):
        return {"status": "failed", "reason": f"does not load: {program['load_error']}"}
    if program.get("ld_library_path"):
        env = dict(env, LD_LIBRARY_PATH=program["ld_library_path"])
    exe = Path(manifest["bin_dir"]) / impl.binary
    mode_args = bench.quick_args if args.quick else bench.full_args
    return ([str(exe), *cfg.args, "--threads", str(threads), "--reps", str(args.reps),
             "--warmup", str(args.warmup), *mode_args], env)


def run_one(bench: Benchmark, impl: Impl, cfg: Config, threads: int, program: dict | None,
            manifest: dict, env: dict, args, cpu: int | None = None) -> dict:
    """One process of `impl`, on CPU `cpu` alone when given (see `single_cpu`)."""
    prepared = program_command(bench, impl, cfg, threads, program, manifest, env, args)
    if isinstance(prepared, dict):
        return prepared
    cmd, env = prepared
    try:
        res = run_quietly(cmd, env, args.timeout, cpu)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "reason": f"timed out after {args.timeout} s", "command": cmd}
    except OSError as e:
        return {"status": "failed", "reason": f"could not start: {e}", "command": cmd}
    figure = parse_run(bench, res, args)
    if cpu is not None and figure["status"] == "ok":
        figure["cpus"] = [cpu]
    return figure


def single_cpu(threads: int, round_index: int) -> int | None:
    """The CPU that every implementation's one-thread process of round `round_index` runs on,
    counted from the top of the runner's affinity (CPU 0 takes more of the system's own work);
    None for several threads, which place their threads themselves."""
    if threads != 1:
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[len(cpus) - 1 - round_index % len(cpus)]


def parse_run(bench: Benchmark, res: subprocess.CompletedProcess, args) -> dict:
    """The figure of one finished program run: its metrics if it validated, else why not."""
    cmd = res.args
    lines, bad = [], []
    for line in res.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            bad.append(line)
    errors = [l.get("message", "") for l in lines if l.get("type") == "error"]
    meas = [l for l in lines if l.get("type") == "measurement" and not l.get("warmup")]
    done = any(l.get("type") == "done" and l.get("valid") is True for l in lines)
    info = next((l for l in lines if l.get("type") == "info"), {})
    reason = None
    if res.returncode == 2 and bench.skip_unsupported:
        return {"status": "skipped",
                "reason": errors[0] if errors else "unsupported on this machine"}
    if res.returncode != 0:
        reason = f"exit status {res.returncode}"
    elif not done:
        reason = "no valid 'done' line"
    elif len(meas) != args.reps:
        reason = f"{len(meas)} measurements, expected {args.reps}"
    elif bad:
        reason = f"unparsable output line: {bad[0][:200]}"
    if reason:
        detail = errors[0] if errors else (res.stderr.strip()[-1500:] or "no message")
        return {"status": "failed", "reason": f"{reason}: {detail}", "command": cmd}
    out = {"status": "ok", "version": info.get("version")}
    for m in [bench.metric, *bench.extra_metrics]:
        out[m.field] = summarize([float(x[m.field]) for x in meas], m.unit)
    return out


def concurrent_bound(bench: Benchmark, impl: Impl, cfg: Config, threads: int,
                     program: dict | None, manifest: dict, env: dict, args,
                     figure: dict) -> dict:
    """What `threads` threads of `impl` could reach on these CPUs: one one-thread process pinned
    to each of the first `threads` CPUs of the runner's affinity, all started at once, so that
    each runs at the speed its CPU has while every other one is busy too (on a VM whose vCPUs
    share cores with other tenants these differ by up to 2x, and the fast ones move between
    calls). Together they do `threads` units of the work in the time each takes; so the
    threaded run, which does one, could at best take 1 / sum(1 / t_c) per item, `bound`.
    `efficiency` = bound / the threaded median: how much of the machine the scheduler turned
    into speed, free of what the CPUs themselves were worth in that run."""
    cpus = sorted(os.sched_getaffinity(0))[:threads]
    if len(cpus) < threads:
        return {"status": "n/a", "reason": f"{len(cpus)} CPUs available"}
    prepared = program_command(bench, impl, cfg, 1, program, manifest, env, args)
    if isinstance(prepared, dict):
        return prepared
    cmd, env = prepared
    runs = []
    with contextlib.ExitStack() as stack:
        started = []
        # However this block is left, no process of it outlives it.
        stack.callback(lambda: [(p.kill(), p.wait()) for p, _, _ in started
                                if p.poll() is None])
        for cpu in cpus:
            out = stack.enter_context(tempfile.TemporaryFile("w+"))
            err = stack.enter_context(tempfile.TemporaryFile("w+"))
            try:
                proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env,
                                        preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c}))
            except OSError as e:
                return {"status": "failed", "reason": f"could not start: {e}", "command": cmd}
            started.append((proc, out, err))
        for proc, out, err in started:
            try:
                code = proc.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                return {"status": "failed", "reason": f"timed out after {args.timeout} s",
                        "command": cmd}
            out.seek(0)
            err.seek(0)
            runs.append(parse_run(bench, subprocess.CompletedProcess(cmd, code, out.read(),
                                                                     err.read()), args))
    failed = next((r for r in runs if r["status"] != "ok"), None)
    if failed:
        return failed
    field = bench.metric.field
    per_cpu = [r[field]["median"] for r in runs]
    bound = 1 / sum(1 / t for t in per_cpu)
    return {"status": "ok", "cpus": cpus, "per_cpu": per_cpu, "bound": bound,
            "efficiency": bound / figure[field]["median"]}


def run_quietly(cmd: list[str], env: dict, timeout: float,
                cpu: int | None = None) -> subprocess.CompletedProcess:
    """Runs a benchmark program with its output going to files, read once it has exited: a
    runner that reads a pipe wakes up at every line and takes a core from the program's
    threads. On the 16-core machine, with 16 workers pinned one per core, each such wake-up
    could hold a wait of F(20) back by a time slice (4 ms instead of 0.3; docs/PERFORMANCE.md,
    session 12). With `cpu`, the program runs on that CPU alone.
    """
    pin = None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        res = subprocess.run(cmd, stdout=out, stderr=err, text=True, env=env, timeout=timeout,
                             preexec_fn=pin)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(cmd, res.returncode, out.read(), err.read())


def merge_processes(bench: Benchmark, runs: list[dict]) -> dict:
    """One figure from the runs of one program in separate processes: every repetition of every
    process pooled, since on a virtual machine a process's memory placement can move its
    figures as much as anything measured (docs/PERFORMANCE.md, session 4). Any run that did not
    succeed stands for them all."""
    if len(runs) == 1 or any(r["status"] != "ok" for r in runs):
        return next((r for r in runs if r["status"] == "failed"),
                    next((r for r in runs if r["status"] != "ok"), runs[0]))
    out = dict(runs[0], processes=len(runs))
    if all("cpus" in r for r in runs):
        out["cpus"] = [c for r in runs for c in r["cpus"]]
    for m in [bench.metric, *bench.extra_metrics]:
        out[m.field] = summarize([v for r in runs for v in r[m.field]["values"]], m.unit)
    return out


def thread_list(args) -> list[int]:
    cpus = available_cpus()
    if args.threads:
        try:
            ts = sorted({int(t) for t in args.threads.split(",") if t.strip()})
        except ValueError:
            die(f"--threads wants a comma-separated list of integers, got {args.threads!r}")
        if not ts or ts[0] < 1:
            die("--threads values must be >= 1")
        if ts[-1] > cpus:
            log(f"warning: {ts[-1]} threads on {cpus} available CPUs oversubscribes the machine")
    else:
        ts, t = [], 1
        while t <= cpus:
            ts.append(t)
            t *= 2
        if ts[-1] != cpus:
            ts.append(cpus)
    if args.quick:
        ts = sorted({ts[0], ts[-1]})
    return ts


def machine_capacity(manifest: dict, args) -> dict | None:
    """Runs bench/machine/vcpu_speed (one round, about 2 s on 16 CPUs): what a perfectly parallel
    loop with no shared memory gains on this machine, alone and with every CPU busy at once. On a
    VM whose vCPUs share cores with other tenants this is far from the CPU count, and it bounds
    every thread-scaling figure of the run. None when the probe is missing or in quick mode."""
    exe = Path(manifest["bin_dir"]) / "machine_vcpu_speed"
    if args.quick or not exe.exists():
        return None
    try:
        out = subprocess.run([str(exe), "1"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        log(f"machine probe failed: {e}")
        return None
    found = {}
    for line in out.stdout.splitlines():
        m = re.search(r" (alone|together), .*slowest/fastest ([0-9.]+)\s+sum of speeds ([0-9.]+) "
                      r"of (\d+)", line)
        if m:
            found[m.group(1)] = {"slowest_over_fastest": float(m.group(2)),
                                 "sum_of_speeds": float(m.group(3)), "cpus": int(m.group(4))}
    if set(found) != {"alone", "together"}:
        log(f"machine probe: unexpected output {out.stdout!r} {out.stderr!r}")
        return None
    log(f"machine capacity: sum of speeds {found['alone']['sum_of_speeds']} of "
        f"{found['alone']['cpus']} alone, {found['together']['sum_of_speeds']} all together "
        f"(slowest/fastest {found['together']['slowest_over_fastest']})")
    return found


def run_all(benches: list[Benchmark], manifest: dict, env: dict, args) -> tuple[list, list]:
    programs = {(p["bench"], p["impl"]): p for p in manifest["programs"]}
    threads = thread_list(args)
    out, failures = [], []
    for bench in benches:
        log(f"\n== {bench.name}: {bench.title}")
        for p in programs.values():
            if p["bench"] == bench.name and p["status"] != "built":
                log(f"   {p['impl']}: skipped ({p['reason']})")
        cells = []
        for cfg in bench.configs:
            for t in (threads if bench.threaded else [1]):
                figures, ratios = {}, {}
                # Implementations take turns, one process each per round, so that a drift of
                # the machine over the rounds reaches every one alike.
                runs = {impl.name: [] for impl in bench.impls}
                # One-thread processes of a round share one CPU (`single_cpu`); a benchmark
                # that is not threaded (the GPU's pool) places its threads itself.
                for r in range(args.processes):
                    for impl in bench.impls:
                        runs[impl.name].append(
                            run_one(bench, impl, cfg, t, programs.get((bench.name, impl.name)),
                                    manifest, env, args,
                                    single_cpu(t, r) if bench.threaded else None))
                for impl in bench.impls:
                    fig = merge_processes(bench, runs[impl.name])
                    figures[impl.name] = fig
                    if fig["status"] == "ok":
                        m = fig[bench.metric.field]
                        log(f"   {cfg.label:>16}  t={t:<3} {impl.name:<10} {m['median']:10.2f} "
                            f"{bench.metric.unit}  (min {m['min']:.2f}, max {m['max']:.2f})")
                    elif fig["status"] == "failed":
                        log(f"   {cfg.label:>16}  t={t:<3} {impl.name:<10} FAILED: {fig['reason']}")
                        failures.append({"bench": bench.name, "config": cfg.key, "threads": t,
                                         "impl": impl.name, "reason": fig["reason"]})
                ours = figures[bench.ours.name]
                for impl in bench.impls:
                    fig = figures[impl.name]
                    if impl.ours or fig["status"] != "ok" or ours["status"] != "ok":
                        continue
                    ratios[impl.name] = (fig[bench.metric.field]["median"]
                                         / ours[bench.metric.field]["median"])
                cell = {"config": cfg.key, "label": cfg.label, "threads": t,
                        "figures": figures, "ratios": ratios}
                if args.bound and bench.bound and t > 1:
                    cell["bounds"] = {}
                    for impl in bench.impls:
                        if figures[impl.name]["status"] != "ok":
                            continue
                        b = concurrent_bound(bench, impl, cfg, t,
                                             programs.get((bench.name, impl.name)), manifest,
                                             env, args, figures[impl.name])
                        cell["bounds"][impl.name] = b
                        if b["status"] == "ok":
                            log(f"   {cfg.label:>16}  t={t:<3} {impl.name:<10} bound "
                                f"{b['bound']:10.2f} {bench.metric.unit}  efficiency "
                                f"{100 * b['efficiency']:.0f}%")
                        elif b["status"] == "failed":
                            log(f"   {cfg.label:>16}  t={t:<3} {impl.name:<10} bound FAILED: "
                                f"{b['reason']}")
                            failures.append({"bench": bench.name, "config": cfg.key,
                                             "threads": t, "impl": impl.name + " (bound)",
                                             "reason": b["reason"]})
                cells.append(cell)
        out.append({
            "name": bench.name, "title": bench.title, "description": bench.description,
            "ours": bench.ours.name,
            "impls": [{"name": i.name, "ours": i.ours, "max_threads": i.max_threads,
                       "note": i.note} for i in bench.impls],
            "configs": [{"key": c.key, "label": c.label, "args": c.args} for c in bench.configs],
            "metric": dataclasses.asdict(bench.metric),
            "extra_metrics": [dataclasses.asdict(m) for m in bench.extra_metrics],
            "ratio": (f"peer/{bench.ours.name} of the median {bench.metric.field}; "
                      + ("> 1 means taskdag is faster" if bench.metric.lower_is_better
                         else "> 1 means the peer is faster")),
            "args": bench.quick_args if args.quick else bench.full_args,
            "results": cells,
        })
    return out, failures


# ---------------------------------------------------------------------------------------------
def unused_stem(out_dir: Path, stem: str) -> str:
    """`stem`, or `stem-2`, `stem-3`, ... where results of that name are in `out_dir` already:
    two runs of one commit on one machine (--only fib_task, then --only work_graph) each keep
    their files."""
    candidate, k = stem, 1
    while (out_dir / f"{candidate}.json").exists() or (out_dir / f"{candidate}.md").exists():
        k += 1
        candidate = f"{stem}-{k}"
    return candidate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See docs/PERFORMANCE.md.")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: small inputs, 1 repetition, lowest and highest thread "
                         "count; every result must validate; writes no bench/results files")
    ap.add_argument("--no-write", action="store_true",
                    help="write no result files (tables are still printed)")
    ap.add_argument("--only", help="comma-separated benchmark names (" +
                    ", ".join(b.name for b in BENCHMARKS) + ")")
    ap.add_argument("--threads", help="comma-separated thread counts (default: powers of two up "
                                      "to the available CPUs, and that count)")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions (default 5; quick 1)")
    ap.add_argument("--warmup", type=int, default=1, help="warm-up repetitions (default 1)")
    ap.add_argument("--processes", type=int, default=1,
                    help="processes per program and thread count, taking turns with the peers; "
                         "the figure pools every repetition of every process (default 1)")
    ap.add_argument("--machine", help="machine label (default: '<cpus>-core <CPU model>')")
    ap.add_argument("--pack", metavar="DIR", type=Path, help="build and pack into DIR; no run")
    ap.add_argument("--packed", metavar="DIR", type=Path, help="run from a pack, no build")
    ap.add_argument("--update-docs", action="store_true",
                    help="also put the tables into docs/PERFORMANCE.md (section of this machine)")
    ap.add_argument("--results-dir", type=Path, default=HERE / "results",
                    help="where result files go (default: bench/results next to this script)")
    ap.add_argument("--build-dir", type=Path, help="CMake build dir (default <repo>/build/bench)")
    ap.add_argument("--no-cargo", action="store_true",
                    help="do not run cargo; use the existing release libtaskdag.so")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per program run")
    ap.add_argument("--bound", action="store_true",
                    help="also run, for each thread count T > 1 of the task and work-graph "
                         "benchmarks, T one-thread processes at once, one pinned per CPU: the "
                         "best T threads could do on these CPUs, and each implementation's "
                         "efficiency against it")
    args = ap.parse_args()
    if args.reps is None:
        args.reps = 1 if args.quick else 5
    if args.reps < 1 or args.warmup < 0 or args.processes < 1:
        die("--reps and --processes must be >= 1 and --warmup >= 0")
    if args.pack and args.packed:
        die("--pack and --packed exclude each other")
    if args.update_docs and (args.quick or args.no_write):
        die("--update-docs records real figures; it excludes --quick and --no-write")
    if args.update_docs and not (HERE.parent / "docs" / "PERFORMANCE.md").exists():
        die(f"{HERE.parent / 'docs' / 'PERFORMANCE.md'} not found (--update-docs works from the "
            f"repository's bench/run.py, also with --packed DIR)")

    benches = BENCHMARKS
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in {b.name for b in BENCHMARKS}]
        if unknown:
            die(f"unknown benchmark(s) {unknown}; known: {[b.name for b in BENCHMARKS]}")
        benches = [b for b in BENCHMARKS if b.name in names]

    machine = machine_info(args.machine)
    repo = HERE.parent
    env = dict(os.environ)
    if args.packed:
        manifest = load_pack(args.packed)
        source = manifest.get("source", {"commit": "nocommit", "dirty": None})
        quick_dir = args.packed.resolve() / "quick"
    else:
        if not (repo / "Cargo.toml").exists():
            die(f"{repo} is not the taskdag repository; use --packed DIR to run from a pack")
        source = source_info(repo)
        build_dir = (args.build_dir or repo / "build" / "bench").resolve()
        manifest = build(repo, build_dir, args)
        if args.pack:
            make_pack(args.pack, manifest, repo, machine, source)
            return 0
        quick_dir = build_dir / "quick"

    log(f"machine: {machine['label']} ({machine['cpu_model']}, {machine['cpus_available']} CPUs "
        f"available); commit {source['commit']}{' (dirty)' if source.get('dirty') else ''}")
    started = datetime.datetime.now(datetime.timezone.utc)
    capacity_before = machine_capacity(manifest, args)
    results, failures = run_all(benches, manifest, env, args)
    capacity_after = machine_capacity(manifest, args)
    doc = {
        "schema": SCHEMA_VERSION,
        "machine": machine,
        "source": source,
        "toolchain": manifest.get("toolchain"),
        "packed": bool(args.packed),
        "date": started.isoformat(timespec="seconds"),
        "duration_s": round((datetime.datetime.now(datetime.timezone.utc) - started)
                            .total_seconds(), 1),
        "command": shlex.join(["python3", "bench/run.py", *sys.argv[1:]]),
        "settings": {"quick": args.quick, "reps": args.reps, "warmup": args.warmup,
                     "bound": args.bound,
                     "processes": args.processes,
                     "threads": thread_list(args), "arch": manifest.get("arch")},
        "machine_capacity": [c for c in (capacity_before, capacity_after) if c],
        "benchmarks": results,
        "failures": failures,
    }

    sys.path.insert(0, str(HERE))
    sys.dont_write_bytecode = True  # no __pycache__ in bench/
    import render  # noqa: E402  (next to this script, also in a pack)

    stem = f"{slug(machine['label'])}-{source['commit']}"
    if source.get("dirty"):
        stem += "-dirty"
    tmp = None
    if args.no_write:
        tmp = tempfile.TemporaryDirectory()
        out_dir = Path(tmp.name)
    elif args.quick:
        out_dir = quick_dir
    else:
        out_dir = args.results_dir
        stem = unused_stem(out_dir, stem)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{stem}.json"
    json_path.write_text(json.dumps(doc, indent=1) + "\n")
    md, files = render.render(doc, out_dir, stem)
    log("\n" + md)
    if args.update_docs:
        doc_path = HERE.parent / "docs" / "PERFORMANCE.md"
        render.render_into_doc(doc, doc_path, out_dir, stem)
        files.append(doc_path)
    if not args.no_write:
        log("wrote " + ", ".join(str(p) for p in [json_path, *files]))
    if tmp:
        tmp.cleanup()
    if failures:
        log(f"\n{len(failures)} benchmark run(s) FAILED (no figure recorded for them):")
        for f in failures:
            log(f"  {f['bench']} {f['config']} threads={f['threads']} {f['impl']}: {f['reason']}")
        return 1
    log("\nall benchmark results validated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
