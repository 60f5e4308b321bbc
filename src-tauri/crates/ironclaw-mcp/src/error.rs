use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{file}: {message}. See the example in docs/user-guide.md#mcp-tools-in-sandboxes")]
    Config { file: PathBuf, message: String },
    #[error("could not read {file}: {source}")]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("MCP server {server}: its container could not start: {source}")]
    Sandbox {
        server: String,
        #[source]
        source: ironclaw_sandbox::Error,
    },
    #[error("MCP server {server} is not reached: {source}")]
    Remote {
        server: String,
        #[source]
        source: ironclaw_sandbox::Error,
    },
    #[error("MCP server {server} did not complete the MCP handshake: {reason}{stderr}")]
    Handshake {
        server: String,
        reason: String,
        stderr: String,
    },
    #[error("MCP server {server} did not list its tools: {reason}")]
    ListTools { server: String, reason: String },
    #[error("MCP server {server} has no tool {tool}")]
    UnknownTool { server: String, tool: String },
    #[error("the call of {server}/{tool} failed: {reason}{stderr}")]
    Call {
        server: String,
        tool: String,
        reason: String,
        stderr: String,
    },
    #[error("the call of {server}/{tool} took longer than {seconds} s and was given up")]
    Timeout {
        server: String,
        tool: String,
        seconds: u64,
    },
    #[error("the approved call cannot be read: {0}")]
    BadCall(String),
}
