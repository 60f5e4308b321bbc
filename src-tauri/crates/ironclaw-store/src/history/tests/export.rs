use pretty_assertions::assert_eq;

use super::*;
use crate::model::FullConversation;

#[test]
fn markdown_export_shows_messages_code_decisions_and_output() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "Sales report");
    run_code_exchange(&history, conversation, "print(sum([1, 2, 3]))", "6");

    let md = history.export_markdown(conversation).unwrap();
    assert!(md.starts_with("# Sales report\n"), "{md}");
    assert!(md.contains("please run it"), "{md}");
    assert!(md.contains("**Tool call** `run_code`"), "{md}");
    assert!(md.contains("```python\nprint(sum([1, 2, 3]))\n```"), "{md}");
    assert!(
        md.contains("**Decision:** approved (once) by user_dialog at "),
        "{md}"
    );
    assert!(md.contains("— looks fine"), "{md}");
    assert!(md.contains("**Run #1** · started"), "{md}");
    assert!(md.contains("exit code 0 · 42 ms"), "{md}");
    assert!(md.contains("stdout:\n\n```text\n6\n```"), "{md}");
}

#[test]
fn markdown_export_marks_denials_edits_and_interruptions() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "Edits");
    let approval = history
        .request_approval(&NewApproval {
            conversation_id: conversation,
            tool_call_id: None,
            language: Language::Shell,
            code: "rm -rf /".to_owned(),
            risk: RiskLevel::Destructive,
            reasons: vec!["deletes everything".to_owned()],
        })
        .unwrap();
    history
        .decide_approval(
            approval.id,
            &ApprovalDecision {
                verdict: Verdict::Deny,
                scope: DecisionScope::Once,
                decided_by: DecidedBy::Notification,
                reason: Some("absolutely not".to_owned()),
                edited_code: None,
            },
        )
        .unwrap();
    let mut new = message(conversation, None, MessageRole::Assistant, "half a th");
    new.status = MessageStatus::Streaming;
    let reply = history.add_message(&new).unwrap();
    history
        .interrupt_message(reply.id, "half a thought")
        .unwrap();

    let md = history.export_markdown(conversation).unwrap();
    assert!(md.contains("### Assistant (interrupted)"), "{md}");
    assert!(md.contains("half a thought"), "{md}");
    assert!(md.contains("risk destructive"), "{md}");
    assert!(md.contains("- deletes everything"), "{md}");
    assert!(md.contains("```shell\nrm -rf /\n```"), "{md}");
    assert!(
        md.contains("**Decision:** denied (once) by notification"),
        "{md}"
    );
}

#[test]
fn json_export_is_the_full_conversation_and_reads_back() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "JSON");
    run_code_exchange(&history, conversation, "print('json')", "json");

    let json = history.export_json(conversation).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let approval = &value["messages"][1]["toolCalls"][0]["approvals"][0];
    assert_eq!(approval["code"], "print('json')");
    assert_eq!(approval["status"], "approved");
    assert_eq!(approval["decidedBy"], "user_dialog");
    assert_eq!(approval["execution"]["stdout"]["head"], "json");

    let back: FullConversation = serde_json::from_str(&json).unwrap();
    assert_eq!(back, history.get_full_conversation(conversation).unwrap());
}
