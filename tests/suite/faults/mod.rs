//! Fault injection against the real product: the Docker daemon killed and restarted, the
//! container killed, the image deleted, the model service answering garbage, the disk under the
//! history filling up, and the CLI killed with `kill -9` at each stage of a turn. Each test
//! names the fault, the clear message expected, and checks that nothing committed is lost.

mod container;
pub(crate) mod disk_full;
mod disk_full_cli;
mod docker;
mod engine;
mod kill9;
mod llm;
mod paused;
