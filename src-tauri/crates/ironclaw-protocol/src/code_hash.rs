//! The fingerprint that ties an approval to exactly one piece of code.
//!
//! Typed everywhere inside IronClaw; 64 lowercase hex digits only at the edges (the wire, the
//! history, the audit log, the command line).

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::{ConversationId, Language};

/// SHA-256 over (conversation, language, exact code), length-prefixed and domain-separated so
/// no two different triples share a preimage.
///
/// The conversation is included so an approval (or an "always allow" rule) in one conversation
/// can never authorise anything in another. The language is included because the same text
/// means different things to different interpreters (`rm -rf ~` is a syntax error in Python but
/// destructive in a shell). No normalization: a single changed byte is different code and
/// needs a new approval.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub struct CodeHash([u8; 32]);

/// Text that is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a code hash (expected 64 hex digits, as shown in the approval)")]
pub struct ParseCodeHashError(pub String);

impl CodeHash {
    pub fn of(conversation: ConversationId, language: Language, code: &str) -> Self {
        Self(digest(&conversation.to_string(), language.as_str(), code))
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The first 12 hex digits: how a person refers to a hash (`/revoke 9629db871ece`).
    pub fn short(&self) -> String {
        hex::encode(&self.0[..6])
    }

    /// Whether a person's (possibly abbreviated, any-case) hex names this hash.
    pub fn starts_with(&self, prefix: &str) -> bool {
        let prefix = prefix.trim().to_ascii_lowercase();
        !prefix.is_empty() && self.to_hex().starts_with(&prefix)
    }
}

fn digest(session: &str, language: &str, code: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(b"ironclaw-approval-v1\0");
    for part in [session, language, code] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

impl FromStr for CodeHash {
    type Err = ParseCodeHashError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(s, &mut bytes).map_err(|_| ParseCodeHashError(s.to_owned()))?;
        Ok(Self(bytes))
    }
}

impl fmt::Display for CodeHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for CodeHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CodeHash({})", self.short())
    }
}

impl serde::Serialize for CodeHash {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for CodeHash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "sqlite")]
crate::sql_text!(CodeHash);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn one_changed_byte_changes_the_hash() {
        assert_ne!(
            digest("s", "python", "print(1)"),
            digest("s", "python", "print(1) ")
        );
    }

    #[test]
    fn the_same_code_in_another_language_or_conversation_hashes_differently() {
        let c = ConversationId::new();
        assert_ne!(
            CodeHash::of(c, Language::Python, "ls"),
            CodeHash::of(c, Language::Shell, "ls")
        );
        assert_ne!(
            CodeHash::of(c, Language::Python, "ls"),
            CodeHash::of(ConversationId::new(), Language::Python, "ls")
        );
    }

    #[test]
    fn moving_a_boundary_between_parts_changes_the_hash() {
        assert_ne!(digest("s1p", "ython", "x"), digest("s1", "python", "x"));
    }

    #[test]
    fn the_hash_is_pinned() {
        // Approvals and session rules stored by earlier builds must keep matching.
        // Computed independently (Python's hashlib) from the layout documented above.
        assert_eq!(
            hex::encode(digest("s", "python", "print(1)")),
            "9629db871ece4bb1f9941b369f7badaf0069545d0c0d232bd459a6d15bc566ab"
        );
    }

    #[test]
    fn hashes_cross_the_edges_as_hex_and_only_as_hex() {
        let hash = CodeHash::of(ConversationId::new(), Language::Shell, "ls");
        let json = serde_json::to_string(&hash).unwrap();
        assert_eq!(json, format!("\"{}\"", hash.to_hex()));
        assert_eq!(serde_json::from_str::<CodeHash>(&json).unwrap(), hash);
        assert_eq!(hash.to_hex().parse::<CodeHash>().unwrap(), hash);
        assert!("abc".parse::<CodeHash>().is_err());
        assert!(hash.starts_with(&hash.short().to_uppercase()));
        assert!(!hash.starts_with(""));
        assert_eq!(hash.short().len(), 12);
    }
}
