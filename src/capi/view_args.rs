//! The C types that describe views: element types, layouts, flags, creation arguments and
//! subview slices, with their conversions to the core's types.

use super::boundary::{enum_arg, Versioned};
use super::error::{CError, CResult};
use super::memory_space::{memory_space_arg, td_memory_space, TD_SPACE_HOST};
use crate::view::{ElementType, Layout, Mapping, Slice, ViewSpec, MAX_RANK};
use std::ffi::{c_char, c_int, CStr};

/// The value type of a view's elements, one of the TD_ELEMENT_* values.
pub type td_element_type = i32;

/// int8_t.
pub const TD_ELEMENT_INT8: td_element_type = 1;
/// int16_t.
pub const TD_ELEMENT_INT16: td_element_type = 2;
/// int32_t.
pub const TD_ELEMENT_INT32: td_element_type = 3;
/// int64_t.
pub const TD_ELEMENT_INT64: td_element_type = 4;
/// uint8_t.
pub const TD_ELEMENT_UINT8: td_element_type = 5;
/// uint16_t.
pub const TD_ELEMENT_UINT16: td_element_type = 6;
/// uint32_t.
pub const TD_ELEMENT_UINT32: td_element_type = 7;
/// uint64_t.
pub const TD_ELEMENT_UINT64: td_element_type = 8;
/// float.
pub const TD_ELEMENT_FLOAT: td_element_type = 9;
/// double.
pub const TD_ELEMENT_DOUBLE: td_element_type = 10;
/// float _Complex / std::complex<float>: two floats.
pub const TD_ELEMENT_COMPLEX_FLOAT: td_element_type = 11;
/// double _Complex / std::complex<double>: two doubles.
pub const TD_ELEMENT_COMPLEX_DOUBLE: td_element_type = 12;
/// Plain bytes of `element_size` each: a user struct that a byte copy moves correctly.
pub const TD_ELEMENT_OPAQUE: td_element_type = 13;

/// How indices map to memory, one of the TD_LAYOUT_* values.
pub type td_layout = i32;

/// Right-most index stride-one (C order, row-major); the default.
pub const TD_LAYOUT_RIGHT: td_layout = 0;
/// Left-most index stride-one (Fortran order, column-major).
pub const TD_LAYOUT_LEFT: td_layout = 1;
/// Explicit strides (in elements), one per dimension.
pub const TD_LAYOUT_STRIDE: td_layout = 2;

/// td_view_args.flags: leave new memory uninitialized (default: zero-filled).
pub const TD_VIEW_NO_INIT: u32 = 1;
/// td_view_args.flags: pad the stride-one extent of TD_LAYOUT_RIGHT/LEFT so that each row
/// (column) starts on a 64-byte cache line, for elements that tile a cache line and rows longer
/// than four cache lines. The strides then show the padding (td_view_stride).
pub const TD_VIEW_PAD: u32 = 2;

const KNOWN_FLAGS: u32 = TD_VIEW_NO_INIT | TD_VIEW_PAD;

/// Arguments of td_view_create and td_view_wrap. Initialize with TD_VIEW_ARGS_INIT, then set
/// `element_type`, `rank`, `extents` and `label`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_view_args {
    /// sizeof(td_view_args) as the caller was compiled; set by TD_VIEW_ARGS_INIT.
    pub struct_size: usize,
    /// One of TD_ELEMENT_*. Required.
    pub element_type: td_element_type,
    /// Bytes per element for TD_ELEMENT_OPAQUE (at least 1); ignored for the other types.
    pub element_size: usize,
    /// Number of dimensions, 0..8 (0: a single element).
    pub rank: c_int,
    /// Extent of each dimension 0..rank-1, each at least 1; later entries are ignored.
    pub extents: [usize; MAX_RANK],
    /// One of TD_LAYOUT_*; TD_LAYOUT_RIGHT by default.
    pub layout: td_layout,
    /// Strides in elements of dimensions 0..rank-1 for TD_LAYOUT_STRIDE (ignored otherwise).
    /// They must not alias: ordered by stride, each stride must exceed the largest offset the
    /// smaller-stride dimensions reach.
    pub strides: [usize; MAX_RANK],
    /// Names the view in error messages (copied; need not be unique). NULL: "".
    pub label: *const c_char,
    /// Where the elements live: TD_SPACE_HOST (default), TD_SPACE_CUDA (device memory) or
    /// TD_SPACE_CUDA_HOST_PINNED (page-locked host memory).
    pub memory_space: td_memory_space,
    /// TD_VIEW_NO_INIT, TD_VIEW_PAD, or'ed; 0 by default.
    pub flags: u32,
}

