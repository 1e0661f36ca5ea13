//! Process-wide runtime state: initialize, finalize, and the configuration report.
//!
//! Initialization records how the host should be used (threads, NUMA layout, GPU) so later
//! subsystems size themselves from one place, as Kokkos' `initialize` does (003, 004).

use crate::cuda::{self, CudaStatus};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{PoolOptions, Space};
use crate::topology::Topology;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// How the runtime should use the machine; zero in a count means "choose for me".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InitArgs {
    /// Host worker threads; 0 = one per core available to the process.
    pub num_threads: usize,
    /// NUMA domains to use; 0 = all.
    pub num_numa: usize,
    /// Cores to use in each NUMA domain; 0 = all.
    pub cores_per_numa: usize,
    /// CUDA device ordinal; `None` = the first device, if any.
    pub device_id: Option<u32>,
    /// How long idle workers spin before they sleep; `None` = the default (exec::PoolOptions).
    pub idle_spin: Option<std::time::Duration>,
}

/// The state of an initialized runtime.
#[derive(Debug)]
struct Runtime {
    args: InitArgs,
    topology: Topology,
    /// Found on first use, not at `initialize`: asking the driver starts it, which took about
    /// 235 ms of every process on the H100 machine (a 16-thread Fibonacci run: 259-278 ms with
    /// the GPU visible, 24-25 ms without), CPU-only programs included.
    cuda: std::sync::OnceLock<CudaStatus>,
    /// The root instance of the Threads space; its control thread is the initializing thread.
    threads: Space,
}

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);
// Mirrors `RUNTIME.is_some()` so hot entry points can check without taking the lock. Relaxed is
// enough: it only gates calls, it never publishes data (the data is behind the mutex).
static INITIALIZED: AtomicBool = AtomicBool::new(false);

fn lock() -> std::sync::MutexGuard<'static, Option<Runtime>> {
    // A panic while holding the lock cannot leave `Option<Runtime>` half-written, so poisoning
    // carries no information here.
    RUNTIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the runtime. Fails with `AlreadyInitialized` if it is running, and with
/// `InvalidArgument` if the arguments ask for more than the machine has.
pub fn initialize(args: InitArgs) -> Result<()> {
    let mut guard = lock();
    if guard.is_some() {
        return Err(Error::new(
            ErrorKind::AlreadyInitialized,
            "td_initialize: the runtime is already initialized; call td_finalize first, or check \
             td_is_initialized",
        ));
    }
    let topology = Topology::detect();
    validate(&args, &topology)?;
    let threads = Space::threads(&pool_options(&args, &topology))?;
    *guard = Some(Runtime {
        args,
        topology,
        cuda: std::sync::OnceLock::new(),
        threads,
    });
    INITIALIZED.store(true, Ordering::Relaxed);
    Ok(())
}

fn validate(args: &InitArgs, topo: &Topology) -> Result<()> {
    if args.num_threads > topo.hardware_threads {
        return Err(Error::invalid_argument(format!(
            "td_initialize: num_threads ({}) exceeds the {} hardware threads available to this \
             process; pass 0 to use all of them",
            args.num_threads, topo.hardware_threads
        )));
    }
    if args.num_numa > topo.numa_domains {
        return Err(Error::invalid_argument(format!(
            "td_initialize: num_numa ({}) exceeds the {} NUMA domain(s) of this machine",
            args.num_numa, topo.numa_domains
        )));
    }
    let domains = if args.num_numa == 0 {
        topo.numa_domains
    } else {
        args.num_numa
    };
    if args.cores_per_numa.saturating_mul(domains) > topo.cores {
        return Err(Error::invalid_argument(format!(
            "td_initialize: cores_per_numa ({}) x {domains} NUMA domain(s) exceeds the {} cores \
             available to this process",
            args.cores_per_numa, topo.cores
        )));
    }
    Ok(())
}

/// Threads for the root pool: the requested count, else the NUMA request, else one per core;
/// pinned one per core when there are enough cores (003 `initialize`).
fn pool_options(args: &InitArgs, topo: &Topology) -> PoolOptions {
    let threads = if args.num_threads > 0 {
        args.num_threads
    } else if args.cores_per_numa > 0 {
        args.cores_per_numa * args.num_numa.max(1)
    } else {
        topo.cores
    }
    .max(1);
    let cpus = crate::topology::available_cpus();
    let pinned = cpus.len() >= threads;
    // Without per-core NUMA information from the OS, cores are assumed to be numbered domain
    // by domain, which is how Linux enumerates cores on the machines we target.
    let numa = (0..threads)
        .map(|r| r * topo.numa_domains / threads.max(1))
        .collect();
    PoolOptions {
        threads,
        cpus: if pinned {
            cpus[..threads].to_vec()
        } else {
            Vec::new()
        },
        numa,
        idle_spin: args.idle_spin,
    }
}

/// The root instance of the Threads space.
pub fn threads_space() -> Result<Space> {
    lock()
        .as_ref()
        .map(|rt| rt.threads.clone())
        .ok_or_else(|| not_initialized("td_space_threads"))
}

