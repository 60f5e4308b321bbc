//! Tool-call ids across providers. A conversation can switch models, so the transcript sent to
//! one provider holds ids another one made, and each provider has rules: Anthropic takes
//! `[A-Za-z0-9_-]{1,64}` (`toolu_…`), OpenAI at most 40 characters (`call_…`), and some
//! OpenAI-compatible servers make ids neither would take. An id that fits is sent unchanged; one
//! that does not becomes `call_` and a digest of it, the same for the call and its result, so
//! they still pair up.

use std::borrow::Cow;

/// An id Anthropic's API accepts.
pub(crate) fn for_anthropic(id: &str) -> Cow<'_, str> {
    let fits = (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if fits {
        Cow::Borrowed(id)
    } else {
        Cow::Owned(digest(id))
    }
}

/// An id OpenAI's API (and the servers that follow it) accepts.
pub(crate) fn for_openai(id: &str) -> Cow<'_, str> {
    let fits = (1..=40).contains(&id.len()) && !id.bytes().any(|b| b.is_ascii_control());
    if fits {
        Cow::Borrowed(id)
    } else {
        Cow::Owned(digest(id))
    }
}

/// 64-bit FNV-1a: stable across runs and builds, which is all pairing needs.
fn digest(id: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("call_{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_fit_pass_and_others_become_the_same_digest_every_time() {
        assert_eq!(for_anthropic("toolu_01AbC-d"), "toolu_01AbC-d");
        assert_eq!(for_openai("toolu_01AbC-d"), "toolu_01AbC-d");
        let odd = "call:7/run python.1";
        assert_eq!(for_anthropic(odd), for_anthropic(odd));
        assert!(for_anthropic(odd).starts_with("call_"));
        assert_eq!(for_openai(odd), odd, "OpenAI takes any short printable id");
        let long = "x".repeat(41);
        assert_eq!(for_openai(&long).len(), 21);
        assert_ne!(for_anthropic("a.b"), for_anthropic("a,b"));
        assert!(for_anthropic("").starts_with("call_"));
    }
}
