//! The schedule a plan computes once: a topological order of the items (a list schedule), and
//! for each position in it the positions of the item's predecessors.
//!
//! Because the graph is static (000 §2.4), the choice of which ready item to run next can be
//! made before any run: workers then walk one shared order instead of passing items through
//! ready queues, and an item's readiness is a matter of its predecessors' completion flags
//! (`worker`). The order is chosen for parallelism and locality:
//! - one priority level: by decreasing height (the number of items on the longest path from the
//!   item to the end of the graph), then by tree key. Height order is a topological order (an
//!   item is taller than everything after it) and is the "highest level first" rule of list
//!   scheduling: the longest chains start first, so the end of the run is not one chain left
//!   running alone. The tree key (`tree_keys`) is an item's place in a depth-first walk of a
//!   spanning forest of the graph: several workers split every height by ranges of keys that
//!   stay the same from height to height (`worker`), so that a worker runs whole subtrees and
//!   the items it waits for are mostly its own. In a tree numbered breadth-first, as 000
//!   Fig. 3.6 numbers fib, key order within a height is index order, so the work function's
//!   arrays are still walked in address order.
//! - several levels (000 §2.4.2): a list schedule simulated on one worker, taking at each step
//!   a ready item of the highest level (first come, first served within a level, starting from
//!   the items without predecessors in height order). On one worker this is exactly "ready
//!   items of higher priority run first"; on several, higher-priority items come first in the
//!   order that the workers take.

use super::acyclic::DagShape;
use super::crs::Crs;
use std::collections::VecDeque;

pub(super) struct Schedule {
    /// The item at each position.
    pub order: Box<[u32]>,
    /// Position p's predecessors are `pred_positions[pred_offsets[p]..pred_offsets[p + 1]]`.
    pub pred_offsets: Box<[u32]>,
    /// Positions of predecessors, each smaller than the position it precedes, in decreasing
    /// order within a row.
    pub pred_positions: Box<[u32]>,
    /// Per position, 1 + the position of its latest predecessor, or 0 without predecessors: an
    /// item whose latest predecessor is known complete needs no other look.
    pub latest_pred: Box<[u32]>,
    /// With one priority level: where each height starts in the order (tallest first), and
    /// the order's length at the end. Items of one height never depend on each other. Empty
    /// with several levels.
    pub level_starts: Box<[u32]>,
    /// With one priority level: the tree key of the item at each position, increasing within a
    /// height. Empty with several levels.
    pub keys: Box<[u32]>,
    /// With one priority level: true when workers split heights by ranges of keys, false when
    /// they split each height evenly (`key_ranges_keep_locality`).
    pub split_by_key: bool,
}

/// Fewest items per worker for a height to be split among the workers: a narrower height runs
/// on worker 0 alone. Passing an item's result to another core costs a cache miss of the order
/// of 100 ns, several items' work: a height split so thin would mostly pass results between
/// cores. (Under loom, 1: the models' heights of two items are split between the two workers.)
const MIN_SLICE: usize = if cfg!(loom) { 1 } else { 32 };
/// The number of workers at which a plan compares the two ways of splitting heights: that of a
/// mid-sized machine, as the plan does not know the spaces it will run on.
const REFERENCE_WORKERS: usize = if cfg!(loom) { 2 } else { 16 };

