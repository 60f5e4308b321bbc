//! What a session needs only once it runs a turn: the sandbox and the model. A session starts
//! from the history and the audit log alone, so deciding, changing the policy or revoking a
//! rule never waits for Docker or a model server, and never fails because one is down.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ironclaw_llm::{ContextWindow, Provider, ToolMode};
use ironclaw_sandbox::Sandbox;

/// The sandbox and the model a session's turns use.
#[derive(Clone)]
pub struct Runtime {
    pub sandbox: Arc<Sandbox>,
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// How much the model reads at once; the transcript is fitted to it before every request.
    pub context_window: ContextWindow,
    /// How the model asks to run code (tool calls or fenced code blocks).
    pub tool_mode: ToolMode,
}

/// What [`ResolveRuntime::resolve`] returns.
pub type Resolving<'a> = Pin<Box<dyn Future<Output = Result<Runtime, String>> + Send + 'a>>;

/// Finds the [`Runtime`] on a session's first turn. An error is the reason, for the person
/// ("Docker is not running…"); the next turn asks again.
pub trait ResolveRuntime: Send + Sync {
    fn resolve(&self) -> Resolving<'_>;
}

/// A runtime the front end already has (the CLI, the tests).
impl ResolveRuntime for Runtime {
    fn resolve(&self) -> Resolving<'_> {
        let runtime = self.clone();
        Box::pin(async move { Ok(runtime) })
    }
}
