//! Project instructions (`AGENTS.md`, `IRONCLAW.md`): the person's own from the config folder
//! and the workspace's, read into the system prompt before every turn, announced when they
//! change, and read the way every sandbox-written file is: a link is not followed and a FIFO
//! does not hang the turn.

use ironclaw_protocol::{AgentEvent, ApprovalPolicy, InstructionFile, InstructionScope};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;
use std::os::unix::fs::FileTypeExt;

fn announced(events: &[AgentEvent]) -> Vec<Vec<InstructionFile>> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Instructions { files } => Some(files.clone()),
            _ => None,
        })
        .collect()
}

fn system_of(agent: &Agent, request: usize) -> String {
    agent.requests()[request].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instructions_from_both_folders_reach_the_model_and_an_edit_counts_from_the_next_turn() {
    let env = TestEnv::new().await;
    std::fs::create_dir_all(&env.paths.config_dir).expect("config dir");
    std::fs::write(
        env.paths.config_dir.join("AGENTS.md"),
        "Answer briefly. USER-MARKER",
    )
    .expect("write the person's AGENTS.md");
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::NeverAsk).await;
    agent.push_all([
        asks_to_run(
            "call_1",
            "shell",
            "printf 'Use pandas. WS-MARKER' > /workspace/AGENTS.md",
        ),
        says("Written."),
    ]);
    agent.send("write the project's instructions");
    let first = agent.collect_until_turn_end().await;
    let files = announced(&first);
    assert_eq!(files.len(), 1, "{}", agent.dump());
    assert_eq!(files[0].len(), 1);
    assert_eq!(files[0][0].scope, InstructionScope::User);
    assert!(system_of(&agent, 0).contains("USER-MARKER"));
    assert!(!system_of(&agent, 0).contains("WS-MARKER"));

    // The file the run wrote is in force from the next turn, said to come from the workspace.
    agent.push(says("Understood."));
    agent.send("go on");
    let second = agent.collect_until_turn_end().await;
    let files = announced(&second);
    assert_eq!(files.len(), 1);
    let scopes: Vec<_> = files[0]
        .iter()
        .map(|f| (f.scope, f.name.as_str()))
        .collect();
    assert_eq!(
        scopes,
        [
            (InstructionScope::User, "AGENTS.md"),
            (InstructionScope::Workspace, "AGENTS.md")
        ]
    );
    let system = system_of(&agent, 2);
    assert!(
        system.contains("USER-MARKER") && system.contains("WS-MARKER"),
        "{system}"
    );
    assert!(system.contains("code you ran can change it"), "{system}");

    // An edit on disk by the person counts from the next turn.
    std::fs::write(
        agent.workspace().join("AGENTS.md"),
        "Use polars. EDITED-MARKER",
    )
    .expect("edit AGENTS.md");
    agent.push(says("Switching."));
    agent.send("and now?");
    let third = agent.collect_until_turn_end().await;
    assert_eq!(announced(&third).len(), 1);
    let system = system_of(&agent, 3);
    assert!(
        system.contains("EDITED-MARKER") && !system.contains("WS-MARKER"),
        "{system}"
    );

    // Unchanged: nothing announced again.
    agent.push(says("Same."));
    agent.send("still?");
    let fourth = agent.collect_until_turn_end().await;
    assert!(announced(&fourth).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_or_fifo_instruction_file_is_refused_and_the_turn_goes_on() {
    let env = TestEnv::new().await;
    let secret = env.root().join("host-secret.txt");
    std::fs::write(&secret, "HOST-SECRET-7f3a").expect("write the host file");
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::NeverAsk).await;
    let plant = format!(
        "ln -s {} /workspace/AGENTS.md && mkfifo /workspace/IRONCLAW.md",
        secret.display()
    );
    agent.push_all([asks_to_run("call_1", "shell", &plant), says("Planted.")]);
    agent.send("set things up");
    agent.turn_done().await;

    // The attack is in place on the host: a link to a readable host file, and a FIFO.
    let ws = agent.workspace();
    let link = std::fs::symlink_metadata(ws.join("AGENTS.md")).expect("the link");
    assert!(link.file_type().is_symlink());
    assert_eq!(
        std::fs::read_link(ws.join("AGENTS.md")).ok(),
        Some(secret.clone())
    );
    assert!(std::fs::read_to_string(&secret).is_ok_and(|s| s.contains("HOST-SECRET")));
    let fifo = std::fs::symlink_metadata(ws.join("IRONCLAW.md")).expect("the FIFO");
    assert!(fifo.file_type().is_fifo());

    agent.push(says("Carrying on."));
    agent.send("carry on");
    let turn = agent.collect_until_turn_end().await;
    assert_eq!(assistant_texts(&turn), ["Carrying on."]);
    let files = announced(&turn);
    assert_eq!(files.len(), 1, "{}", agent.dump());
    let problems: Vec<_> = files[0]
        .iter()
        .map(|f| f.problem.clone().unwrap_or_default())
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("symbolic link"), "{problems:?}");
    assert!(problems[1].contains("FIFO"), "{problems:?}");
    let sent = agent.requests()[2].body.to_string();
    assert!(!sent.contains("HOST-SECRET"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_md_put_in_the_workspace_before_any_run_counts_from_the_first_turn() {
    let env = TestEnv::new().await;
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::AskAlways).await;
    // Where "Open folder" puts the person before the conversation has run anything.
    let folder = agent
        .env
        .paths
        .workspaces_dir()
        .join(agent.session_name().as_str());
    std::fs::create_dir_all(&folder).expect("the workspace folder");
    std::fs::write(folder.join("AGENTS.md"), "Dates are ISO 8601. EARLY-MARKER")
        .expect("write AGENTS.md");
    agent.push(says("Noted."));
    agent.send("hello");
    let turn = agent.collect_until_turn_end().await;
    assert!(!agent.has_container().await, "no run was needed");
    let files = announced(&turn);
    assert_eq!(files.len(), 1, "{}", agent.dump());
    assert_eq!(files[0][0].scope, InstructionScope::Workspace);
    assert!(system_of(&agent, 0).contains("EARLY-MARKER"));
}
