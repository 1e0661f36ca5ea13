//! The value type of a view's elements. Views hold plain-old-data values that a byte copy moves
//! correctly (004, "View to multidimensional array of value type"), so the runtime needs only
//! each element's size; the type itself is kept to reject copies between different value types
//! and to tell C++ and Fortran callers what a view holds.

use crate::error::{Error, Result};
use std::fmt;

/// What one element of a view is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    /// Two `f32`: real and imaginary part (C `float _Complex`, C++ `std::complex<float>`).
    ComplexF32,
    /// Two `f64` (C `double _Complex`, C++ `std::complex<double>`).
    ComplexF64,
    /// A caller's struct of this many bytes, copied as bytes (004, "aggregate value types").
    Opaque(usize),
}

impl ElementType {
    /// An opaque element of `size` bytes; `size` must be at least 1.
    pub fn opaque(size: usize) -> Result<ElementType> {
        if size == 0 {
            return Err(Error::invalid_argument(
                "an opaque element type needs a size of at least 1 byte (sizeof your struct)",
            ));
        }
        Ok(ElementType::Opaque(size))
    }

    /// Bytes in one element.
    pub fn size(self) -> usize {
        match self {
            ElementType::I8 | ElementType::U8 => 1,
            ElementType::I16 | ElementType::U16 => 2,
            ElementType::I32 | ElementType::U32 | ElementType::F32 => 4,
            ElementType::I64 | ElementType::U64 | ElementType::F64 | ElementType::ComplexF32 => 8,
            ElementType::ComplexF64 => 16,
            ElementType::Opaque(size) => size,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementType::I8 => f.write_str("int8"),
            ElementType::I16 => f.write_str("int16"),
            ElementType::I32 => f.write_str("int32"),
            ElementType::I64 => f.write_str("int64"),
            ElementType::U8 => f.write_str("uint8"),
            ElementType::U16 => f.write_str("uint16"),
            ElementType::U32 => f.write_str("uint32"),
            ElementType::U64 => f.write_str("uint64"),
            ElementType::F32 => f.write_str("float"),
            ElementType::F64 => f.write_str("double"),
            ElementType::ComplexF32 => f.write_str("complex float"),
            ElementType::ComplexF64 => f.write_str("complex double"),
            ElementType::Opaque(size) => write!(f, "opaque {size}-byte"),
        }
    }
}
