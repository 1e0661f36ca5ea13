//! Reduction arguments shared by range and team reductions: built-in operators and scalar types
//! as checked C integers, and the custom reducer struct.

use super::boundary::{enum_arg, read_versioned, Versioned};
use super::error::{CError, CResult};
use crate::parallel::{ReduceOp, ScalarType};
use std::ffi::c_void;

/// A built-in reduction operator, one of TD_REDUCE_*.
pub type td_reduce_op = i32;
/// Sum of the values.
pub const TD_REDUCE_SUM: td_reduce_op = 0;
/// Smallest value (NaN ignored unless every value is NaN).
pub const TD_REDUCE_MIN: td_reduce_op = 1;
/// Largest value (NaN ignored unless every value is NaN).
pub const TD_REDUCE_MAX: td_reduce_op = 2;
/// Product of the values.
pub const TD_REDUCE_PROD: td_reduce_op = 3;

/// The element type of a built-in reduction, one of TD_SCALAR_*.
pub type td_scalar_type = i32;
/// int32_t (wrapping on overflow).
pub const TD_SCALAR_INT32: td_scalar_type = 0;
/// int64_t (wrapping on overflow).
pub const TD_SCALAR_INT64: td_scalar_type = 1;
/// float.
pub const TD_SCALAR_FLOAT: td_scalar_type = 2;
/// double.
pub const TD_SCALAR_DOUBLE: td_scalar_type = 3;

/// A custom reduction: values of `value_size` bytes, an identity and an associative join.
/// Initialize with TD_REDUCER_INIT, then set every field.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_reducer {
    /// sizeof(td_reducer) as the caller was compiled; set by TD_REDUCER_INIT.
    pub struct_size: usize,
    /// Bytes in one value; at most 256 for team reductions.
    pub value_size: usize,
    /// Writes the identity into `value`. Required.
    pub init: Option<unsafe extern "C" fn(value: *mut c_void, user: *mut c_void)>,
    /// Folds `src` into `dst`: dst = dst ⊕ src. Must be associative. Required.
    pub join: Option<unsafe extern "C" fn(dst: *mut c_void, src: *const c_void, user: *mut c_void)>,
    /// Passed to `init` and `join`.
    pub user: *mut c_void,
}

unsafe impl Versioned for td_reducer {
    const NAME: &'static str = "td_reducer";
    const MIN_SIZE: usize = std::mem::size_of::<td_reducer>();
    fn defaults() -> Self {
        td_reducer {
            struct_size: std::mem::size_of::<td_reducer>(),
            value_size: 0,
            init: None,
            join: None,
            user: std::ptr::null_mut(),
        }
    }
}

pub(crate) fn reduce_op_arg(value: td_reduce_op, name: &str) -> CResult<ReduceOp> {
    enum_arg(
        value,
        name,
        &[
            (TD_REDUCE_SUM, ReduceOp::Sum, "TD_REDUCE_SUM"),
            (TD_REDUCE_MIN, ReduceOp::Min, "TD_REDUCE_MIN"),
            (TD_REDUCE_MAX, ReduceOp::Max, "TD_REDUCE_MAX"),
            (TD_REDUCE_PROD, ReduceOp::Prod, "TD_REDUCE_PROD"),
        ],
    )
}

pub(crate) fn scalar_type_arg(value: td_scalar_type, name: &str) -> CResult<ScalarType> {
    enum_arg(
        value,
        name,
        &[
            (TD_SCALAR_INT32, ScalarType::I32, "TD_SCALAR_INT32"),
            (TD_SCALAR_INT64, ScalarType::I64, "TD_SCALAR_INT64"),
            (TD_SCALAR_FLOAT, ScalarType::F32, "TD_SCALAR_FLOAT"),
            (TD_SCALAR_DOUBLE, ScalarType::F64, "TD_SCALAR_DOUBLE"),
        ],
    )
}

/// A reduction as the core takes it: the identity and join of either a built-in operator or a
/// caller's td_reducer.
pub(crate) enum Combine {
    Builtin(ReduceOp, ScalarType),
    Custom(td_reducer),
}

// SAFETY: a custom reducer's `user` pointer is the caller's to make thread-safe; the reduction
// calls it from the space's threads as documented on every entry point that takes one.
unsafe impl Sync for Combine {}

impl Combine {
    pub(crate) fn builtin(op: td_reduce_op, ty: td_scalar_type) -> CResult<Combine> {
        Ok(Combine::Builtin(
            reduce_op_arg(op, "op")?,
            scalar_type_arg(ty, "type")?,
        ))
    }

    pub(crate) unsafe fn custom(reducer: *const td_reducer) -> CResult<Combine> {
        let r: td_reducer = read_versioned(reducer, "reducer", false)?;
        if r.init.is_none() || r.join.is_none() {
            return Err(CError::invalid(
                "`reducer->init` and `reducer->join` are both required".to_string(),
            ));
        }
        if r.value_size == 0 {
            return Err(CError::invalid(
                "`reducer->value_size` is 0; set it to the size of one value".to_string(),
            ));
        }
        Ok(Combine::Custom(r))
    }

    pub(crate) fn value_size(&self) -> usize {
        match self {
            Combine::Builtin(_, t) => t.size(),
            Combine::Custom(r) => r.value_size,
        }
    }

    pub(crate) fn init(&self, value: &mut [u8]) {
        match self {
            Combine::Builtin(op, t) => t.identity(*op, value),
            Combine::Custom(r) => {
                // SAFETY: `init` was checked non-null; value has value_size bytes.
                unsafe { (r.init.unwrap_unchecked())(value.as_mut_ptr().cast(), r.user) }
            }
        }
    }

    pub(crate) fn join(&self, dst: &mut [u8], src: &[u8]) {
        match self {
            Combine::Builtin(op, t) => t.join(*op, dst, src),
            Combine::Custom(r) => unsafe {
                // SAFETY: as in `init`.
                (r.join.unwrap_unchecked())(dst.as_mut_ptr().cast(), src.as_ptr().cast(), r.user)
            },
        }
    }
}
