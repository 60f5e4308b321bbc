//! IronClaw's desktop app core, with no Tauri, GTK or WebKit dependency: everything the app
//! does that can be tested without a window lives here, and each Tauri command is one call to
//! a [`Desktop`] method.
//!
//! - [`desktop`]: the service object and its commands.
//! - [`sessions`]: live agent sessions and the pump over their events (pending approvals,
//!   notifications, changed files).
//! - [`sandboxes`]: the app's own sandbox containers, stopped when it quits.
//! - [`notify`]: native notifications whose actions go through the approval gate.
//! - [`workspace`]: listing, inline images and log pages, all confined to the workspace.
//! - [`startup`]: a damaged history as a state the app shows (with its two ways out), and
//!   what else was found wrong at start, for the banner.
//! - [`types`], [`doctor`], [`sink`]: what crosses to the web UI (TypeScript in
//!   `ui/src/bindings/`, see [`bindings`]).

pub mod attachments;
pub mod bindings;
mod command_error;
pub mod conversations;
mod decisions;
pub mod desktop;
pub mod doctor;
pub mod error;
pub mod links;
pub mod mcp;
pub mod models;
pub mod notify;
pub mod pending;
pub mod profiles;
mod run_changes;
mod run_images;
pub mod sandboxes;
pub mod sessions;
pub mod settings;
pub mod sink;
pub mod startup;
pub mod types;
pub mod view;
pub mod workspace;

pub use command_error::{CommandError, ErrorKind};
pub use desktop::{validate_external_url, Desktop, DesktopOptions};
pub use error::{DesktopError, Result};
/// Called first thing by the app: the descriptor room the system allows, not a desktop's 1,024.
pub use ironclaw_workspace::raise_descriptor_limit;
pub use sink::{AppEvent, EventSink, NullSink, Subscriber};
pub use startup::{HistoryDamage, Recovery, RecoveryOutcome, Startup, StartupNotice};
