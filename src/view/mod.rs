//! Views: labelled, reference-counted multidimensional arrays (004, "Views to Arrays" and
//! "Advanced Features").
//!
//! A `View` is a light reference to an allocation: element type, rank 0..8, extents, a layout
//! (LayoutRight, LayoutLeft with optional cache-line padding of the stride-one dimension, or
//! explicit strides), a label for error messages and a memory space. Clones and subviews share
//! the allocation; the last one frees it. Unmanaged views wrap caller memory. deep_copy copies
//! between any two layouts of one shape (permuting in cache-sized tiles on the host threads),
//! fill writes one value everywhere, create_mirror/create_mirror_view give host copies, and
//! resize/realloc reassign a view to a new allocation.
//!
//! Files: `element` (value types), `layout` (layouts, padding), `mapping` (index to offset,
//! shape validation), `spec` (what to allocate), `allocation` (the shared allocation record and
//! the per-space allocator), `view` (the view), `subview`, `copy` (deep_copy, fill, mirrors),
//! `device` (deep_copy and fill of device views, on the GPU), `plan` (how a copy walks the
//! arrays), `kernel` (tile loops), `stream` (prefetching and
//! non-temporal stores for large transposes), `parallel` (host threads),
//! `resize`, `errors` (messages), `tests` (behaviour of whole views).

mod allocation;
mod copy;
#[cfg(feature = "cuda")]
mod device;
mod element;
mod errors;
mod kernel;
mod layout;
mod mapping;
mod parallel;
mod plan;
mod resize;
mod spec;
mod stream;
mod subview;
#[allow(clippy::module_inception)]
mod view;

#[cfg(test)]
mod tests;

pub use copy::{deep_copy, fill};
pub use element::ElementType;
pub use layout::{Layout, PAD_ALIGNMENT_BYTES};
pub use mapping::{Mapping, MAX_RANK};
pub use spec::ViewSpec;
pub use subview::Slice;
pub use view::View;
