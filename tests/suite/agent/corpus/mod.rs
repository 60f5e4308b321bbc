//! Approval by effect, measured: the task corpus ([`tasks`]) run through the real agent, the
//! real sandbox and the scripted model under each approval policy, the person approving every
//! run it is asked about (with the confirmation where one is needed) and denying the one host
//! that is not allowed.
//!
//! One run per turn, so the harness sees the workspace between runs. For every run that
//! executed without a prompt, it then presses Undo (`Op::UndoRun`) and compares the
//! workspace's tree hash (paths, kinds, modes, contents, link targets — hashed here, not by
//! the checkpoint code) with the one from before the run, then Redo and compares with the one
//! after, and goes on.
//!
//! Each policy is its own test (they run side by side), each asserts its goals, and each
//! writes its row to `target/approval-corpus/<policy>.md`; docs/benchmarks.md#approval-prompts is
//! those rows.

mod tasks;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;

use ironclaw_protocol::{
    AgentEvent, ApprovalPolicy, DecidedBy, Decision, HostDecision, Language, Op,
};
use ironclaw_sandbox::network::lab::Lab;
use ironclaw_sandbox::network::Resolver;
use ironclaw_tests::agent::{asks_to_run, says, Agent, Wire};
use ironclaw_tests::*;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use tasks::{Kind, Run, TASKS};

/// The hosts the person allowed before any task began (the mirror, by name and address).
const ALLOWED_NAMES: [&str; 2] = ["pypi.example.internal:8000", "data.example.internal:8000"];
/// A host nobody allowed: the refused upload's.
const TRACKER: &str = "tracker.example.internal:8000";

