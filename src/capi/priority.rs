//! Priority arguments of tasks and work items: a C integer checked against the three levels.

use super::boundary::enum_arg;
use super::error::CResult;
use crate::priority::Priority;

/// A scheduling priority, one of TD_PRIORITY_*.
pub type td_priority = i32;

/// Runs before Regular and Low work that is ready at the same time.
pub const TD_PRIORITY_HIGH: td_priority = 0;
/// The default priority.
pub const TD_PRIORITY_REGULAR: td_priority = 1;
/// Runs only when no High or Regular work is ready.
pub const TD_PRIORITY_LOW: td_priority = 2;

#[inline]
pub(crate) fn priority_arg(value: td_priority, name: &str) -> CResult<Priority> {
    // The values are the priorities' discriminants (a range test and no table load); the table
    // below only builds the message.
    match value {
        TD_PRIORITY_HIGH => return Ok(Priority::High),
        TD_PRIORITY_REGULAR => return Ok(Priority::Regular),
        TD_PRIORITY_LOW => return Ok(Priority::Low),
        _ => {}
    }
    enum_arg(
        value,
        name,
        &[
            (TD_PRIORITY_HIGH, Priority::High, "TD_PRIORITY_HIGH"),
            (
                TD_PRIORITY_REGULAR,
                Priority::Regular,
                "TD_PRIORITY_REGULAR",
            ),
            (TD_PRIORITY_LOW, Priority::Low, "TD_PRIORITY_LOW"),
        ],
    )
}
