//! Behaviour of whole views: index formulas against hand-computed offsets, deep_copy between
//! layouts, subviews, resize, lifetimes, and every rejected input with its message.

mod bad_input;
mod copy;
#[cfg(feature = "cuda")]
mod device;
mod layout_offsets;
mod lifetime;
mod resize;
mod subview;

use super::*;

/// Every multi-index of `extents`, the last index fastest (one empty index for rank 0).
fn indices(extents: &[usize]) -> Vec<Vec<usize>> {
    let mut all = vec![vec![]];
    for &e in extents {
        all = all
            .into_iter()
            .flat_map(|prefix| {
                (0..e).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect();
    }
    all
}

fn as_i64(index: &[usize]) -> Vec<i64> {
    index.iter().map(|&i| i as i64).collect()
}

/// Reads the u64 element of `view` at `index` (checked).
fn get(view: &View, index: &[usize]) -> u64 {
    let ptr = view.element_ptr(&as_i64(index)).unwrap();
    // SAFETY: a checked element address of a live u64 view; tests access views from one thread.
    unsafe { ptr.cast::<u64>().as_ptr().read_unaligned() }
}

/// Writes the u64 element of `view` at `index` (checked).
fn set(view: &View, index: &[usize], value: u64) {
    let ptr = view.element_ptr(&as_i64(index)).unwrap();
    // SAFETY: as in `get`.
    unsafe { ptr.cast::<u64>().as_ptr().write_unaligned(value) }
}

/// A value that identifies `index` (FNV-1a over the indices; never the zero of fresh memory for
/// the shapes used here).
fn tag(index: &[usize]) -> u64 {
    index.iter().fold(0xcbf2_9ce4_8422_2325, |acc: u64, &i| {
        (acc ^ (i as u64 + 1)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Writes `tag(index)` to every element.
fn fill_with_tags(view: &View) {
    for index in indices(view.extents()) {
        set(view, &index, tag(&index));
    }
}

fn u64_view(label: &str, extents: &[usize], layout: Layout) -> View {
    View::allocate(&ViewSpec::new(label, ElementType::U64, extents).layout(layout)).unwrap()
}

/// xorshift64*: deterministic shapes, so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
}