#[derive(Default, Debug)]
struct Tally {
    tasks: usize,
    runs: usize,
    prompts: usize,
    host_prompts: usize,
    unprompted: usize,
    undo_checked: usize,
    undo_restored: usize,
    /// Unprompted runs that reached a host the person had not allowed beforehand.
    unprompted_off_list: usize,
    /// Unprompted runs that reached an allowed host (the mirror).
    unprompted_allowed_host: usize,
    failed_runs: Vec<String>,
    undo_failures: Vec<String>,
    prompts_by_kind: BTreeMap<Kind, (usize, usize)>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_corpus_ask_always() {
    let t = run_corpus(ApprovalPolicy::AskAlways).await;
    assert_eq!(t.unprompted, 0, "{t:#?}");
    assert_eq!(t.prompts, t.runs, "every run asked: {t:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_corpus_ask_unless_safe() {
    let t = run_corpus(ApprovalPolicy::AskUnlessSafe).await;
    assert!(t.unprompted > 0, "read-only runs ran unasked: {t:#?}");
    assert_common(&t);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_corpus_ask_unless_undoable() {
    let t = run_corpus(ApprovalPolicy::AskUnlessUndoable).await;
    assert_common(&t);
    // ask-always asks once per run (its own test proves it on this corpus).
    let asked = (t.prompts + t.host_prompts) as f64;
    assert!(
        asked <= 0.15 * t.runs as f64,
        "at least 85% fewer prompts than ask-always: {asked} of {} runs asked; {t:#?}",
        t.runs
    );
}

fn assert_common(t: &Tally) {
    assert_eq!(t.undo_checked, t.unprompted, "{t:#?}");
    assert_eq!(
        t.undo_restored, t.unprompted,
        "every unprompted run undone byte for byte: {:#?}",
        t.undo_failures
    );
    assert_eq!(t.unprompted_off_list, 0, "{t:#?}");
}

async fn run_corpus(policy: ApprovalPolicy) -> Tally {
    let env = TestEnv::new().await;
    let _cleanup = crate::suite::network::RemoveNetworks(env.instance.clone());
    let mut lab = Lab::create(env.docker(), &env.instance, &env.sandbox.image().tag)
        .await
        .expect("lab network");
    let mirror = lab.package_mirror(8000).await.expect("package mirror");
    // Lab addresses are private, so the address is listed too (the rebinding rule).
    let yaml = format!(
        "network:\n  allowlist:\n    - {}\n    - {}\n    - {}:8000\nprofiles:\n  standard: {{ network: allowlist }}\n",
        ALLOWED_NAMES[0], ALLOWED_NAMES[1], mirror.ip
    );
    std::fs::write(env.paths.user_policy_file(), yaml).expect("sandbox.yaml");
    let mut agent = Agent::start_with(env, Wire::OpenAi, policy).await;
    let v4 = vec![IpAddr::V4(mirror.ip)];
    agent.sandbox.network().set_resolver(Resolver::fixed(
        [
            "pypi.example.internal",
            "data.example.internal",
            "tracker.example.internal",
        ]
        .map(|h| (h.to_string(), v4.clone())),
    ));

    let mut tally = Tally::default();
    // IRONCLAW_CORPUS_ONLY=text: only the tasks whose name contains it (to look into one).
    let only = std::env::var("IRONCLAW_CORPUS_ONLY").unwrap_or_default();
    let tasks: Vec<_> = TASKS.iter().filter(|t| t.name.contains(&only)).collect();
    tally.tasks = tasks.len();
    for (n, task) in tasks.into_iter().enumerate() {
        if n > 0 {
            agent.start_new_conversation(policy).await;
        }
        seed(&agent, task.seed).await;
        let before = tally.prompts + tally.host_prompts;
        for (i, run) in task.runs.iter().enumerate() {
            one_run(&mut agent, &mut tally, task.name, i, *run).await;
        }
        let entry = tally.prompts_by_kind.entry(task.kind).or_default();
        entry.0 += tally.prompts + tally.host_prompts - before;
        entry.1 += 1;
    }
    report(policy, &tally);
    tally
}

/// The person's own files, there before the task: written by a plain sandbox run, not the agent.
async fn seed(agent: &Agent, script: &str) {
    let session = agent.session_name();
    let r = agent
        .sandbox
        .exec(
            &session,
            &SessionOptions::default(),
            // In a subshell: the shell interpreter persists, and its folder must stay /workspace.
            &ExecRequest::new(Language::Shell, format!("( {script} )")),
            &mut |_| {},
            &CancellationToken::new(),
        )
        .await
        .expect("seed the workspace");
    assert_eq!(r.exit_code, 0, "seed failed: {}\n{}", script, r.stderr);
}

async fn one_run(agent: &mut Agent, tally: &mut Tally, task: &str, i: usize, run: Run) {
    let (language, code) = match run {
        Run::Py(c) => ("python", c),
        Run::Sh(c) => ("shell", c),
    };
    let ws = agent.workspace();
    let before = tree_hash(&ws);
    agent.push_all([
        asks_to_run(&format!("call_{i}"), language, code),
        says("ok"),
    ]);
    agent.send(&format!("step {}", i + 1));
    tally.runs += 1;
    let mut unprompted = false;
    let mut execution = None;
    let mut reached = Vec::new();
    let mut output = String::new();
    loop {
        let event = agent
            .next_event_matching("the run's events", |_| true)
            .await;
        match event {
            AgentEvent::ApprovalRequested(req) => {
                tally.prompts += 1;
                if only_some() {
                    eprintln!("--- {task} #{} asked: {:?}", i + 1, req.asked_because);
                }
                let confirmed = req.choices.iter().any(|c| c.needs_confirmation);
                agent.decide(&req, Decision::ApproveOnce, confirmed);
            }
            AgentEvent::ApprovalResolved { auto: true, .. } => unprompted = true,
            AgentEvent::NetworkBlocked { target, .. } => {
                tally.host_prompts += 1;
                agent.op(Op::DecideHost {
                    target,
                    decision: HostDecision::Deny,
                    decided_by: DecidedBy::UserDialog,
                });
            }
            AgentEvent::ExecutionNetwork { allowed, .. } => reached = allowed,
            AgentEvent::ExecutionOutput { text, .. } => output.push_str(&text),
            AgentEvent::ExecutionEnded {
                execution_id,
                exit_code,
                ..
            } => {
                if only_some() {
                    eprintln!("--- {task} #{} (exit {exit_code}):\n{output}", i + 1);
                }
                if exit_code != 0 {
                    tally.failed_runs.push(format!(
                        "{task} #{}: exit {exit_code} ({})",
                        i + 1,
                        tail(&output)
                    ));
                }
                execution = Some(execution_id);
            }
            AgentEvent::TurnEnded { .. } => break,
            _ => {}
        }
    }
    let Some(execution_id) = execution else {
        panic!("{task} #{}: nothing ran\n{}", i + 1, agent.dump());
    };
    if !unprompted {
        return;
    }
    tally.unprompted += 1;
    if !reached.is_empty() {
        let allowed = |t: &String| {
            ALLOWED_NAMES.contains(&t.as_str())
                || t.ends_with(":8000") && t.starts_with(|c: char| c.is_ascii_digit())
        };
        if reached.iter().all(allowed) {
            tally.unprompted_allowed_host += 1;
        } else {
            tally.unprompted_off_list += 1;
        }
    }
    assert!(
        !reached.iter().any(|t| t == TRACKER),
        "the tracker is never reached"
    );

    // Undo, compare with before; Redo, compare with after.
    let after = tree_hash(&ws);
    tally.undo_checked += 1;
    agent.op(Op::UndoRun {
        execution_id,
        force: false,
    });
    let undone = agent
        .next_event_matching("the undo", |e| {
            matches!(
                e,
                AgentEvent::RunUndone { .. }
                    | AgentEvent::UndoBlocked { .. }
                    | AgentEvent::Error { .. }
            )
        })
        .await;
    let restored = tree_hash(&ws);
    if !matches!(undone, AgentEvent::RunUndone { .. }) || restored != before {
        tally.undo_failures.push(format!(
            "{task} #{}: {undone:?}; the tree after undo {} the one before",
            i + 1,
            if restored == before {
                "equals"
            } else {
                "differs from"
            }
        ));
        return;
    }
    agent.op(Op::RedoRun { execution_id });
    let redone = agent
        .next_event_matching("the redo", |e| {
            matches!(e, AgentEvent::RunRedone { .. } | AgentEvent::Error { .. })
        })
        .await;
    assert!(
        matches!(redone, AgentEvent::RunRedone { .. }) && tree_hash(&ws) == after,
        "{task} #{}: redo did not put the run's changes back: {redone:?}",
        i + 1
    );
    tally.undo_restored += 1;
}

/// Every path under `root` (not `root` itself), sorted, with its kind, mode and content or
/// link target, hashed. Links are read, never followed.
fn tree_hash(root: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let mut entries = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read the workspace") {
            let path = entry.expect("entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let rel = path
                .strip_prefix(root)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            let mode = meta.permissions().mode() & 0o7777;
            let body: Vec<u8> = if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .expect("readlink")
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_dir() {
                stack.push(path.clone());
                Vec::new()
            } else {
                Sha256::digest(std::fs::read(&path).expect("read")).to_vec()
            };
            let kind = if meta.file_type().is_symlink() {
                'l'
            } else if meta.is_dir() {
                'd'
            } else {
                'f'
            };
            entries.push((rel, kind, mode, body));
        }
    }
    entries.sort();
    let mut h = Sha256::new();
    for (rel, kind, mode, body) in entries {
        h.update(rel.as_bytes());
        h.update([0, kind as u8]);
        h.update(mode.to_be_bytes());
        h.update(&body);
        h.update([0xff]);
    }
    format!("{:x}", h.finalize())
}

fn only_some() -> bool {
    std::env::var_os("IRONCLAW_CORPUS_ONLY").is_some()
}

fn tail(s: &str) -> String {
    let t: String = s.trim().chars().rev().take(160).collect();
    t.chars().rev().collect::<String>().replace('\n', " / ")
}

fn report(policy: ApprovalPolicy, t: &Tally) {
    let tasks = t.tasks;
    let asked = t.prompts + t.host_prompts;
    let mut md = format!(
        "| `{policy}` | {tasks} | {} | {asked} ({} code, {} host) | {:.2} | {} | {}/{} | {} ({} to an allowed host) |\n",
        t.runs,
        t.prompts,
        t.host_prompts,
        asked as f64 / tasks as f64,
        t.unprompted,
        t.undo_restored,
        t.unprompted,
        t.unprompted_off_list,
        t.unprompted_allowed_host,
    );
    md.push_str("\nprompts per task, by kind:\n");
    for (kind, (prompts, n)) in &t.prompts_by_kind {
        md.push_str(&format!(
            "- {}: {:.2} ({n} tasks)\n",
            kind.label(),
            *prompts as f64 / *n as f64
        ));
    }
    if !t.failed_runs.is_empty() {
        md.push_str(&format!(
            "\nruns that exited non-zero (as some steps are meant to): {}\n",
            t.failed_runs.join("; ")
        ));
    }
    println!("{md}");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/approval-corpus");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(format!("{policy}.md")), md);
    }
}
