//! `ironclaw doctor`: every check prints what it found and, when something is wrong, the fix.
//! Exit 0 only when IronClaw can run code right now.

use std::process::ExitCode;

use ironclaw_sandbox::policy::{Policy, Runtime};
use ironclaw_sandbox::session::user_mapping;
use ironclaw_sandbox::{docker, image, Paths};
use serde::Serialize;

#[derive(Serialize)]
struct Check {
    name: String,
    ok: bool,
    /// A failure that does not stop code from running (an MCP server): shown, not fatal.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    warning: bool,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

impl Check {
    fn ok(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ok: true,
            warning: false,
            detail: detail.into(),
            fix: None,
        }
    }
    /// Shown with its fix, but code still runs.
    fn warn(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            warning: true,
            ..Self::fail(name, detail, fix)
        }
    }
    fn fail(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ok: false,
            warning: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

pub async fn run(json: bool) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    let paths = Paths::from_env()?;

    let policy = match Policy::load(&paths) {
        Ok(p) => {
            let files: Vec<_> = p.sources.iter().map(|s| s.display().to_string()).collect();
            checks.push(Check::ok(
                "policy",
                format!(
                    "profiles {:?} from {}",
                    p.profiles.keys().collect::<Vec<_>>(),
                    files.join(" + ")
                ),
            ));
            Some(p)
        }
        Err(e) => {
            checks.push(Check::fail(
                "policy",
                e.to_string(),
                "fix the file named above, or delete it to use the defaults",
            ));
            None
        }
    };

    let data_ok = std::fs::create_dir_all(&paths.data_dir).is_ok() && tempfile_in(&paths.data_dir);
    checks.push(if data_ok {
        Check::ok("data directory", paths.data_dir.display().to_string())
    } else {
        Check::fail(
            "data directory",
            format!("{} is not writable", paths.data_dir.display()),
            "set IRONCLAW_DATA_DIR to a writable folder",
        )
    });

    let user = user_mapping();
    checks.push(Check::ok(
        "uid strategy",
        if user.substituted_for_root {
            format!(
                "you are root, and code never runs as root: it runs as the fixed unprivileged {}:{}, and each workspace folder is handed to that user (root on the host still reads everything)",
                user.uid, user.gid
            )
        } else {
            format!("code runs as your own {}:{}, so files it makes in the workspace are yours", user.uid, user.gid)
        },
    ));

    match docker::connect().await {
        Err(e) => checks.push(Check::fail(
            "docker engine",
            e.to_string(),
            "see the message: it names the fix",
        )),
        Ok(engine) => {
            checks.push(Check::ok(
                "docker engine",
                format!(
                    "{} {} (API {}) at {} [{}], cgroup v{}, {}",
                    if engine.is_podman { "Podman" } else { "Docker" },
                    engine.server_version,
                    engine.api_version,
                    engine.endpoint.host,
                    engine.endpoint.source,
                    engine.cgroup_version,
                    engine.kernel
                ),
            ));
            let spec = image::spec();
            match image::exists(&engine.docker, &spec.tag).await {
                Ok(true) => {
                    checks.push(Check::ok("sandbox image", spec.tag.clone()));
                    if let Some(p) = &policy {
                        let sandbox = std::sync::Arc::new(ironclaw_sandbox::Sandbox::new(
                            engine.docker.clone(),
                            paths.clone(),
                            p.clone(),
                        ));
                        checks.push(spare_check(&sandbox).await);
                        checks.extend(mcp_checks(&sandbox).await);
                    }
                }
                Ok(false) => checks.push(Check::fail(
                    "sandbox image",
                    format!("{} is not built yet", spec.tag),
                    "run `ironclaw image build` (or `ironclaw image import FILE` on an offline machine)",
                )),
                Err(e) => checks.push(Check::fail("sandbox image", e.to_string(), "check the Docker engine")),
            }
            let gvisor = engine.has_runtime("runsc");
            let runtimes = engine.runtimes.join(", ");
            match &policy {
                Some(p) => {
                    let wanted = p
                        .profile(None)
                        .map(|(_, profile)| profile.runtime)
                        .unwrap_or(Runtime::Auto);
                    let wall = ironclaw_sandbox::policy::wall::wall_for(wanted, gvisor);
                    let mut detail = format!("{} (engine runtimes: {runtimes})", wall.summary);
                    let strict: Vec<&str> = p
                        .profiles
                        .iter()
                        .filter(|(_, profile)| profile.runtime == Runtime::Runsc)
                        .map(|(name, _)| name.as_str())
                        .collect();
                    if !gvisor && !strict.is_empty() {
                        detail.push_str(&format!(
                            "; profile(s) {} require gVisor and cannot start",
                            strict.join(", ")
                        ));
                    }
                    let cannot_start = wall.runtime.is_none() || !gvisor && !strict.is_empty();
                    checks.push(match (wall.fix, cannot_start) {
                        (fix, true) => Check::fail(
                            "runtime",
                            detail,
                            fix.unwrap_or_else(|| {
                                ironclaw_sandbox::policy::wall::HOW_TO_GET_GVISOR.to_string()
                            }),
                        ),
                        (Some(fix), false) => Check::warn("runtime", detail, fix),
                        (None, false) => Check::ok("runtime", detail),
                    });
                }
                None => checks.push(Check::ok("runtime", format!("engine runtimes: {runtimes}"))),
            }
        }
    }

    let ready = checks.iter().all(|c| c.ok || c.warning);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "ready": ready, "checks": checks }))?
        );
    } else {
        for c in &checks {
            println!(
                "{} {:<15} {}",
                if c.ok {
                    "ok  "
                } else if c.warning {
                    "WARN"
                } else {
                    "FAIL"
                },
                c.name,
                c.detail
            );
            if let Some(fix) = &c.fix {
                println!("     {:<15} fix: {fix}", "");
            }
        }
        println!(
            "{}",
            if ready {
                "IronClaw is ready."
            } else {
                "IronClaw is not ready: fix the FAIL lines above."
            }
        );
    }
    Ok(if ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A line per MCP server of `mcp.yaml`: started in its container as a conversation would,
/// asked for its tools, stopped. A server that fails is a warning: code still runs without it.
/// The warm spare: informational, it never makes the check fail.
async fn spare_check(sandbox: &ironclaw_sandbox::Sandbox) -> Check {
    let detail = match sandbox.spare_off_reason() {
        Some(reason) => format!("off: {reason}"),
        None => match sandbox.spares().await {
            Ok(spares) => match spares.iter().find(|(_, usable)| *usable) {
                Some((c, _)) => format!("ready ({}): the next new session starts in it", c.session),
                None => "none now; made after the next run that needs a container (or by the app)"
                    .to_string(),
            },
            Err(e) => format!("cannot list: {e}"),
        },
    };
    Check::ok("warm spare", detail)
}

async fn mcp_checks(sandbox: &std::sync::Arc<ironclaw_sandbox::Sandbox>) -> Vec<Check> {
    let config = ironclaw_mcp::McpConfig::load_or_report(&sandbox.paths().config_dir);
    let file = sandbox
        .paths()
        .config_dir
        .join(ironclaw_mcp::config::FILE_NAME);
    let mut out = Vec::new();
    if let Some(problem) = &config.problem {
        let mut c = Check::fail("mcp.yaml", problem.clone(), "fix the file named above");
        c.warning = true;
        out.push(c);
        return out;
    }
    if config.servers.is_empty() {
        return out;
    }
    let Ok(owner) = ironclaw_sandbox::session::SessionName::new("doctor") else {
        return out;
    };
    // The doctor's check never creates a workspace: a server is started without one.
    let mut trial = config.clone();
    for s in &mut trial.servers {
        s.workspace = false;
    }
    let servers = ironclaw_mcp::Servers::start(sandbox, &owner, &Default::default(), &trial).await;
    for started in servers.started() {
        let Some(entry) = config.servers.iter().find(|s| s.name == started.server) else {
            continue;
        };
        let how = match &entry.url {
            Some(url) => format!("remote at {url}, reached under the network policy"),
            None => format!(
                "runs in its own sandbox container ({}, {})",
                if entry.network.is_empty() {
                    "no network".to_string()
                } else {
                    format!("reaches only {}", entry.network.join(", "))
                },
                if entry.workspace {
                    "sees the conversation's workspace"
                } else {
                    "no workspace"
                }
            ),
        };
        out.push(Check::ok(
            format!("mcp {}", started.server),
            format!(
                "{} tool(s): {}; {how}",
                started.tools.len(),
                started.tools.join(", ")
            ),
        ));
    }
    for (server, why) in &servers.failed {
        let mut c = Check::fail(
            format!("mcp {server}"),
            why.clone(),
            format!(
                "see the message; the server is set up in {}",
                file.display()
            ),
        );
        c.warning = true;
        out.push(c);
    }
    for s in config.servers.iter().filter(|s| !s.enabled) {
        out.push(Check::ok(format!("mcp {}", s.name), "disabled in mcp.yaml"));
    }
    servers.stop().await;
    out
}

fn tempfile_in(dir: &std::path::Path) -> bool {
    let probe = dir.join(format!(".write-test-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}
