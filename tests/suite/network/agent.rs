//! The agent and the network policy: a host refused while approved code runs is told to the
//! person as it happens, written to the audit log and told to the model; allowing it is a
//! decision about a request that really happened, like a code approval.

use std::net::IpAddr;

use ironclaw_protocol::{AgentEvent, ApprovalPolicy, DecidedBy, HostDecision, Op};
use ironclaw_sandbox::network::lab::Lab;
use ironclaw_sandbox::network::Resolver;
use ironclaw_tests::agent::{asks_to_run, says, Agent, Wire};
use ironclaw_tests::*;
use pretty_assertions::assert_eq;

use super::RemoveNetworks;

const TARGET: &str = "denied.example.internal:8000";

fn audit_targets(agent: &Agent, kind: &str) -> Vec<String> {
    agent
        .audit_entries()
        .into_iter()
        .filter(|e| e.kind.as_str() == kind)
        .map(|e| e.data["target"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn a_refused_host_is_reported_audited_and_can_be_allowed_only_when_it_was_asked_for() {
    let env = TestEnv::new().await;
    let _cleanup = RemoveNetworks(env.instance.clone());
    let mut lab = Lab::create(env.docker(), &env.instance, &env.sandbox.image().tag)
        .await
        .expect("lab network");
    let web = lab.http_server("web", 8000, 1).await.expect("web server");
    // Allowlist mode by default; only the server's address is listed (a private address must
    // be listed itself), not the name the code asks for.
    let yaml = format!(
        "network:\n  allowlist:\n    - {}:8000\nprofiles:\n  standard: {{ network: allowlist }}\n",
        web.ip
    );
    std::fs::write(env.paths.user_policy_file(), yaml).expect("write sandbox.yaml");
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::NeverAsk).await;
    agent.sandbox.network().set_resolver(Resolver::fixed([(
        "denied.example.internal".to_string(),
        vec![IpAddr::V4(web.ip)],
    )]));
    let code = format!("curl -sS http://{TARGET}/index.html");

    // Refused twice, then still running for a while: the person hears of the host once, and
    // while the code runs (before its later output), not after it.
    let first = format!("{code}; {code}; sleep 2; echo after-the-refusal");
    agent.push_all([asks_to_run("c1", "shell", &first), says("blocked")]);
    agent.send("fetch it");
    let events = agent.collect_until_turn_end().await;
    let blocked: Vec<(usize, &AgentEvent)> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, AgentEvent::NetworkBlocked { .. }))
        .collect();
    assert_eq!(
        blocked.len(),
        1,
        "one question per host per run: {events:?}"
    );
    let (at, blocked) = blocked[0];
    let AgentEvent::NetworkBlocked {
        target,
        already_denied,
        ..
    } = blocked
    else {
        unreachable!()
    };
    assert_eq!((target.as_str(), *already_denied), (TARGET, false));
    let later_output = events
        .iter()
        .position(|e| {
            matches!(e, AgentEvent::ExecutionOutput { text, .. } if text.contains("after-the-refusal"))
        })
        .expect("the run went on after the refusal");
    assert!(
        at < later_output,
        "reported live, not after the run: {events:?}"
    );
    let note = agent.tool_results_in(1).join("\n");
    assert!(
        note.contains(&format!("network policy blocked: {TARGET}")),
        "{note}"
    );
    assert_eq!(audit_targets(&agent, "network_blocked"), vec![TARGET]);

    // Only a host that was refused can be allowed: anything else allows nothing.
    agent.op(Op::DecideHost {
        target: "other.example.internal:8000".into(),
        decision: HostDecision::AllowAlways,
        decided_by: DecidedBy::Cli,
    });
    let refused = agent
        .next_event_matching("Error", |e| matches!(e, AgentEvent::Error { .. }))
        .await;
    assert!(
        format!("{refused:?}").contains("no unanswered network request"),
        "{refused:?}"
    );

    agent.op(Op::DecideHost {
        target: TARGET.into(),
        decision: HostDecision::AllowForSession,
        decided_by: DecidedBy::Cli,
    });
    let decided = agent
        .next_event_matching("NetworkDecided", |e| {
            matches!(e, AgentEvent::NetworkDecided { .. })
        })
        .await;
    assert_eq!(
        decided,
        AgentEvent::NetworkDecided {
            target: TARGET.into(),
            decision: HostDecision::AllowForSession,
            decided_by: DecidedBy::Cli,
        }
    );
    assert_eq!(audit_targets(&agent, "network_decision"), vec![TARGET]);
    // Answered: a second answer finds nothing pending.
    agent.op(Op::DecideHost {
        target: TARGET.into(),
        decision: HostDecision::AllowAlways,
        decided_by: DecidedBy::Cli,
    });
    agent
        .next_event_matching("Error", |e| matches!(e, AgentEvent::Error { .. }))
        .await;

    agent.push_all([asks_to_run("c2", "shell", &code), says("fetched")]);
    agent.send("again");
    let events = agent.collect_until_turn_end().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::NetworkBlocked { .. })),
        "{events:?}"
    );
    // The run's network activity is shown with the execution.
    let shown = events.iter().find_map(|e| match e {
        AgentEvent::ExecutionNetwork {
            allowed, denied, ..
        } => Some((allowed.clone(), denied.clone())),
        _ => None,
    });
    assert_eq!(
        shown,
        Some((vec![TARGET.to_string()], vec![])),
        "{events:?}"
    );
    let note = agent.tool_results_in(3).join("\n");
    assert!(note.contains("hello from web"), "{note}");
    let file = agent.env.paths.config_dir.join("network.yaml");
    assert!(!file.exists(), "the session answer is not written down");
    lab.remove().await.expect("remove lab");
}