unsafe impl Versioned for td_view_args {
    const NAME: &'static str = "td_view_args";
    const MIN_SIZE: usize = std::mem::size_of::<td_view_args>();
    fn defaults() -> Self {
        td_view_args {
            struct_size: std::mem::size_of::<td_view_args>(),
            element_type: 0,
            element_size: 0,
            rank: 0,
            extents: [0; MAX_RANK],
            layout: TD_LAYOUT_RIGHT,
            strides: [0; MAX_RANK],
            label: std::ptr::null(),
            memory_space: TD_SPACE_HOST,
            flags: 0,
        }
    }
}

/// What td_slice.kind selects, one of the TD_SLICE_* values.
pub type td_slice_kind = i32;

/// The whole dimension.
pub const TD_SLICE_ALL: td_slice_kind = 0;
/// One index (`begin`); the dimension disappears from the subview.
pub const TD_SLICE_INDEX: td_slice_kind = 1;
/// The half-open range [`begin`, `end`), not empty; the subview's indices start at 0.
pub const TD_SLICE_RANGE: td_slice_kind = 2;

/// What td_view_subview keeps of one dimension. Write them with TD_ALL, TD_INDEX(i) and
/// TD_RANGE(b, e).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_slice {
    /// TD_SLICE_ALL, TD_SLICE_INDEX or TD_SLICE_RANGE.
    pub kind: td_slice_kind,
    /// The index (TD_SLICE_INDEX) or the first index of the range (TD_SLICE_RANGE).
    pub begin: i64,
    /// One past the last index of the range (TD_SLICE_RANGE); ignored otherwise.
    pub end: i64,
}

const ELEMENT_TYPES: &[(i32, Option<ElementType>, &str)] = &[
    (TD_ELEMENT_INT8, Some(ElementType::I8), "TD_ELEMENT_INT8"),
    (TD_ELEMENT_INT16, Some(ElementType::I16), "TD_ELEMENT_INT16"),
    (TD_ELEMENT_INT32, Some(ElementType::I32), "TD_ELEMENT_INT32"),
    (TD_ELEMENT_INT64, Some(ElementType::I64), "TD_ELEMENT_INT64"),
    (TD_ELEMENT_UINT8, Some(ElementType::U8), "TD_ELEMENT_UINT8"),
    (
        TD_ELEMENT_UINT16,
        Some(ElementType::U16),
        "TD_ELEMENT_UINT16",
    ),
    (
        TD_ELEMENT_UINT32,
        Some(ElementType::U32),
        "TD_ELEMENT_UINT32",
    ),
    (
        TD_ELEMENT_UINT64,
        Some(ElementType::U64),
        "TD_ELEMENT_UINT64",
    ),
    (TD_ELEMENT_FLOAT, Some(ElementType::F32), "TD_ELEMENT_FLOAT"),
    (
        TD_ELEMENT_DOUBLE,
        Some(ElementType::F64),
        "TD_ELEMENT_DOUBLE",
    ),
    (
        TD_ELEMENT_COMPLEX_FLOAT,
        Some(ElementType::ComplexF32),
        "TD_ELEMENT_COMPLEX_FLOAT",
    ),
    (
        TD_ELEMENT_COMPLEX_DOUBLE,
        Some(ElementType::ComplexF64),
        "TD_ELEMENT_COMPLEX_DOUBLE",
    ),
    (TD_ELEMENT_OPAQUE, None, "TD_ELEMENT_OPAQUE"),
];

