//! The container's key: what makes the host channel the supervisor's alone.
//!
//! The supervisor's stdin and stdout are the engine's pipes. Under runc the supervisor is
//! non-dumpable, so code of the same UID cannot open them through `/proc/PID/fd`; gVisor
//! ignores dumpability there, and a process of the run could read the host's requests off the
//! supervisor's stdin, write requests of its own into it, and write frames into its stdout.
//! So every container gets a key of its own, made at create, kept in a label (the host reads
//! it back with inspect; nothing inside the container can) and handed to the supervisor on its
//! stdin by the process that starts it, before any request that runs code. From then on:
//!
//! - every request carries `HMAC(key, body)` and a per-connection counter; the supervisor
//!   obeys only requests that verify and are newer than that connection's last one;
//! - every frame on the supervisor's stdout is a signed frame (kind [`SIGNED`]) with a counter
//!   that only grows; the attach reader drops every other frame and any replayed one;
//! - a run's socket (`exec::channel`) is taken only from a connection that proves the key
//!   over the run's one-time token, so a token read off stdin opens nothing.
//!
//! Code that reaches the pipes can still read what the host sends (the code it was given to
//! run) and drop bytes: a run that then never ends is the timeout's, as with a killed
//! supervisor.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// A frame kind on stdout: `MAC(32) INNER_KIND(1) COUNTER(u64 BE) PAYLOAD`, the MAC taken over
/// `SEQ(u32 BE) INNER_KIND COUNTER PAYLOAD`.
pub const SIGNED: u8 = 4;
pub const MAC_LEN: usize = 32;
/// What a signed frame adds before the inner payload.
pub const SIGNED_OVERHEAD: usize = MAC_LEN + 1 + 8;
/// The label that holds a container's key.
pub const KEY_LABEL: &str = "ironclaw.key";
/// What the supervisor's channel proof is taken over, before the token.
const CHANNEL_CONTEXT: &[u8] = b"channel ";

/// A container's key.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}

impl Key {
    pub fn generate() -> Self {
        Self(rand::random())
    }

    pub fn from_hex(text: &str) -> Option<Self> {
        let bytes = hex::decode(text).ok()?;
        Some(Self(bytes.try_into().ok()?))
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes a key of any length; 32 bytes cannot be refused.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"))
    }

    /// A request line: `HEX(MAC(body)) SP body LF`.
    pub fn sign_line(&self, body: &[u8]) -> Vec<u8> {
        let mut mac = self.mac();
        mac.update(body);
        let tag = hex::encode(mac.finalize().into_bytes());
        let mut line = Vec::with_capacity(tag.len() + 2 + body.len());
        line.extend_from_slice(tag.as_bytes());
        line.push(b' ');
        line.extend_from_slice(body);
        line.push(b'\n');
        line
    }

    /// Checks a signed frame's payload; its inner kind, counter and payload when it verifies.
    pub fn open<'a>(&self, seq: u32, payload: &'a [u8]) -> Option<(u8, u64, &'a [u8])> {
        if payload.len() < SIGNED_OVERHEAD {
            return None;
        }
        let (tag, body) = payload.split_at(MAC_LEN);
        let mut mac = self.mac();
        mac.update(&seq.to_be_bytes());
        mac.update(body);
        mac.verify_slice(tag).ok()?;
        let kind = body[0];
        let counter = u64::from_be_bytes(body[1..9].try_into().ok()?);
        Some((kind, counter, &body[9..]))
    }

    /// Signs a frame as the supervisor does (tests and fuzzing).
    pub fn seal(&self, seq: u32, kind: u8, counter: u64, payload: &[u8]) -> Vec<u8> {
        let mut body = Vec::with_capacity(9 + payload.len());
        body.push(kind);
        body.extend_from_slice(&counter.to_be_bytes());
        body.extend_from_slice(payload);
        let mut mac = self.mac();
        mac.update(&seq.to_be_bytes());
        mac.update(&body);
        let mut out = mac.finalize().into_bytes().to_vec();
        out.extend_from_slice(&body);
        out
    }

    /// Whether `proof` (hex) is the supervisor's proof of the key over a channel `token`.
    pub fn proves_channel(&self, token: &str, proof: &str) -> bool {
        let Ok(tag) = hex::decode(proof) else {
            return false;
        };
        let mut mac = self.mac();
        mac.update(CHANNEL_CONTEXT);
        mac.update(token.as_bytes());
        mac.verify_slice(&tag).is_ok()
    }

    /// The proof a supervisor gives for `token` (tests).
    pub fn channel_proof(&self, token: &str) -> String {
        let mut mac = self.mac();
        mac.update(CHANNEL_CONTEXT);
        mac.update(token.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_sealed_frame_opens_only_with_its_key_and_its_seq() {
        let key = Key::generate();
        let sealed = key.seal(7, 3, 42, b"{\"type\":\"ended\"}");
        assert_eq!(
            key.open(7, &sealed),
            Some((3, 42, &b"{\"type\":\"ended\"}"[..]))
        );
        assert_eq!(key.open(8, &sealed), None, "moved to another run");
        assert_eq!(Key::generate().open(7, &sealed), None, "another key");
        let mut bent = sealed.clone();
        let last = bent.len() - 1;
        bent[last] ^= 1;
        assert_eq!(key.open(7, &bent), None, "a changed byte");
        assert_eq!(key.open(7, &sealed[..SIGNED_OVERHEAD - 1]), None);
    }

    #[test]
    fn a_channel_proof_needs_the_key_and_the_token() {
        let key = Key::generate();
        let proof = key.channel_proof("ab12");
        assert!(key.proves_channel("ab12", &proof));
        assert!(!key.proves_channel("ab13", &proof));
        assert!(!Key::generate().proves_channel("ab12", &proof));
        assert!(!key.proves_channel("ab12", "ab12"), "the token is no proof");
        assert!(!key.proves_channel("ab12", "not hex"));
    }

    #[test]
    fn the_key_survives_its_label_and_hides_in_logs() {
        let key = Key::generate();
        assert_eq!(Key::from_hex(&key.to_hex()), Some(key.clone()));
        assert_eq!(Key::from_hex("abcd"), None);
        assert!(!format!("{key:?}").contains(&key.to_hex()[..8]));
    }
}
