use ironclaw_protocol::{ChangeKind, FileChange};

use super::*;

#[test]
fn a_runs_checkpoint_is_kept_with_it_and_follows_undo() {
    let (_dir, _path, history) = temp_history();
    let conversation = history
        .create_conversation("t", ApprovalPolicy::AskAlways)
        .unwrap()
        .id;
    let execution = run_code_exchange(&history, conversation, "open('out.csv','w')", "");
    assert_eq!(history.run_checkpoint(execution.id).unwrap(), None);
    let changes = vec![FileChange {
        path: "out.csv".into(),
        change: ChangeKind::Added,
    }];
    history
        .record_run_checkpoint(execution.id, "run-1", &changes)
        .unwrap();
    let kept = history.run_checkpoint(execution.id).unwrap().unwrap();
    assert_eq!(
        (kept.run_id.as_str(), &kept.changes, kept.undone),
        ("run-1", &changes, false)
    );
    assert_eq!(
        history.execution_of_run(conversation, "run-1").unwrap(),
        Some(execution.id)
    );
    history.set_run_undone(execution.id, true).unwrap();
    assert!(history.run_checkpoints(conversation).unwrap()[&execution.id].undone);
}
