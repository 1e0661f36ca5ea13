//! What the host looks like: packages, NUMA domains, cores and hardware threads. From hwloc with
//! the `hwloc` feature, otherwise from the OS (cores this process may run on; one package and one
//! NUMA domain assumed), as in Kokkos' hwloc-based initialization (004).

use std::fmt;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub packages: usize,
    pub numa_domains: usize,
    pub cores: usize,
    pub hardware_threads: usize,
    /// Where the numbers came from: "hwloc" or "os".
    pub source: &'static str,
}

impl Topology {
    /// The host as seen by the first call in this process. Later calls return the same: the
    /// OS answers from the calling thread's affinity, which a pool thread (pinned to one CPU)
    /// would report as a one-CPU machine.
    pub fn detect() -> Topology {
        static DETECTED: OnceLock<Topology> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            #[cfg(feature = "hwloc")]
            if let Some(t) = from_hwloc() {
                return t;
            }
            from_os()
        })
    }
}

/// OS ids of the CPUs this process may run on, as the first call saw them (see `detect`).
pub fn available_cpus() -> &'static [usize] {
    static CPUS: OnceLock<Vec<usize>> = OnceLock::new();
    CPUS.get_or_init(|| {
        core_affinity::get_core_ids()
            .map(|ids| ids.into_iter().map(|c| c.id).collect())
            .unwrap_or_default()
    })
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} package(s), {} NUMA domain(s), {} core(s), {} hardware thread(s) (from {})",
            self.packages, self.numa_domains, self.cores, self.hardware_threads, self.source
        )
    }
}

fn from_os() -> Topology {
    let cores = Some(available_cpus().len()).filter(|&n| n > 0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    Topology {
        packages: 1,
        numa_domains: 1,
        cores: cores.unwrap_or(threads),
        hardware_threads: threads,
        source: "os",
    }
}

#[cfg(feature = "hwloc")]
fn from_hwloc() -> Option<Topology> {
    use hwloc2::{ObjectType, Topology as Hwloc};
    let topo = Hwloc::new()?;
    let count = |t: ObjectType| topo.objects_with_type(&t).map_or(0, |v| v.len());
    let cores = count(ObjectType::Core);
    let pus = count(ObjectType::PU);
    (cores > 0 && pus > 0).then(|| Topology {
        packages: count(ObjectType::Package).max(1),
        // NUMA nodes sit at a virtual depth that `objects_with_type` cannot address; count the
        // machine's node set instead.
        numa_domains: topo
            .object_at_root()
            .nodeset()
            .map_or(1, |set| usize::try_from(set.weight()).unwrap_or(1).max(1)),
        cores,
        hardware_threads: pus,
        source: "hwloc",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detected_topology_is_consistent() {
        let t = Topology::detect();
        assert!(t.packages >= 1 && t.numa_domains >= 1);
        assert!(t.cores >= 1 && t.hardware_threads >= t.cores.min(t.hardware_threads));
        assert!(t.to_string().contains("core(s)"));
    }
}