/// The CUDA device the runtime was initialized to use, if it names one.
#[cfg(feature = "cuda")]
pub(crate) fn cuda_device_ordinal() -> Option<u32> {
    lock().as_ref().and_then(|rt| rt.args.device_id)
}

/// Stops the runtime. Objects created while it ran stay valid until released; the root thread
/// pool stops when the last handle to it is released.
pub fn finalize() -> Result<()> {
    let mut guard = lock();
    match guard.as_ref() {
        None => return Err(not_initialized("td_finalize")),
        Some(rt) if rt.threads.is_busy() => {
            return Err(Error::new(
                ErrorKind::Busy,
                "td_finalize: a dispatch is running on the root Threads instance; call \
                 td_finalize after it returns",
            ))
        }
        Some(_) => {}
    }
    guard.take();
    INITIALIZED.store(false, Ordering::Relaxed);
    Ok(())
}

pub fn is_initialized() -> bool {
    INITIALIZED.load(Ordering::Relaxed)
}

/// Fails with `NotInitialized`, naming `what`, unless the runtime is running.
pub fn require_initialized(what: &str) -> Result<()> {
    if is_initialized() {
        Ok(())
    } else {
        Err(not_initialized(what))
    }
}

#[cold]
fn not_initialized(what: &str) -> Error {
    Error::new(
        ErrorKind::NotInitialized,
        format!("{what}: the runtime is not initialized; call td_initialize first"),
    )
}

/// A human-readable description of the runtime: version, build features, spaces and topology.
pub fn configuration() -> Result<String> {
    let guard = lock();
    let rt = guard
        .as_ref()
        .ok_or_else(|| not_initialized("td_configuration_string"))?;
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "taskdag {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(
        s,
        "  build: features [{}], {} profile",
        enabled_features().join(", "),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    let _ = writeln!(s, "  host: {}", rt.topology);
    let _ = writeln!(s, "  threads space: {}", rt.threads.describe());
    let _ = writeln!(
        s,
        "  requested: threads {}, numa {}, cores per numa {}",
        count_or_all(rt.args.num_threads),
        count_or_all(rt.args.num_numa),
        count_or_all(rt.args.cores_per_numa)
    );
    let _ = writeln!(
        s,
        "  memory spaces: host{}",
        if rt.cuda.get_or_init(cuda::detect).available() {
            ", cuda, cuda host-pinned"
        } else {
            ""
        }
    );
    let _ = write!(s, "  cuda: ");
    match rt.cuda.get_or_init(cuda::detect) {
        CudaStatus::Devices(devs) if !devs.is_empty() => {
            let _ = writeln!(s, "{} device(s)", devs.len());
            for d in devs {
                let _ = writeln!(
                    s,
                    "    [{}] {}, compute capability {}.{}, {} SMs, {} MiB",
                    d.ordinal,
                    d.name,
                    d.compute_capability.0,
                    d.compute_capability.1,
                    d.multiprocessors,
                    d.total_memory_bytes >> 20
                );
            }
        }
        status => {
            let _ = writeln!(s, "unavailable: {}", status.reason());
        }
    }
    let _ = writeln!(s, "  cuda kernels: {}", kernels_description());
    Ok(s)
}

/// Whether the library carries its GPU kernels, and which nvcc built them.
fn kernels_description() -> String {
    #[cfg(feature = "cuda")]
    if let Some(version) = cuda::nvcc_version() {
        return format!("built by nvcc {version} (sm_80, sm_90 SASS; compute_90 PTX)");
    }
    "not built (library built without nvcc)".to_string()
}

fn count_or_all(n: usize) -> String {
    if n == 0 {
        "all".to_string()
    } else {
        n.to_string()
    }
}

fn enabled_features() -> Vec<&'static str> {
    let mut f = Vec::new();
    if cfg!(feature = "cuda") {
        f.push("cuda");
    }
    if cfg!(feature = "hwloc") {
        f.push("hwloc");
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test owns the global runtime so parallel tests do not race on it.
    #[test]
    fn lifecycle_rejects_misuse_and_reports_configuration() {
        assert_eq!(
            configuration().unwrap_err().kind(),
            ErrorKind::NotInitialized
        );
        assert_eq!(finalize().unwrap_err().kind(), ErrorKind::NotInitialized);
        let too_many = InitArgs {
            num_threads: Topology::detect().hardware_threads + 1,
            ..InitArgs::default()
        };
        let e = initialize(too_many).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("num_threads"), "{}", e.message());
        assert!(!is_initialized());

        initialize(InitArgs::default()).unwrap();
        assert!(is_initialized());
        let e = initialize(InitArgs::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AlreadyInitialized);
        let text = configuration().unwrap();
        assert!(text.starts_with(&format!("taskdag {}", env!("CARGO_PKG_VERSION"))));
        assert!(text.contains("hardware thread(s)"), "{text}");
        assert!(text.contains("cuda: "), "{text}");
        let threads = threads_space().unwrap().concurrency();
        finalize().unwrap();
        assert!(!is_initialized());
        // Initialize again after finalize is allowed, and sizes the pool as before although the first
        // pool pinned this thread to one CPU.
        initialize(InitArgs::default()).unwrap();
        assert_eq!(threads_space().unwrap().concurrency(), threads);
        finalize().unwrap();
    }
}
