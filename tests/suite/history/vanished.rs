//! A history that is gone (deleted, or cut to 0 bytes) while the audit log still lists its
//! conversations: the CLI says so once, not on every command.

use ironclaw_protocol::{ApprovalPolicy, AuditRecord, ConversationId};
use ironclaw_store::AuditLog;
use ironclaw_tests::TestEnv;

use super::{cli, text};

const NOTICE: &str = "history is empty but the audit log lists 12 entries for 4 conversations; \
                      the history may have been deleted or replaced";

fn audit_with_twelve_entries(env: &TestEnv) {
    let path = ironclaw_agent::state::audit_path(&env.paths);
    let (log, _) = AuditLog::open(&path).expect("open the audit log");
    let conversations: Vec<ConversationId> = (0..4).map(|_| ConversationId::new()).collect();
    for i in 0..12 {
        log.record(&AuditRecord::PolicyChanged {
            conversation_id: conversations[i % 4],
            policy: ApprovalPolicy::AskAlways,
        })
        .expect("append");
    }
}

fn reported_once(env: &TestEnv) {
    let first = cli(env, &["history", "ls"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(
        text(&first.stderr).contains(NOTICE),
        "{}",
        text(&first.stderr)
    );
    for args in [&["history", "ls"][..], &["history", "search", "x"]] {
        let again = cli(env, args);
        assert!(again.status.success(), "{}", text(&again.stderr));
        assert!(
            !text(&again.stderr).contains("audit log lists"),
            "{args:?} reported it again: {}",
            text(&again.stderr)
        );
    }
}

/// Input: a history cut to 0 bytes beside an audit log of 12 entries for 4 conversations.
#[tokio::test]
async fn a_history_cut_to_zero_bytes_beside_its_audit_log_is_reported_once() {
    let env = TestEnv::new().await;
    let _ = super::real_history(&env, 4);
    audit_with_twelve_entries(&env);
    let path = ironclaw_agent::state::history_path(&env.paths);
    std::fs::write(&path, b"").expect("empty the history");
    reported_once(&env);
}

/// Input: the history file deleted, the audit log kept.
#[tokio::test]
async fn a_deleted_history_beside_its_audit_log_is_reported_once() {
    let env = TestEnv::new().await;
    std::fs::create_dir_all(&env.paths.data_dir).expect("data dir");
    audit_with_twelve_entries(&env);
    reported_once(&env);
}
