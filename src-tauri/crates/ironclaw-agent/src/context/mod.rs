//! Keeping a conversation inside the model's context window.
//!
//! Before every request the transcript is fitted to the window ([`fit`]): the system prompt,
//! the tool definitions and the latest user message always go; when the whole does not fit,
//! old tool outputs are cut to their head and tail first, and if that is not enough the
//! earlier turns are replaced by a summary the model writes itself ([`compact`]), kept in the
//! history and marked as such. Token counts are exact for OpenAI's models near the window
//! ([`tokenizer`]) and otherwise a stated estimate ([`estimate`]), corrected by what the
//! provider reports it counted.

pub mod compact;
pub mod estimate;
pub mod fit;
pub mod tokenizer;

pub use compact::Compaction;
pub use estimate::Estimator;
pub use fit::{fit, Fitted};
