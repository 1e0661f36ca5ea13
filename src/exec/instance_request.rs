//! Requests for sub-instances (003 `InstanceRequest`) and the partition of an instance's threads
//! that satisfies them, all checked before anything runs.

use crate::error::{Error, Result};

/// One sub-instance to carve out of the current instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceRequest {
    /// Threads in the sub-instance; at least 1.
    pub threads: usize,
    /// NUMA domains to spread over; 0 = any (threads are taken in order).
    pub numa_count: usize,
    /// Threads per NUMA domain when `numa_count > 0`; 0 = an equal share of `threads`.
    pub cores_per_numa: usize,
}

/// Assigns disjoint members (pool ranks, in the members' order) to each request. `numa[r]` is
/// pool rank r's NUMA domain.
pub(crate) fn partition(
    requests: &[InstanceRequest],
    members: &[usize],
    numa: &[usize],
) -> Result<Vec<Vec<usize>>> {
    if requests.is_empty() {
        return Err(Error::invalid_argument(
            "run_instances: no requests; pass at least one",
        ));
    }
    let total: usize = requests.iter().map(|r| r.threads).sum();
    if total > members.len() {
        return Err(Error::invalid_argument(format!(
            "run_instances: the requests ask for {total} threads in all, but this instance has \
             {}; request fewer threads",
            members.len()
        )));
    }
    let mut free: Vec<bool> = vec![true; members.len()];
    let mut parts = Vec::with_capacity(requests.len());
    for (i, req) in requests.iter().enumerate() {
        if req.threads == 0 {
            return Err(Error::invalid_argument(format!(
                "run_instances: request {i} asks for 0 threads; each instance needs at least one"
            )));
        }
        let mut part = Vec::with_capacity(req.threads);
        if req.numa_count == 0 {
            take(&mut free, members, req.threads, |_| true, &mut part);
        } else {
            let per = if req.cores_per_numa == 0 {
                req.threads.div_ceil(req.numa_count)
            } else {
                req.cores_per_numa
            };
            if per * req.numa_count < req.threads {
                return Err(Error::invalid_argument(format!(
                    "run_instances: request {i} asks for {} threads on {} NUMA domain(s) x {per} \
                     threads each, which cannot hold them",
                    req.threads, req.numa_count
                )));
            }
            let domains = domains_with_room(&free, members, numa, per);
            if domains.len() < req.numa_count {
                return Err(Error::invalid_argument(format!(
                    "run_instances: request {i} needs {} NUMA domain(s) with {per} free threads \
                     each, but only {} such domain(s) remain",
                    req.numa_count,
                    domains.len()
                )));
            }
            let mut left = req.threads;
            for &d in domains.iter().take(req.numa_count) {
                let n = per.min(left);
                take(&mut free, members, n, |r| numa[r] == d, &mut part);
                left -= n;
            }
        }
        parts.push(part);
    }
    Ok(parts)
}

fn take(
    free: &mut [bool],
    members: &[usize],
    n: usize,
    eligible: impl Fn(usize) -> bool,
    out: &mut Vec<usize>,
) {
    let mut taken = 0;
    for (k, &r) in members.iter().enumerate() {
        if taken == n {
            break;
        }
        if free[k] && eligible(r) {
            free[k] = false;
            out.push(r);
            taken += 1;
        }
    }
}

fn domains_with_room(free: &[bool], members: &[usize], numa: &[usize], per: usize) -> Vec<usize> {
    let max = members.iter().map(|&r| numa[r]).max().unwrap_or(0);
    let mut room = vec![0usize; max + 1];
    for (k, &r) in members.iter().enumerate() {
        if free[k] {
            room[numa[r]] += 1;
        }
    }
    (0..=max).filter(|&d| room[d] >= per).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(threads: usize) -> InstanceRequest {
        InstanceRequest {
            threads,
            numa_count: 0,
            cores_per_numa: 0,
        }
    }

    #[test]
    fn parts_are_disjoint_and_in_member_order() {
        let members = [0, 1, 2, 3, 4, 5];
        let parts = partition(&[req(2), req(3)], &members, &[0; 6]).unwrap();
        assert_eq!(parts, vec![vec![0, 1], vec![2, 3, 4]]);
    }

    #[test]
    fn oversubscription_and_empty_requests_are_rejected() {
        let e = partition(&[req(4), req(3)], &[0, 1, 2, 3, 4, 5], &[0; 6]).unwrap_err();
        assert!(e.message().contains("7 threads"), "{}", e.message());
        assert!(partition(&[req(0)], &[0, 1], &[0; 2]).is_err());
        assert!(partition(&[], &[0, 1], &[0; 2]).is_err());
    }

    #[test]
    fn numa_requests_take_threads_from_whole_domains() {
        let numa = [0, 0, 1, 1, 2, 2];
        let r = InstanceRequest {
            threads: 4,
            numa_count: 2,
            cores_per_numa: 2,
        };
        let parts = partition(&[req(1), r], &[0, 1, 2, 3, 4, 5], &numa).unwrap();
        assert_eq!(parts[1], vec![2, 3, 4, 5]);
        let too_many = InstanceRequest {
            threads: 2,
            numa_count: 4,
            cores_per_numa: 1,
        };
        assert!(partition(&[too_many], &[0, 1, 2, 3, 4, 5], &numa).is_err());
    }
}
