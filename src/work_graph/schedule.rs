//! The schedule a plan computes once: a topological order of the items (a list schedule), and
//! for each position in it the positions of the item's predecessors.
//!
//! Because the graph is static (000 §2.4), the choice of which ready item to run next can be
//! made before any run: workers then walk one shared order instead of passing items through
//! ready queues, and an item's readiness is a matter of its predecessors' completion flags
//! (`worker`). The order is chosen for parallelism and locality:
//! - one priority level: by decreasing height (the number of items on the longest path from the
//!   item to the end of the graph), then by index. Height order is a topological order (an item
//!   is taller than everything after it) and is the "highest level first" rule of list
//!   scheduling: the longest chains start first, so the end of the run is not one chain left
//!   running alone. Ties by index keep the work function's own arrays, usually indexed by item,
//!   walked in address order.
//! - several levels (000 §2.4.2): a list schedule simulated on one worker, taking at each step
//!   a ready item of the highest level (first come, first served within a level, starting from
//!   the items without predecessors in height order). On one worker this is exactly "ready
//!   items of higher priority run first"; on several, higher-priority items come first in the
//!   order that the workers take.

use super::acyclic::DagShape;
use super::crs::Crs;
use crate::huge_pages::HostArray;
use std::collections::VecDeque;

/// The arrays a run walks per position are `HostArray`s: on huge pages when large
/// (crate::huge_pages, docs/work-graph.md).
pub(super) struct Schedule {
    /// The item at each position.
    pub order: HostArray<u32>,
    /// Position p's predecessors are `pred_positions[pred_offsets[p]..pred_offsets[p + 1]]`.
    pub pred_offsets: HostArray<u32>,
    /// Positions of predecessors, each smaller than the position it precedes, in decreasing
    /// order within a row.
    pub pred_positions: HostArray<u32>,
    /// Per position, 1 + the position of its latest predecessor, or 0 without predecessors: an
    /// item whose latest predecessor is known complete needs no other look.
    pub latest_pred: HostArray<u32>,
    /// With one priority level: where each height starts in the order (tallest first), and
    /// the order's length at the end. Items of one height never depend on each other. Empty
    /// with several levels.
    pub level_starts: Box<[u32]>,
    /// With one priority level, the number of items of the widest height (0 without items);
    /// `None` with several levels.
    pub widest: Option<usize>,
}

impl Schedule {
    /// The schedule of `graph`, whose items have the dense priority levels `levels` (empty when
    /// there is one level).
    pub(super) fn new(graph: &Crs, shape: &DagShape, levels: &[u8], level_count: usize) -> Self {
        let order = if level_count > 1 {
            priority_order(graph, shape, levels, level_count)
        } else {
            height_order(&shape.height)
        };
        let level_starts = if level_count > 1 {
            Vec::new()
        } else {
            let height = |p: usize| shape.height[order[p] as usize];
            (0..order.len())
                .filter(|&p| p == 0 || height(p) != height(p - 1))
                .chain([order.len()])
                .map(|p| p as u32)
                .collect()
        };
        let n = order.len();
        let mut position = vec![0u32; n];
        for (p, &item) in order.iter().enumerate() {
            position[item as usize] = p as u32;
        }
        let predecessors = graph.transpose();
        let mut pred_offsets = Vec::with_capacity(n + 1);
        let mut pred_positions = Vec::with_capacity(graph.num_entries());
        let mut latest_pred = Vec::with_capacity(n);
        pred_offsets.push(0u32);
        for &item in &order {
            let first = pred_positions.len();
            pred_positions.extend(
                predecessors
                    .row(item as usize)
                    .iter()
                    .map(|&i| position[i as usize]),
            );
            // Latest first: the predecessor most likely to be still running is looked at first,
            // and once one is below a worker's low-water mark, so are all the rest.
            pred_positions[first..].sort_unstable_by(|a, b| b.cmp(a));
            latest_pred.push(pred_positions.get(first).map_or(0, |&q| q + 1));
            pred_offsets.push(pred_positions.len() as u32);
        }
        let widest = (level_count <= 1).then(|| {
            level_starts
                .windows(2)
                .map(|h| (h[1] - h[0]) as usize)
                .max()
                .unwrap_or(0)
        });
        Schedule {
            widest,
            order: HostArray::from_vec(order),
            pred_offsets: HostArray::from_vec(pred_offsets),
            pred_positions: HostArray::from_vec(pred_positions),
            latest_pred: HostArray::from_vec(latest_pred),
            level_starts: level_starts.into_boxed_slice(),
        }
    }

    /// The positions of the height with index `h` (one priority level).
    pub(super) fn height(&self, h: usize) -> std::ops::Range<usize> {
        self.level_starts[h] as usize..self.level_starts[h + 1] as usize
    }

    /// Positions of the predecessors of the item at position `p`.
    #[inline]
    pub(super) fn predecessors(&self, p: usize) -> &[u32] {
        &self.pred_positions[self.pred_offsets[p] as usize..self.pred_offsets[p + 1] as usize]
    }
}

/// Items by decreasing height, then increasing index: a counting sort on the height.
fn height_order(height: &[u32]) -> Vec<u32> {
    let tallest = height.iter().copied().max().unwrap_or(0) as usize;
    // starts[h] will be the first position of height h; tallest first.
    let mut starts = vec![0usize; tallest + 2];
    for &h in height {
        starts[tallest - h as usize + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    let mut order = vec![0u32; height.len()];
    for (i, &h) in height.iter().enumerate() {
        let slot = &mut starts[tallest - h as usize];
        order[*slot] = i as u32;
        *slot += 1;
    }
    order
}

/// A list schedule on one worker that always takes a ready item of the highest level.
fn priority_order(graph: &Crs, shape: &DagShape, levels: &[u8], level_count: usize) -> Vec<u32> {
    let n = graph.num_rows();
    let mut ready: Vec<VecDeque<u32>> = vec![VecDeque::new(); level_count];
    for item in height_order(&shape.height) {
        if shape.indegree[item as usize] == 0 {
            ready[levels[item as usize] as usize].push_back(item);
        }
    }
    let mut remaining = shape.indegree.clone();
    let mut order = Vec::with_capacity(n);
    while let Some(item) = ready.iter_mut().find_map(VecDeque::pop_front) {
        order.push(item);
        for &next in graph.row(item as usize) {
            let left = &mut remaining[next as usize];
            *left -= 1;
            if *left == 0 {
                ready[levels[next as usize] as usize].push_back(next);
            }
        }
    }
    debug_assert_eq!(order.len(), n, "the graph was checked to be acyclic");
    order
}
