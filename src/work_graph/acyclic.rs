//! The last requirement of 000 §3.3.1, "there are no cycles in the directed edges", checked in
//! O(N + NZ) before a work graph is planned. A cycle would leave its items waiting forever, so
//! it is reported up front with an item on it, the cycle's length and its items.
//!
//! Kahn's algorithm removes items whose predecessors are all removed; items left over have a
//! predecessor that is left over too, so walking from one of them to a left-over predecessor,
//! again and again, must revisit an item: that revisit closes a cycle. The topological order it
//! produces also gives each item's height (longest path to the end), which orders the roots.

use super::crs::Crs;
use crate::error::{Error, ErrorKind, Result};

/// Items of a cycle listed in a message before it is abbreviated.
const LISTED_ITEMS: usize = 12;

/// What planning needs to know about an acyclic graph.
pub(super) struct DagShape {
    /// Number of execute-after dependences of each item (entries naming it).
    pub indegree: Vec<u32>,
    /// Items on the longest path from each item to the end of the graph, the item included
    /// (its "bottom level" in list scheduling).
    pub height: Vec<u32>,
}

/// The in-degree and height of each item, once the graph is known to be acyclic. Fails with
/// `Cycle` for a self-dependence or a cycle, naming an item on it.
pub(super) fn dag_shape(graph: &Crs) -> Result<DagShape> {
    let n = graph.num_rows();
    let mut indegree = vec![0u32; n];
    for i in 0..n {
        for (offset, &j) in graph.row(i).iter().enumerate() {
            if j as usize == i {
                return Err(Error::new(
                    ErrorKind::Cycle,
                    format!(
                        "item {i} executes after itself (entries[{}] of row {i} is {i}): a \
                         cycle of length 1; remove the self-dependence",
                        graph.row_map()[i] as usize + offset
                    ),
                ));
            }
            indegree[j as usize] += 1;
        }
    }
    let mut remaining = indegree.clone();
    let mut order: Vec<u32> = Vec::with_capacity(n);
    order.extend((0..n as u32).filter(|&i| indegree[i as usize] == 0));
    let mut next = 0;
    while let Some(&i) = order.get(next) {
        next += 1;
        for &j in graph.row(i as usize) {
            let left = &mut remaining[j as usize];
            *left -= 1;
            if *left == 0 {
                order.push(j);
            }
        }
    }
    if order.len() < n {
        return Err(cycle_error(graph, &remaining));
    }
    // Heights in reverse topological order: every successor's height is known before its
    // predecessors need it.
    let mut height = remaining;
    for &i in order.iter().rev() {
        let below = graph
            .row(i as usize)
            .iter()
            .map(|&j| height[j as usize])
            .max();
        height[i as usize] = 1 + below.unwrap_or(0);
    }
    Ok(DagShape { indegree, height })
}

/// Finds a cycle among the items Kahn's algorithm could not remove (`remaining > 0`) and
/// describes it.
#[cold]
fn cycle_error(graph: &Crs, remaining: &[u32]) -> Error {
    let predecessors = graph.transpose();
    let left = |i: u32| remaining[i as usize] > 0;
    let Some(start) = (0..remaining.len() as u32).find(|&i| left(i)) else {
        return Error::new(ErrorKind::Internal, "cycle check: no item left over");
    };
    // `path[s]` is the item reached after s steps backwards; `step[item]` its position.
    let mut step = vec![u32::MAX; remaining.len()];
    let mut path = vec![start];
    step[start as usize] = 0;
    let closing = loop {
        let here = *path.last().expect("the path starts non-empty");
        let Some(&back) = predecessors.row(here as usize).iter().find(|&&p| left(p)) else {
            return Error::new(
                ErrorKind::Internal,
                format!("cycle check: item {here} is left over without a left-over predecessor"),
            );
        };
        if step[back as usize] != u32::MAX {
            break back;
        }
        step[back as usize] = path.len() as u32;
        path.push(back);
    };
    // The cycle is path[t..] walked backwards; in execute-after order it is `closing`, then the
    // path from its end back to position t + 1, then `closing` again.
    let t = step[closing as usize] as usize;
    let cycle: Vec<u32> = std::iter::once(closing)
        .chain(path[t + 1..].iter().rev().copied())
        .collect();
    let mut listed: Vec<String> = cycle
        .iter()
        .take(LISTED_ITEMS)
        .map(u32::to_string)
        .collect();
    if cycle.len() > LISTED_ITEMS {
        listed.push(format!("... ({} more)", cycle.len() - LISTED_ITEMS));
    }
    listed.push(closing.to_string());
    Error::new(
        ErrorKind::Cycle,
        format!(
            "item {closing} is on a cycle of length {}: {} (each item executes after the one \
             before it); a work graph must be acyclic, so remove one of these dependences",
            cycle.len(),
            listed.join(" -> ")
        ),
    )
}
