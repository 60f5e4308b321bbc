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
    /// Whether the model reads images; a text-only one is sent a note in place of each.
    pub images: bool,
    /// The MCP servers each conversation starts (in sandbox containers) on its first turn.
    pub mcp: Arc<ironclaw_mcp::McpConfig>,
}

/// The model half of a [`Runtime`]: what a switch of model replaces.
#[derive(Clone)]
pub struct ModelRuntime {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub context_window: ContextWindow,
    pub tool_mode: ToolMode,
    pub images: bool,
}

impl Runtime {
    /// A runtime of `sandbox` and the model `m`.
    pub fn new(sandbox: Arc<Sandbox>, m: ModelRuntime) -> Self {
        Runtime {
            sandbox,
            provider: m.provider,
            model: m.model,
            context_window: m.context_window,
            tool_mode: m.tool_mode,
            images: m.images,
            mcp: Arc::default(),
        }
    }

    /// This runtime with the MCP servers of `config`.
    pub fn with_mcp(mut self, config: Arc<ironclaw_mcp::McpConfig>) -> Self {
        self.mcp = config;
        self
    }

    /// This runtime with another model (the sandbox stays).
    pub fn with_model(mut self, m: ModelRuntime) -> Self {
        self.provider = m.provider;
        self.model = m.model;
        self.context_window = m.context_window;
        self.tool_mode = m.tool_mode;
        self.images = m.images;
        self
    }
}

/// What [`ResolveRuntime::resolve`] returns.
pub type Resolving<'a> = Pin<Box<dyn Future<Output = Result<Runtime, String>> + Send + 'a>>;
/// What [`ResolveRuntime::resolve_model`] returns.
pub type ResolvingModel<'a> =
    Pin<Box<dyn Future<Output = Result<ModelRuntime, String>> + Send + 'a>>;

/// Finds the [`Runtime`] on a session's first turn. An error is the reason, for the person
/// ("Docker is not running…"); the next turn asks again.
pub trait ResolveRuntime: Send + Sync {
    fn resolve(&self) -> Resolving<'_>;

    /// Another configured model, for `Op::UseModel` (`provider` as the front end lists it).
    /// Never needs Docker: switching models works while the sandbox is down.
    fn resolve_model<'a>(&'a self, provider: &'a str, model: &'a str) -> ResolvingModel<'a> {
        let _ = (provider, model);
        Box::pin(async {
            Err(
                "this front end offers one model; set another in provider.yaml and start again"
                    .to_owned(),
            )
        })
    }
}

/// A runtime the front end already has (the CLI, the tests).
impl ResolveRuntime for Runtime {
    fn resolve(&self) -> Resolving<'_> {
        let runtime = self.clone();
        Box::pin(async move { Ok(runtime) })
    }
}
