//! How a step of a turn can end early. Its own module so the turn and the runs it drives
//! depend on it, and not on each other.

/// Why a step stopped the turn.
#[derive(Debug)]
pub(super) enum StepError {
    Cancelled,
    Failed(String),
    /// The provider said the request was longer than the model's context window; the turn
    /// compacts harder and asks once more before it fails.
    ContextTooLong(String),
    /// The code ran, but recording what happened failed: the turn stops, and the model still
    /// gets the real result (so it never asks to run the same thing again as if it had not).
    AfterRun {
        content: String,
        is_error: bool,
        message: String,
    },
}
