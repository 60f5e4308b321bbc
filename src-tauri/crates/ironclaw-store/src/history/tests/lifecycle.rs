use pretty_assertions::assert_eq;

use super::*;
use crate::error::StoreError;
use crate::history::migrations::latest_version;
use crate::model::TurnStatus;
use ironclaw_protocol::{MessageId, TurnOutcome};

fn count(history: &History, sql: &str) -> i64 {
    history
        .read(|tx| Ok(tx.query_row(sql, [], |r| r.get(0))?))
        .unwrap()
}

#[test]
fn opening_twice_keeps_the_data_and_the_schema_version() {
    let (_dir, path, history) = temp_history();
    let id = new_conversation(&history, "kept");
    drop(history);

    let (again, report) = History::open(&path).unwrap();
    assert!(report.is_empty());
    assert_eq!(again.get_conversation(id).unwrap().title, "kept");
    assert_eq!(count(&again, "PRAGMA user_version"), latest_version());
    assert_eq!(count(&again, "SELECT count(*) FROM conversations"), 1);
}

#[test]
fn open_sets_wal_foreign_keys_and_the_chosen_sync_level() {
    let (_dir, _path, history) = temp_history();
    let mode: String = history
        .read(|tx| Ok(tx.query_row("PRAGMA journal_mode", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(count(&history, "PRAGMA foreign_keys"), 1);
    // 1 = NORMAL (WAL: survives kill -9), 2 = FULL with IRONCLAW_SYNC=full
    let expected = if crate::sync_to_disk() { 2 } else { 1 };
    assert_eq!(count(&history, "PRAGMA synchronous"), expected);
}

#[test]
fn conversations_are_listed_most_recently_active_first_with_a_preview() {
    let (_dir, _path, history) = temp_history();
    let older = new_conversation(&history, "older");
    let newer = new_conversation(&history, "newer");
    history
        .add_message(&message(
            older,
            None,
            MessageRole::User,
            "bring me back to the top",
        ))
        .unwrap();
    history
        .add_message(&message(
            older,
            None,
            MessageRole::Tool,
            "tool output is not a preview",
        ))
        .unwrap();

    let list = history.list_conversations().unwrap();
    let order: Vec<_> = list.iter().map(|s| s.conversation.id).collect();
    assert_eq!(order, vec![older, newer]);
    assert_eq!(
        list[0].last_message_preview.as_deref(),
        Some("bring me back to the top")
    );
    assert_eq!(list[0].message_count, 2);
    assert_eq!(list[1].last_message_preview, None);
}

#[test]
fn renaming_changes_the_title_and_unknown_ids_are_not_found() {
    let (_dir, _path, history) = temp_history();
    let id = new_conversation(&history, "draft");
    history.rename_conversation(id, "final").unwrap();
    assert_eq!(history.get_conversation(id).unwrap().title, "final");

    let missing = ConversationId::new();
    let err = history.rename_conversation(missing, "x").unwrap_err();
    assert!(matches!(
        err,
        StoreError::NotFound {
            what: "conversation",
            ..
        }
    ));
    assert!(err.to_string().contains(&missing.to_string()));
}

#[test]
fn deleting_a_conversation_removes_everything_in_it_and_nothing_else() {
    let (_dir, _path, history) = temp_history();
    let doomed = new_conversation(&history, "doomed");
    let kept = new_conversation(&history, "kept");
    run_code_exchange(&history, doomed, "print('doomedneedle')", "doomedneedle");
    run_code_exchange(&history, kept, "print('keptneedle')", "keptneedle");
    history
        .add_session_rule(doomed, crate::model::RuleKind::Command, "ls")
        .unwrap();
    for id in [doomed, kept] {
        history.set_setting(&format!("model:{id}"), "m").unwrap();
        history.set_setting(&format!("attached:{id}"), "a").unwrap();
    }
    history.set_setting("theme", "dark").unwrap();

    history.delete_conversation(doomed).unwrap();

    // Its settings went with it; another conversation's and the app's stayed.
    assert_eq!(
        history
            .get_setting::<String>(&format!("model:{doomed}"))
            .unwrap(),
        None
    );
    assert_eq!(
        history
            .get_setting::<String>(&format!("attached:{doomed}"))
            .unwrap(),
        None
    );
    assert_eq!(
        history
            .get_setting::<String>(&format!("model:{kept}"))
            .unwrap()
            .as_deref(),
        Some("m")
    );
    assert_eq!(
        history.get_setting::<String>("theme").unwrap().as_deref(),
        Some("dark")
    );

    for table in [
        "turns",
        "messages",
        "approvals",
        "session_rules",
        "executions",
    ] {
        let left = count(
            &history,
            &format!("SELECT count(*) FROM {table} WHERE conversation_id = '{doomed}'"),
        );
        assert_eq!(
            left, 0,
            "{table} still has rows of the deleted conversation"
        );
    }
    assert_eq!(
        count(&history, "SELECT count(*) FROM tool_calls"),
        1,
        "only the kept conversation's tool call remains"
    );
    assert!(history.search("doomedneedle", 10).unwrap().is_empty());
    assert_eq!(history.search("keptneedle", 10).unwrap().len(), 2); // tool output + code
    assert!(matches!(
        history.get_conversation(doomed),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        history.delete_conversation(doomed),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn streaming_text_is_checkpointed_then_completed() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "stream");
    let turn = history.begin_turn(conversation).unwrap();
    let mut new = message(conversation, Some(turn.id), MessageRole::Assistant, "");
    new.status = MessageStatus::Streaming;
    let reply = history.add_message(&new).unwrap();

    history.update_message_content(reply.id, "Hel").unwrap();
    history.append_message_delta(reply.id, "lo").unwrap();
    assert_eq!(history.get_message(reply.id).unwrap().content, "Hello");

    let done = history.complete_message(reply.id, "Hello, world").unwrap();
    assert_eq!(done.status, MessageStatus::Complete);
    assert_eq!(done.content, "Hello, world");
}

#[test]
fn a_finished_message_can_no_longer_change() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "final");
    let sent = history
        .add_message(&message(conversation, None, MessageRole::User, "fixed"))
        .unwrap();

    let err = history
        .update_message_content(sent.id, "rewritten")
        .unwrap_err();
    assert!(matches!(
        err,
        StoreError::MessageFinished {
            status: MessageStatus::Complete,
            ..
        }
    ));
    assert!(matches!(
        history.append_message_delta(MessageId::new(), "x"),
        Err(StoreError::NotFound {
            what: "message",
            ..
        })
    ));
    assert_eq!(history.get_message(sent.id).unwrap().content, "fixed");
}

#[test]
fn ending_a_turn_interrupts_its_still_streaming_messages_and_happens_once() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "cancel");
    let turn = history.begin_turn(conversation).unwrap();
    let mut new = message(
        conversation,
        Some(turn.id),
        MessageRole::Assistant,
        "partial an",
    );
    new.status = MessageStatus::Streaming;
    let reply = history.add_message(&new).unwrap();

    let ended = history.end_turn(turn.id, TurnOutcome::Cancelled).unwrap();
    assert_eq!(ended.status, TurnStatus::Cancelled);
    assert!(ended.ended_at.is_some());
    let reply = history.get_message(reply.id).unwrap();
    assert_eq!(reply.status, MessageStatus::Interrupted);
    assert_eq!(reply.content, "partial an");

    let again = history.end_turn(turn.id, TurnOutcome::Done).unwrap_err();
    assert!(matches!(
        again,
        StoreError::TurnEnded {
            status: TurnStatus::Cancelled,
            ..
        }
    ));
}