impl Schedule {
    /// The schedule of `graph`, whose items have the dense priority levels `levels` (empty when
    /// there is one level).
    pub(super) fn new(graph: &Crs, shape: &DagShape, levels: &[u8], level_count: usize) -> Self {
        let keys = if level_count > 1 {
            Vec::new()
        } else {
            tree_keys(graph)
        };
        let order = if level_count > 1 {
            priority_order(graph, shape, levels, level_count)
        } else {
            let mut by_key = vec![0u32; keys.len()];
            for (item, &key) in keys.iter().enumerate() {
                by_key[key as usize] = item as u32;
            }
            height_order(&shape.height, by_key)
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
        let keys: Box<[u32]> = if keys.is_empty() {
            Box::default()
        } else {
            order.iter().map(|&item| keys[item as usize]).collect()
        };
        let split_by_key = level_count <= 1
            && key_ranges_keep_locality(&keys, &level_starts, &pred_offsets, &pred_positions);
        Schedule {
            keys,
            split_by_key,
            order: order.into_boxed_slice(),
            pred_offsets: pred_offsets.into_boxed_slice(),
            pred_positions: pred_positions.into_boxed_slice(),
            latest_pred: latest_pred.into_boxed_slice(),
            level_starts: level_starts.into_boxed_slice(),
        }
    }

    /// Worker `rank`'s of `size` slice of the height at positions `start..end`, with one
    /// priority level: a narrow height (fewer than `MIN_SLICE` items per worker) is worker 0's
    /// alone; otherwise worker w gets the positions whose keys lie in [w N / P, (w + 1) N / P)
    /// (found by binary search in the height's increasing keys), or the w-th P-th of the
    /// height's positions. Either way the slices of a height cover it without overlap.
    pub(super) fn slice(
        &self,
        start: usize,
        end: usize,
        rank: usize,
        size: usize,
    ) -> (usize, usize) {
        slice(&self.keys, self.split_by_key, start..end, rank, size)
    }

    /// Positions of the predecessors of the item at position `p`.
    #[inline]
    pub(super) fn predecessors(&self, p: usize) -> &[u32] {
        &self.pred_positions[self.pred_offsets[p] as usize..self.pred_offsets[p + 1] as usize]
    }
}

/// `Schedule::slice`, for `keys` of the N positions.
fn slice(
    keys: &[u32],
    by_key: bool,
    height: std::ops::Range<usize>,
    rank: usize,
    size: usize,
) -> (usize, usize) {
    let (start, width) = (height.start, height.len());
    if width < size * MIN_SLICE {
        return if rank == 0 {
            (start, height.end)
        } else {
            (start, start)
        };
    }
    if by_key {
        let n = keys.len();
        let keys = &keys[height];
        let bound = |r: usize| start + keys.partition_point(|&k| (k as usize) < n * r / size);
        (bound(rank), bound(rank + 1))
    } else {
        (
            start + width * rank / size,
            start + width * (rank + 1) / size,
        )
    }
}

/// True when, on `REFERENCE_WORKERS` workers, splitting heights by key ranges makes at most half
/// as many dependences cross between workers as splitting each height evenly. Key ranges follow
/// the graph's subtrees, and only pay off when they do: in a tree such as fib's, almost no
/// dependence crosses, against most of them when heights are split evenly; in a graph whose
/// dependences go anywhere (a random DAG), most cross either way, and key ranges would give
/// the workers unequal shares of each height (a worker's subtrees are taller or shorter than
/// another's), making them wait for each other, so heights are split evenly. O(N + NZ).
fn key_ranges_keep_locality(
    keys: &[u32],
    level_starts: &[u32],
    pred_offsets: &[u32],
    pred_positions: &[u32],
) -> bool {
    if cfg!(loom) {
        // The models' graphs are too small to tell; they check the synchronization, which is
        // the same for both ways of splitting.
        return true;
    }
    let n = keys.len();
    let crossings = |by_key: bool| {
        let mut owner = vec![0u8; n];
        for height in level_starts.windows(2) {
            let height = height[0] as usize..height[1] as usize;
            for rank in 0..REFERENCE_WORKERS {
                let (a, b) = slice(keys, by_key, height.clone(), rank, REFERENCE_WORKERS);
                owner[a..b].fill(rank as u8);
            }
        }
        (0..n)
            .map(|p| {
                let preds = &pred_positions[pred_offsets[p] as usize..pred_offsets[p + 1] as usize];
                preds
                    .iter()
                    .filter(|&&q| owner[q as usize] != owner[p])
                    .count()
            })
            .sum::<usize>()
    };
    2 * crossings(true) <= crossings(false)
}

/// Items by decreasing height, then in the order of `ties` (every item once): a stable
/// counting sort on the height.
fn height_order(height: &[u32], ties: impl IntoIterator<Item = u32>) -> Vec<u32> {
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
    for i in ties {
        let slot = &mut starts[tallest - height[i as usize] as usize];
        order[*slot] = i;
        *slot += 1;
    }
    order
}

/// Each item's tree key: its number in a preorder walk of the spanning forest in which an
/// item's parent is its first successor (the first entry of its row), the roots (items without
/// successors) taken in index order, and children in index order.
///
/// Every item has a key: following first successors from any item ends at a root, since the
/// graph is acyclic. A range of keys is a sequence of whole subtrees plus parts of the subtrees
/// around its two ends, so a worker that runs one range of keys at every height computes its
/// items mostly from its own items' results: in an in-tree such as fib's, only the items on the
/// paths from a range's ends to the root depend on another worker. O(N + NZ).
fn tree_keys(graph: &Crs) -> Vec<u32> {
    let n = graph.num_rows();
    // The forest's children lists, in compressed rows: item p's children are
    // children[starts[p]..starts[p + 1]].
    let parent = |i: usize| graph.row(i).first().map(|&p| p as usize);
    let mut starts = vec![0u32; n + 1];
    for i in 0..n {
        if let Some(p) = parent(i) {
            starts[p + 1] += 1;
        }
    }
    for p in 1..=n {
        starts[p] += starts[p - 1];
    }
    let mut fill = starts.clone();
    let mut children = vec![0u32; starts[n] as usize];
    for i in 0..n {
        if let Some(p) = parent(i) {
            children[fill[p] as usize] = i as u32;
            fill[p] += 1;
        }
    }
    let mut keys = vec![0u32; n];
    let mut next = 0u32;
    // Popped in index order; an item's children are pushed in reverse so that they too come
    // off in index order, each with its whole subtree before the next.
    let mut stack: Vec<u32> = (0..n as u32)
        .rev()
        .filter(|&i| parent(i as usize).is_none())
        .collect();
    while let Some(i) = stack.pop() {
        keys[i as usize] = next;
        next += 1;
        let i = i as usize;
        stack.extend(
            children[starts[i] as usize..starts[i + 1] as usize]
                .iter()
                .rev(),
        );
    }
    debug_assert_eq!(next as usize, n, "every item is in a tree of the forest");
    keys
}

/// A list schedule on one worker that always takes a ready item of the highest level.
fn priority_order(graph: &Crs, shape: &DagShape, levels: &[u8], level_count: usize) -> Vec<u32> {
    let n = graph.num_rows();
    let mut ready: Vec<VecDeque<u32>> = vec![VecDeque::new(); level_count];
    for item in height_order(&shape.height, 0..n as u32) {
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
