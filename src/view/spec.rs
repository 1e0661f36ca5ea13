//! What a new view looks like: label, element type, extents, layout, memory space and options.

use super::element::ElementType;
use super::layout::Layout;
use super::mapping::Mapping;
use crate::error::Result;
use crate::memory_space::MemorySpace;

/// The description of a view to allocate (`View::allocate`) or wrap (`View::wrap`).
///
/// `ViewSpec::new` gives a zero-initialized, unpadded LayoutRight array in host memory; the
/// builder methods change that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewSpec {
    /// Names the view in every error message about it (004); need not be unique.
    pub label: String,
    pub element: ElementType,
    /// One extent per dimension (rank 0 to 8), each at least 1.
    pub extents: Vec<usize>,
    pub layout: Layout,
    /// Strides in elements, one per dimension; used by `Layout::Stride` only.
    pub strides: Vec<usize>,
    pub space: MemorySpace,
    /// Zero-fill new memory (the default); off leaves it uninitialized. Ignored by `wrap`.
    pub initialize: bool,
    /// Pad the stride-one extent of LayoutRight/LayoutLeft to whole cache lines (layout.rs).
    pub pad: bool,
}

impl ViewSpec {
    pub fn new(label: &str, element: ElementType, extents: &[usize]) -> ViewSpec {
        ViewSpec {
            label: label.to_owned(),
            element,
            extents: extents.to_vec(),
            layout: Layout::Right,
            strides: Vec::new(),
            space: MemorySpace::Host,
            initialize: true,
            pad: false,
        }
    }

    pub fn layout(mut self, layout: Layout) -> ViewSpec {
        self.layout = layout;
        self
    }

    /// LayoutStride with these strides (in elements).
    pub fn strides(mut self, strides: &[usize]) -> ViewSpec {
        self.layout = Layout::Stride;
        self.strides = strides.to_vec();
        self
    }

    pub fn space(mut self, space: MemorySpace) -> ViewSpec {
        self.space = space;
        self
    }

    /// Leave new memory uninitialized (004's `WithoutInitializing`).
    pub fn without_initializing(mut self) -> ViewSpec {
        self.initialize = false;
        self
    }

    /// Pad the stride-one dimension to whole cache lines.
    pub fn padded(mut self) -> ViewSpec {
        self.pad = true;
        self
    }

    /// The index mapping this spec describes, or the error that allocating it would report.
    pub fn mapping(&self) -> Result<Mapping> {
        Mapping::new(
            &self.label,
            self.element,
            self.layout,
            &self.extents,
            &self.strides,
            self.pad,
        )
    }
}
