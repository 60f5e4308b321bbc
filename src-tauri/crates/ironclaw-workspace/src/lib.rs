//! The host side of a sandbox's workspace: the folder the sandboxed code writes and the person
//! opens. Everything here treats its contents as hostile: the code may plant symlinks, FIFOs
//! and devices, and change any name between two system calls.
//!
//! - [`reader`]: the one way IronClaw opens a path the sandbox can write to (descriptors only,
//!   no link ever followed).
//! - [`attach`]: files a person brings in, copied without writing through anything planted.
//! - [`checkpoint`]: what each run changed, and undoing it: a record kept outside anything the
//!   sandbox can reach, of copies no sandboxed write can alter.

pub mod attach;
pub mod checkpoint;
pub mod copy;
mod descriptors;
pub mod reader;
pub mod sparse;

pub use descriptors::raise_descriptor_limit;
