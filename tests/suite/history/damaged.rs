//! A damaged history through the CLI: every command names the two ways out, and each way out
//! works, keeps the one copy, and leaves a history the next command uses.

use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

use super::{cli, corrupt_copies, real_history, text};

fn write_history(env: &TestEnv, bytes: &[u8]) {
    let path = ironclaw_agent::state::history_path(&env.paths);
    std::fs::write(&path, bytes).expect("write the history");
}

/// `history ls` refuses the damaged file and names both ways out; returns stderr.
fn refused_naming_the_ways_out(env: &TestEnv) -> String {
    let out = cli(env, &["history", "ls"]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("`ironclaw history recover`"), "{stderr}");
    assert!(stderr.contains("`ironclaw history reset`"), "{stderr}");
    stderr
}

fn listed(env: &TestEnv) -> Vec<String> {
    let out = cli(env, &["history", "ls"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_owned).collect()
}

/// Input: a real history with junk over 16 KiB in its middle. Expected: refused with both
/// commands named; `history recover` reports what it read, `history ls` then lists exactly
/// that many conversations, and there is still only the one copy.
#[tokio::test]
async fn history_recover_brings_back_what_a_damaged_history_still_holds() {
    let env = TestEnv::new().await;
    let mut damaged = real_history(&env, 120);
    let middle = damaged.len() / 2 / 4096 * 4096;
    for (i, b) in damaged[middle..middle + 4 * 4096].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(31) ^ 0xc3;
    }
    write_history(&env, &damaged);
    refused_naming_the_ways_out(&env);

    let out = cli(&env, &["history", "recover"]);
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{shown}{}", text(&out.stderr));
    let copies = corrupt_copies(&env.paths.data_dir);
    assert_eq!(copies.len(), 1, "one copy per damage: {copies:?}");
    assert!(shown.contains(&copies[0].display().to_string()), "{shown}");
    assert!(std::fs::read(&copies[0]).expect("copy") == damaged);
    let recovered: usize = shown
        .split("recovered ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {shown}"));
    assert!(recovered > 0, "{shown}");
    assert_eq!(listed(&env).len(), recovered, "{shown}");
}

/// Input: the same kind of history cut to half its length (the class's other shape).
/// Expected: recovered to something non-empty that lists and searches.
#[tokio::test]
async fn history_recover_brings_back_the_first_half_of_a_history_cut_short() {
    let env = TestEnv::new().await;
    let whole = real_history(&env, 120);
    write_history(&env, &whole[..whole.len() / 2]);
    refused_naming_the_ways_out(&env);

    let out = cli(&env, &["history", "recover"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = listed(&env);
    assert!(!rows.is_empty() && rows.len() < 120, "{rows:?}");
    let out = cli(&env, &["history", "search", "message"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("[message]"));
}

/// Input: random bytes as the history. Expected: `history reset` leaves an empty, working
/// history and the copy of the bytes; a new conversation can then be written.
#[tokio::test]
async fn history_reset_starts_empty_and_keeps_the_damaged_copy() {
    let env = TestEnv::new().await;
    let noise: Vec<u8> = (0..64 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    write_history(&env, &noise);
    refused_naming_the_ways_out(&env);

    let out = cli(&env, &["history", "reset"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let copies = corrupt_copies(&env.paths.data_dir);
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(std::fs::read(&copies[0]).expect("copy") == noise);
    assert_eq!(
        listed(&env),
        ["no conversations yet: `ironclaw chat` starts one"]
    );
}

/// Input: `recover` and `reset` on a healthy history. Expected: it is left exactly as it was.
#[tokio::test]
async fn recover_and_reset_leave_a_healthy_history_alone() {
    let env = TestEnv::new().await;
    let before = real_history(&env, 3);
    for command in ["recover", "reset"] {
        let out = cli(&env, &["history", command]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("opens fine"),
            "{}",
            text(&out.stdout)
        );
    }
    assert_eq!(listed(&env).len(), 3);
    assert!(corrupt_copies(&env.paths.data_dir).is_empty());
    let path = ironclaw_agent::state::history_path(&env.paths);
    assert!(std::fs::metadata(&path).expect("history").len() >= before.len() as u64);
}