#[test]
fn settings_round_trip_overwrite_and_delete() {
    let (_dir, _path, history) = temp_history();
    assert_eq!(history.get_setting::<String>("theme").unwrap(), None);
    history.set_setting("theme", "dark").unwrap();
    history.set_setting("theme", "light").unwrap();
    history
        .set_setting("limits", &serde_json::json!({ "memory_mb": 512 }))
        .unwrap();
    assert_eq!(
        history.get_setting::<String>("theme").unwrap().as_deref(),
        Some("light")
    );
    assert_eq!(
        history.get_setting::<serde_json::Value>("limits").unwrap(),
        Some(serde_json::json!({ "memory_mb": 512 }))
    );
    assert!(history.delete_setting("theme").unwrap());
    assert!(!history.delete_setting("theme").unwrap());
}

#[test]
fn a_full_conversation_nests_tool_calls_approvals_and_runs_in_order() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "full");
    let first = run_code_exchange(&history, conversation, "print(1)", "1");
    let second = run_code_exchange(&history, conversation, "print(2)", "2");

    let full = history.get_full_conversation(conversation).unwrap();
    assert_eq!(full.turns.len(), 2);
    let roles: Vec<_> = full.messages.iter().map(|m| m.message.role).collect();
    use MessageRole::{Assistant, Tool, User};
    assert_eq!(roles, vec![User, Assistant, Tool, User, Assistant, Tool]);
    let seqs: Vec<_> = full.messages.iter().map(|m| m.message.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));

    let runs: Vec<_> = full
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .flat_map(|c| &c.approvals)
        .map(|a| a.execution.clone().unwrap())
        .collect();
    assert_eq!(runs, vec![first, second]);
    assert!(full.standalone_approvals.is_empty());
}

