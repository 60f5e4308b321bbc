//! One module per area. Every test makes its own `TestEnv` (own data dir, own instance id), so
//! tests never share containers and can run in parallel.

pub mod agent;
mod bad_input;
mod cli;
mod config;
mod confinement;
mod desktop;
mod engine_cache;
pub mod escape;
mod faults;
mod history;
mod host_user;
mod isolation;
mod limits;
mod masks;
mod network;
mod output;
mod output_channel;
mod per_uid;
mod processes;
mod quota;
mod recovery;
mod run_integrity;
mod security_doc;
mod sessions;
mod setuid;
mod sockets;
mod spare;
mod state;
mod undo;
