//! Every command of `ironclaw`, parsed and run: what `ironclaw-full` is. Every command is a
//! thin call into `ironclaw-sandbox`, the same library the desktop app uses.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use ironclaw_protocol::ExportFormat;

use crate::commands;
use crate::front::Linked;

#[derive(Parser)]
#[command(
    name = "ironclaw",
    version,
    about = "Run code in IronClaw's hardened Docker sandbox"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check the Docker engine, the sandbox image, the UID strategy and the runtime.
    Doctor {
        #[arg(long)]
        json: bool,
    },
    /// Build, export or import the sandbox image.
    Image {
        #[command(subcommand)]
        command: ImageCommand,
    },
    #[command(about = commands::exec::ABOUT)]
    Exec(commands::exec::ExecArgs),
    /// Put a session's workspace back as it was before a run (the newest one by default).
    /// Exits 2, changing nothing, when later runs changed the same files.
    Undo {
        #[arg(long)]
        session: String,
        /// The run to undo: `run_id` from `ironclaw exec --json`.
        run_id: Option<String>,
        /// Also undo the later runs that changed the same files (newest first).
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Put back what an undone run had changed.
    Redo {
        #[arg(long)]
        session: String,
        run_id: String,
        #[arg(long)]
        json: bool,
    },
    /// List, stop or remove session sandboxes.
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
    /// Print the host folder of a session's workspace.
    Workspace { name: String },
    /// Chat with the agent; every execution it wants waits for your approval.
    Chat(commands::chat::ChatArgs),
    /// Past conversations: list, show, search, export, delete.
    History {
        #[command(subcommand)]
        command: HistoryCommand,
    },
    /// The tamper-evident record of every execution request, decision and result.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Measure IronClaw against plain `docker exec` / `docker run` on this machine (runs
    /// `ironclaw-bench`; `ironclaw bench --help` lists its options).
    #[command(disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

#[derive(Subcommand)]
enum ImageCommand {
    /// Build the sandbox image unless this version's is already there (pulls or debootstraps
    /// its Debian base when needed).
    Build {
        /// Rebuild even if the image exists.
        #[arg(long)]
        force: bool,
        /// Never contact a registry: use or build the local debootstrap base.
        #[arg(long)]
        offline: bool,
        /// Build on this base image instead of choosing one.
        #[arg(long)]
        base: Option<String>,
    },
    /// Save the sandbox image to a tar file for an offline machine.
    Export { file: PathBuf },
    /// Load a sandbox image tar made by `ironclaw image export` (or `docker save`).
    Import { file: PathBuf },
}

#[derive(Subcommand)]
enum HistoryCommand {
    Ls {
        #[arg(long)]
        json: bool,
    },
    /// Print a conversation (as Markdown).
    Show { id: String },
    /// Full-text search over messages and code.
    Search {
        text: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    Export {
        id: String,
        #[arg(long, value_enum, default_value_t = ExportFormat::Markdown)]
        format: ExportFormat,
    },
    Rm {
        id: String,
        /// Also remove the conversation's sandbox container and workspace folder.
        #[arg(long)]
        purge: bool,
    },
    /// Branch a conversation at the person's Nth message, to say it differently: a new
    /// conversation with everything before it, the files as they were then (a copy), a fresh
    /// interpreter. Prints the new id; go on with `ironclaw chat --conversation ID`.
    Branch {
        id: String,
        /// Which of the person's messages (1 = the first) the branch replaces.
        #[arg(long, value_name = "N")]
        at: usize,
    },
    /// Replace a damaged history with a new one holding every row that can still be read
    /// (the damaged file is kept as a copy).
    Recover,
    /// Replace a damaged history with an empty one (the damaged file is kept as a copy).
    Reset,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Check the hash chain; names the first edited, removed or reordered entry.
    Verify,
}

#[derive(Subcommand)]
enum SandboxCommand {
    /// Sessions and their containers.
    Ls {
        #[arg(long)]
        json: bool,
    },
    /// Stop a session's container (interpreter state is lost, the workspace stays).
    Stop { name: String },
    /// Remove a session and its container.
    Rm {
        name: String,
        /// Also delete the session's workspace folder.
        #[arg(long)]
        purge: bool,
    },
    /// Remove containers whose session no longer exists, and the warm spare.
    Prune,
    /// Make sure a warm spare is ready for the next new session (or say why none is kept).
    Spare,
}

/// Parses the command line and runs the command.
pub fn main() -> ExitCode {
    crate::init_tracing();
    ironclaw_workspace::raise_descriptor_limit();
    let cli = Cli::parse();
    let command = match cli.command {
        Command::Exec(args) => return crate::exec_main(args, Linked::Dynamic),
        other => other,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return crate::no_runtime(&e),
    };
    let result = runtime.block_on(async move {
        match command {
            Command::Doctor { json } => commands::doctor::run(json).await,
            Command::Image { command } => match command {
                ImageCommand::Build {
                    force,
                    offline,
                    base,
                } => commands::image::build(force, offline, base).await,
                ImageCommand::Export { file } => commands::image::export(&file).await,
                ImageCommand::Import { file } => commands::image::import(&file).await,
            },
            Command::Exec(args) => commands::exec::run(args, Linked::Dynamic)
                .await
                .map(commands::exec::Ran::exit_code),
            Command::Undo {
                session,
                run_id,
                force,
                json,
            } => commands::undo::undo(session, run_id, force, json).await,
            Command::Redo {
                session,
                run_id,
                json,
            } => commands::undo::redo(session, run_id, json).await,
            Command::Sandbox { command } => match command {
                SandboxCommand::Ls { json } => commands::sandbox::ls(json).await,
                SandboxCommand::Stop { name } => commands::sandbox::stop(&name).await,
                SandboxCommand::Rm { name, purge } => commands::sandbox::rm(&name, purge).await,
                SandboxCommand::Prune => commands::sandbox::prune().await,
                SandboxCommand::Spare => commands::sandbox::spare().await,
            },
            Command::Workspace { name } => commands::sandbox::workspace(&name),
            Command::Chat(args) => commands::chat::run(args).await,
            Command::History { command } => match command {
                HistoryCommand::Ls { json } => commands::history::ls(json),
                HistoryCommand::Show { id } => commands::history::show(&id),
                HistoryCommand::Search { text, limit } => commands::history::search(&text, limit),
                HistoryCommand::Export { id, format } => commands::history::export(&id, format),
                HistoryCommand::Rm { id, purge } => commands::history::delete(&id, purge).await,
                HistoryCommand::Branch { id, at } => commands::history::branch(&id, at).await,
                HistoryCommand::Recover => commands::history::recover(),
                HistoryCommand::Reset => commands::history::reset(),
            },
            Command::Audit { command } => match command {
                AuditCommand::Verify => commands::history::audit_verify(),
            },
            Command::Bench { args } => commands::bench::run(args),
        }
    });
    crate::finish(result)
}