#[test]
fn a_runs_recorded_files_come_back_by_run_and_go_with_their_conversation() {
    let (_dir, path, history) = temp_history();
    let conversation = new_conversation(&history, "plots");
    let other = new_conversation(&history, "other");
    let first = run_code_exchange(&history, conversation, "print(1)", "1");
    let second = run_code_exchange(&history, conversation, "print(2)", "2");
    let elsewhere = run_code_exchange(&history, other, "print(3)", "3");
    let plots = [
        "out/b.png".to_owned(),
        "a.png".to_owned(),
        "a.png".to_owned(),
    ];
    history.record_execution_files(first.id, &plots).unwrap();
    history
        .record_execution_files(elsewhere.id, &["x.png".to_owned()])
        .unwrap();
    drop(history);

    let (history, _) = History::open(&path).unwrap();
    let files = history.execution_files(conversation).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[&first.id], ["a.png", "out/b.png"]);
    assert!(!files.contains_key(&second.id));
    history.delete_conversation(other).unwrap();
    assert_eq!(count(&history, "SELECT count(*) FROM execution_files"), 2);
    assert!(history
        .record_execution_files(ironclaw_protocol::ExecutionId::new(), &plots)
        .is_err());
}

#[test]
fn runs_are_numbered_from_one_within_their_conversation() {
    let (_dir, path, history) = temp_history();
    let conversation = new_conversation(&history, "numbered");
    let other = new_conversation(&history, "interleaved");
    let first = run_code_exchange(&history, conversation, "print(1)", "1");
    let elsewhere = run_code_exchange(&history, other, "print(2)", "2");
    let second = run_code_exchange(&history, conversation, "print(3)", "3");
    assert_eq!((first.number, second.number, elsewhere.number), (1, 2, 1));
    drop(history);

    // The number is the same however the run is read back.
    let (history, _) = History::open(&path).unwrap();
    assert_eq!(history.get_execution(second.id).unwrap().number, 2);
    let full = history.get_full_conversation(conversation).unwrap();
    let numbers: Vec<_> = full
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .flat_map(|c| &c.approvals)
        .filter_map(|a| a.execution.as_ref().map(|x| x.number))
        .collect();
    assert_eq!(numbers, [1, 2]);
}
