//! The machinery every `extern "C"` function is built from, written once (DESIGN.md §3): the panic
//! boundary, NULL checks, out-pointers, versioned parameter structs and enum conversion.

use super::error::{set_last_error, CError, CResult};
use super::status::td_status;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of entry point `function`: a failure or a panic becomes a status and the
/// thread's last error; nothing unwinds into C.
#[inline]
pub(crate) fn call(function: &'static str, body: impl FnOnce() -> CResult<()>) -> td_status {
    call_or(function, || body().map(|()| td_status::TD_OK)).unwrap_or_else(|status| status)
}

/// Like `call`, for entry points that return a value: `Ok(value)` or, on failure, `Err(status)`
/// so the caller can pick its neutral return (NULL, 0).
#[inline]
pub(crate) fn call_or<T>(
    function: &'static str,
    body: impl FnOnce() -> CResult<T>,
) -> Result<T, td_status> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(report_error(function, e)),
        Err(payload) => Err(report_panic(function, payload)),
    }
}

/// Records a failure as the thread's last error and returns its status. Out of line and taking
/// the error by value (its drop included), so that an entry point's common path keeps no
/// register for the error path (callgrind, F(22): td_task_respawn_when_all_private
/// 80.0 -> 79.5 instructions per node).
#[cold]
#[inline(never)]
fn report_error(function: &'static str, e: CError) -> td_status {
    set_last_error(function, e.status, &e.message);
    e.status
}

#[cold]
fn report_panic(function: &'static str, payload: Box<dyn Any + Send>) -> td_status {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    set_last_error(
        function,
        td_status::TD_ERROR_INTERNAL,
        &format!("internal error, please report it: {what}"),
    );
    td_status::TD_ERROR_INTERNAL
}

/// A required out-pointer; written only on success.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    #[inline]
    pub fn new(ptr: *mut T, name: &str) -> CResult<Self> {
        if ptr.is_null() {
            Err(null_argument(name))
        } else {
            Ok(Out(ptr))
        }
    }

    /// # Safety
    /// The pointer given to `new` must be valid for a write of `T`.
    #[inline]
    pub unsafe fn write(self, value: T) {
        self.0.write(value)
    }
}

#[cold]
pub(crate) fn null_argument(name: &str) -> CError {
    CError::new(
        td_status::TD_ERROR_NULL_ARGUMENT,
        format!("argument `{name}` is NULL; a valid pointer is required"),
    )
}

/// A parameter struct whose first field is `size_t struct_size`, so it can grow without breaking
/// the ABI (DESIGN.md §3).
///
/// # Safety
/// The implementor must be `#[repr(C)]`, start with a `usize` field, and be valid for any bytes a
/// caller may write into its first `MIN_SIZE` bytes followed by defaults.
pub(crate) unsafe trait Versioned: Copy {
    /// The C name, for messages.
    const NAME: &'static str;
    /// `struct_size` of the first released version.
    const MIN_SIZE: usize;
    fn defaults() -> Self;
}

/// Reads a versioned parameter struct: fields the caller's (older) version lacks keep defaults; a
/// NULL pointer gives the defaults when `optional`.
///
/// # Safety
/// A non-NULL `ptr` must point to at least `struct_size` readable bytes.
pub(crate) unsafe fn read_versioned<T: Versioned>(
    ptr: *const T,
    name: &str,
    optional: bool,
) -> CResult<T> {
    if ptr.is_null() {
        return if optional {
            Ok(T::defaults())
        } else {
            Err(null_argument(name))
        };
    }
    let size = (ptr as *const usize).read_unaligned();
    let max = std::mem::size_of::<T>();
    if size < T::MIN_SIZE || size > max {
        return Err(CError::new(
            td_status::TD_ERROR_STRUCT_SIZE,
            format!(
                "`{name}->struct_size` is {size}, but this taskdag accepts {min}..={max} for {}; \
                 initialize the struct with {}_INIT (and rebuild against the installed \
                 taskdag.h if the value is larger)",
                T::NAME,
                T::NAME.to_uppercase(),
                min = T::MIN_SIZE,
            ),
        ));
    }
    let mut value = T::defaults();
    std::ptr::copy_nonoverlapping(ptr as *const u8, &mut value as *mut T as *mut u8, size);
    Ok(value)
}

/// Converts a C integer to a Rust enum, naming the argument and the accepted values on failure.
pub(crate) fn enum_arg<E: Copy>(value: i32, name: &str, table: &[(i32, E, &str)]) -> CResult<E> {
    table
        .iter()
        .find(|(v, _, _)| *v == value)
        .map(|(_, e, _)| *e)
        .ok_or_else(|| {
            let accepted: Vec<String> =
                table.iter().map(|(v, _, n)| format!("{n} ({v})")).collect();
            CError::invalid(format!(
                "argument `{name}` is {value}, which is not one of {}",
                accepted.join(", ")
            ))
        })
}

/// A caller's `user` pointer handed to its callbacks on the threads of a dispatch, a run or a
/// partition. The callbacks' documented contract makes sharing it the caller's responsibility;
/// taskdag never dereferences it.
#[derive(Clone, Copy)]
pub(crate) struct UserPtr(pub(crate) *mut std::ffi::c_void);

// SAFETY: see the type's comment: the pointer is only passed back to the caller's callbacks.
unsafe impl Sync for UserPtr {}
// SAFETY: as above.
unsafe impl Send for UserPtr {}
