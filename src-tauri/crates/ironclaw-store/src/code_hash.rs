//! The fingerprint that ties an approval to exactly one piece of code.

use sha2::{Digest, Sha256};

/// Hex SHA-256 over (session, language, code), byte for byte, length-prefixed and
/// domain-separated so no two different triples share a preimage.
///
/// The session is included so an approval (or an "always allow" rule) in one conversation can
/// never authorise anything in another. The language is included because the same text means
/// different things to different interpreters (`rm -rf ~` is a syntax error in Python but
/// destructive in a shell). No normalization: a single changed byte is different code and
/// needs a new approval.
pub fn code_hash(session: &str, language: &str, code: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"ironclaw-approval-v1\0");
    for part in [session, language, code] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_byte_changes_the_hash() {
        assert_ne!(
            code_hash("s", "python", "print(1)"),
            code_hash("s", "python", "print(1) ")
        );
    }

    #[test]
    fn the_same_code_in_another_language_or_session_hashes_differently() {
        assert_ne!(code_hash("s", "python", "ls"), code_hash("s", "bash", "ls"));
        assert_ne!(
            code_hash("s1", "python", "ls"),
            code_hash("s2", "python", "ls")
        );
    }

    #[test]
    fn moving_a_boundary_between_parts_changes_the_hash() {
        assert_ne!(
            code_hash("s1p", "ython", "x"),
            code_hash("s1", "python", "x")
        );
    }

    #[test]
    fn the_hash_is_pinned() {
        // Approvals and session rules stored by earlier builds must keep matching.
        // Computed independently (Python's hashlib) from the layout documented above.
        assert_eq!(
            code_hash("s", "python", "print(1)"),
            "9629db871ece4bb1f9941b369f7badaf0069545d0c0d232bd459a6d15bc566ab"
        );
    }
}
