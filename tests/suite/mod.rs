//! One module per area. Every test makes its own `TestEnv` (own data dir, own instance id), so
//! tests never share containers and can run in parallel.

pub mod agent;
mod cli;
mod config;
mod desktop;
pub mod escape;
mod host_user;
mod isolation;
mod limits;
mod network;
mod output;
mod processes;
mod recovery;
mod sessions;
mod state;
