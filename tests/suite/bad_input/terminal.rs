//! Untrusted text from the history on the terminal: what the model and the code wrote may hold
//! escape sequences and Unicode direction overrides. `history show`, `ls` and `search` show them
//! inert; `history export` stays byte-exact (it is for files).

use ironclaw_protocol::ApprovalPolicy;
use ironclaw_store::{MessageRole, MessageStatus, NewMessage};
use ironclaw_tests::TestEnv;

use super::text;

const HOSTILE: &str = "clip\x1b]52;c;cm0gLXJmIH4=\x07 clear\x1b[2J\x1b[H bidi\u{202e}gnp.exe";

/// Input: a conversation whose title and messages hold OSC 52 (clipboard), screen clearing and
/// a right-to-left override. Expected: `history show`, `ls` and `search` print no ESC, BEL or
/// override character, but their visible `\u{..}` forms; `export` keeps the bytes.
#[tokio::test]
async fn history_views_show_escape_sequences_and_overrides_inert() {
    let env = TestEnv::new().await;
    let id = {
        let (history, _) = ironclaw_agent::state::open_history(&env.paths).expect("open");
        let c = history
            .create_conversation(&format!("title {HOSTILE}"), ApprovalPolicy::AskAlways)
            .expect("conversation");
        for role in [MessageRole::User, MessageRole::Assistant] {
            history
                .add_message(&NewMessage {
                    conversation_id: c.id,
                    turn_id: None,
                    role,
                    content: format!("needle {HOSTILE}"),
                    status: MessageStatus::Complete,
                    model: None,
                })
                .expect("message");
        }
        c.id.to_string()
    };
    for args in [
        vec!["history", "show", id.as_str()],
        vec!["history", "ls"],
        vec!["history", "search", "needle"],
    ] {
        let out = env.cli().args(&args).output().expect("ironclaw history");
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let shown = text(&out.stdout);
        for bad in ['\x1b', '\x07', '\u{202e}'] {
            assert!(
                !shown.contains(bad),
                "{args:?} printed {bad:?} raw:\n{shown}"
            );
        }
        // Shown as the marked code point (ironclaw-risk's `visible`), not dropped.
        assert!(shown.contains("⟨U+001B⟩"), "{args:?}: {shown}");
    }
    let out = env
        .cli()
        .args(["history", "export", id.as_str(), "--format", "md"])
        .output()
        .expect("export");
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains(HOSTILE),
        "export must be byte-exact"
    );
}
