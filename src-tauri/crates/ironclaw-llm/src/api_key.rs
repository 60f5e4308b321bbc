//! API keys: a newtype that cannot leak through logs, errors or serialization.
//!
//! There is deliberately no `Serialize`: settings files name the env var or the keyring entry,
//! never the key.

use std::fmt;

use crate::error::{Error, Result};

/// The keyring service under which IronClaw stores provider keys (account = provider id).
pub const KEYRING_SERVICE: &str = "ironclaw";

#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Accepts a pasted key, trimming the whitespace that copying tends to add.
    pub fn new(key: impl Into<String>) -> Result<Self> {
        let key = key.into();
        let key = key.trim();
        if key.is_empty() {
            return Err(Error::InvalidApiKey {
                reason: "it is empty".into(),
            });
        }
        // Header values must be visible ASCII; anything else would fail on every request.
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::InvalidApiKey {
                reason: "it contains spaces, line breaks or non-ASCII characters".into(),
            });
        }
        Ok(ApiKey(key.to_string()))
    }

    /// The key itself, for building the one request header that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Reads the key from an environment variable; unset or empty means "no key".
    pub fn from_env(var: &str) -> Result<Option<Self>> {
        match std::env::var(var) {
            Ok(value) if value.trim().is_empty() => Ok(None),
            Ok(value) => ApiKey::new(value).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(Error::InvalidApiKey {
                reason: format!("{var} is not valid UTF-8"),
            }),
        }
    }

    /// Reads the key saved for `account` (a provider id) in the OS keyring. A missing entry is
    /// `Ok(None)`; a keyring that cannot be used is an error saying so.
    pub fn from_keyring(account: &str) -> Result<Option<Self>> {
        keyring_secret(account)?.map(ApiKey::new).transpose()
    }

    /// Saves the key for `account` in the OS keyring (Settings uses this).
    pub fn save_to_keyring(&self, account: &str) -> Result<()> {
        save_keyring_secret(account, &self.0)
    }

    /// `sk-…abcd`: enough to tell two keys apart, too little to use one.
    pub fn redacted(&self) -> String {
        let prefix = match self.0.find('-') {
            Some(dash) if dash <= 3 => &self.0[..=dash],
            _ => "",
        };
        // Short keys show no tail: four characters of a ten-character key is too much.
        let tail = if self.0.len() >= 16 {
            &self.0[self.0.len() - 4..]
        } else {
            ""
        };
        format!("{prefix}…{tail}")
    }
}

/// The text kept for `account` under IronClaw's keyring service ([`KEYRING_SERVICE`]): provider
/// keys, and the audit log's anchor. A missing entry is `Ok(None)`; a keyring that cannot be
/// used is an error saying so.
pub fn keyring_secret(account: &str) -> Result<Option<String>> {
    match keyring_entry(account)?.get_password() {
        Ok(secret) => Ok(Some(secret)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(err) => Err(keyring_error(&err)),
    }
}

/// Replaces the text kept for `account` under IronClaw's keyring service.
pub fn save_keyring_secret(account: &str, secret: &str) -> Result<()> {
    keyring_entry(account)?
        .set_password(secret)
        .map_err(|err| keyring_error(&err))
}

/// Removes the text kept for `account`; an entry that is not there is not an error.
pub fn delete_keyring_secret(account: &str) -> Result<()> {
    match keyring_entry(account)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(err) => Err(keyring_error(&err)),
    }
}

fn keyring_entry(account: &str) -> Result<keyring::Entry> {
    keyring::Entry::new(KEYRING_SERVICE, account).map_err(|err| keyring_error(&err))
}

fn keyring_error(err: &keyring::Error) -> Error {
    Error::Keyring {
        reason: err.to_string(),
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({})", self.redacted())
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const SECRET: &str = "sk-proj-4f9c2a7e1b3d8f6a0c5e9b2d7a1f3c8eWXYZ";

    #[test]
    fn debug_and_display_never_show_the_key() -> Result<()> {
        let key = ApiKey::new(SECRET)?;
        let shown = [
            format!("{key:?}"),
            format!("{key}"),
            format!("{:?}", Some(&key)),
        ];
        for text in &shown {
            assert!(!text.contains("4f9c2a7e"), "{text}");
            assert!(!text.contains(SECRET), "{text}");
        }
        assert_eq!(shown[1], "sk-…WXYZ");
        Ok(())
    }

    #[test]
    fn short_keys_show_no_tail() -> Result<()> {
        assert_eq!(ApiKey::new("abcdefgh")?.to_string(), "…");
        Ok(())
    }

    #[test]
    fn pasted_whitespace_is_trimmed_but_inner_line_breaks_are_rejected() -> Result<()> {
        assert_eq!(ApiKey::new("  sk-abc\n")?.expose(), "sk-abc");
        assert!(matches!(
            ApiKey::new("sk-a\nb"),
            Err(Error::InvalidApiKey { .. })
        ));
        assert!(matches!(
            ApiKey::new("   "),
            Err(Error::InvalidApiKey { .. })
        ));
        Ok(())
    }

    #[test]
    fn unset_env_var_means_no_key() -> Result<()> {
        assert_eq!(
            ApiKey::from_env("IRONCLAW_TEST_SURELY_UNSET_VARIABLE")?,
            None
        );
        Ok(())
    }

    #[test]
    fn missing_keyring_entry_is_no_key_or_a_clear_error_never_a_panic() {
        // Whether the kernel keyring is usable depends on the machine (containers often forbid
        // it); both outcomes are fine, a panic is not.
        let account = format!("ironclaw-test-{}", std::process::id());
        match ApiKey::from_keyring(&account) {
            Ok(found) => assert_eq!(found, None),
            Err(err) => assert!(matches!(err, Error::Keyring { .. }), "{err}"),
        }
    }
}
