//! The `network:` section of the policy: the allowlist and package-index settings.

use serde::Deserialize;

use super::source::Origins;
use super::NetworkPolicy;
use crate::allowlist::Rule;
use crate::error::Result;

#[derive(Deserialize, Default)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping of allowlist, pip_index_url and npm_registry"
)]
pub(super) struct RawNetwork {
    #[serde(default)]
    allowlist: Option<Vec<String>>,
    #[serde(default)]
    pip_index_url: Option<String>,
    #[serde(default)]
    npm_registry: Option<String>,
}

impl RawNetwork {
    pub(super) fn into_policy(self, origins: &Origins<'_>) -> Result<NetworkPolicy> {
        let allowlist = self
            .allowlist
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                entry.parse::<Rule>().map_err(|message| {
                    origins.error(
                        &["network".into(), "allowlist".into(), i.to_string()],
                        message,
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let url = |field: &str, value: Option<String>| -> Result<Option<String>> {
            match value.as_deref().map(str::trim) {
                None | Some("") => Ok(None),
                Some(v)
                    if (v.starts_with("http://") || v.starts_with("https://"))
                        && !v.contains(char::is_whitespace) =>
                {
                    Ok(Some(v.to_string()))
                }
                Some(v) => Err(origins.error(
                    &["network".into(), field.into()],
                    format!("{v:?} is not an http:// or https:// URL"),
                )),
            }
        };
        Ok(NetworkPolicy {
            allowlist,
            pip_index_url: url("pip_index_url", self.pip_index_url)?,
            npm_registry: url("npm_registry", self.npm_registry)?,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::Path;

    use super::super::{NetworkMode, Policy, DEFAULT_POLICY_YAML};
    use crate::error::Result;

    fn with_user(yaml: &str) -> Result<Policy> {
        Policy::parse(
            (DEFAULT_POLICY_YAML, Path::new("defaults.yaml")),
            Some((yaml, Path::new("user.yaml"))),
        )
    }

    #[test]
    fn shipped_allowlist_is_empty_and_every_profile_has_no_network() {
        let policy = Policy::parse((DEFAULT_POLICY_YAML, Path::new("d.yaml")), None).unwrap();
        assert!(policy.network.allowlist.is_empty());
        assert_eq!(policy.network.pip_index_url, None);
        for (name, profile) in &policy.profiles {
            assert_eq!(profile.network, NetworkMode::None, "{name}");
        }
    }

    #[test]
    fn a_profile_can_choose_allowlist_and_the_user_list_replaces_the_empty_one() {
        let policy = with_user(
            "network:\n  allowlist: [pkg.example.internal, '*.mirror.example.internal:8443']\n  \
             pip_index_url: https://pkg.example.internal/simple\nprofiles:\n  trusted: { network: allowlist }\n",
        )
        .unwrap();
        let rules: Vec<String> = policy
            .network
            .allowlist
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            rules,
            ["pkg.example.internal", "*.mirror.example.internal:8443"]
        );
        assert_eq!(
            policy.network.pip_index_url.as_deref(),
            Some("https://pkg.example.internal/simple")
        );
        assert_eq!(policy.profiles["trusted"].network, NetworkMode::Allowlist);
        assert_eq!(policy.profiles["standard"].network, NetworkMode::None);
    }

    #[test]
    fn a_bad_allowlist_entry_names_the_user_file_and_its_index() {
        let e = with_user(
            "network:\n  allowlist: [ok.example.internal, 'https://x.example.internal/']\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("user.yaml: network.allowlist.1: "), "{e}");
        assert!(e.contains("write only the host"), "{e}");
    }

    #[test]
    fn package_index_settings_must_be_http_urls() {
        let e = with_user("network: { npm_registry: 'ftp://x' }\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("user.yaml: network.npm_registry: "), "{e}");
    }

    #[test]
    fn unknown_network_modes_and_keys_are_rejected() {
        let e = with_user("profiles:\n  standard: { network: bridge }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("none") && e.contains("allowlist"), "{e}");
        let e = with_user("network: { proxy_port: 1 }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("proxy_port"), "{e}");
    }
}