/// The C value of an element type.
pub(crate) fn element_type_code(element: ElementType) -> td_element_type {
    match element {
        ElementType::Opaque(_) => TD_ELEMENT_OPAQUE,
        e => ELEMENT_TYPES
            .iter()
            .find(|(_, t, _)| *t == Some(e))
            .map_or(TD_ELEMENT_OPAQUE, |(code, _, _)| *code),
    }
}

pub(crate) fn layout_code(layout: Layout) -> td_layout {
    match layout {
        Layout::Right => TD_LAYOUT_RIGHT,
        Layout::Left => TD_LAYOUT_LEFT,
        Layout::Stride => TD_LAYOUT_STRIDE,
    }
}

impl td_view_args {
    /// The core's description of the view, with every field checked.
    ///
    /// # Safety
    /// `label` is NULL or a NUL-terminated string.
    pub(crate) unsafe fn to_spec(self) -> CResult<ViewSpec> {
        let label = if self.label.is_null() {
            String::new()
        } else {
            CStr::from_ptr(self.label).to_string_lossy().into_owned()
        };
        let element = match enum_arg(self.element_type, "args->element_type", ELEMENT_TYPES)? {
            Some(element) => element,
            None => ElementType::opaque(self.element_size).map_err(|_| {
                CError::invalid(format!(
                    "view \"{label}\": `args->element_size` is 0; TD_ELEMENT_OPAQUE needs the \
                     size of one element in bytes (sizeof your struct)"
                ))
            })?,
        };
        let rank = usize::try_from(self.rank).map_err(|_| {
            CError::invalid(format!(
                "view \"{label}\": `args->rank` is {}; it must be 0..={MAX_RANK}",
                self.rank
            ))
        })?;
        Mapping::check_rank(&label, rank)?;
        let layout = enum_arg(
            self.layout,
            "args->layout",
            &[
                (TD_LAYOUT_RIGHT, Layout::Right, "TD_LAYOUT_RIGHT"),
                (TD_LAYOUT_LEFT, Layout::Left, "TD_LAYOUT_LEFT"),
                (TD_LAYOUT_STRIDE, Layout::Stride, "TD_LAYOUT_STRIDE"),
            ],
        )?;
        if self.flags & !KNOWN_FLAGS != 0 {
            return Err(CError::invalid(format!(
                "view \"{label}\": `args->flags` is {:#x}, with bits other than TD_VIEW_NO_INIT \
                 ({TD_VIEW_NO_INIT:#x}) and TD_VIEW_PAD ({TD_VIEW_PAD:#x})",
                self.flags
            )));
        }
        let mut spec = ViewSpec::new(&label, element, &self.extents[..rank])
            .layout(layout)
            .space(memory_space_arg(self.memory_space, "args->memory_space")?);
        if layout == Layout::Stride {
            spec.strides = self.strides[..rank].to_vec();
        }
        spec.initialize = self.flags & TD_VIEW_NO_INIT == 0;
        spec.pad = self.flags & TD_VIEW_PAD != 0;
        Ok(spec)
    }
}

impl td_slice {
    /// The core's slice; `position` names it in messages.
    pub(crate) fn to_slice(self, position: usize) -> CResult<Slice> {
        #[derive(Clone, Copy)]
        enum Kind {
            All,
            Index,
            Range,
        }
        let kind = enum_arg(
            self.kind,
            &format!("slices[{position}].kind"),
            &[
                (TD_SLICE_ALL, Kind::All, "TD_SLICE_ALL"),
                (TD_SLICE_INDEX, Kind::Index, "TD_SLICE_INDEX"),
                (TD_SLICE_RANGE, Kind::Range, "TD_SLICE_RANGE"),
            ],
        )?;
        Ok(match kind {
            Kind::All => Slice::All,
            Kind::Index => Slice::Index(self.begin),
            Kind::Range => Slice::Range(self.begin, self.end),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_type_codes_round_trip() {
        for &(code, element, _) in ELEMENT_TYPES {
            let element = element.unwrap_or(ElementType::Opaque(5));
            assert_eq!(element_type_code(element), code);
        }
    }
}
