//! What an allowlist-mode sandbox is created with: the egress network and proxy settings.

/// What a sandbox container in allowlist mode is created with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub network: String,
    pub network_id: String,
    /// `http://<relay>:3128`, fixed for the life of the network.
    pub proxy_url: String,
    pub pip_index_url: Option<String>,
    pub npm_registry: Option<String>,
}

impl Attachment {
    /// Proxy settings in every spelling the usual tools read. The supervisor passes these on to
    /// the interpreters (it strips only `IRONCLAW_*`).
    pub fn env(&self) -> Vec<String> {
        let url = &self.proxy_url;
        let mut env = vec![
            format!("HTTP_PROXY={url}"),
            format!("HTTPS_PROXY={url}"),
            format!("http_proxy={url}"),
            format!("https_proxy={url}"),
            // Only the sandbox itself is reached directly; nothing else is reachable anyway.
            "NO_PROXY=localhost,127.0.0.1,::1".to_string(),
            "no_proxy=localhost,127.0.0.1,::1".to_string(),
            format!("npm_config_proxy={url}"),
            format!("npm_config_https_proxy={url}"),
            "GIT_CONFIG_COUNT=1".to_string(),
            "GIT_CONFIG_KEY_0=http.proxy".to_string(),
            format!("GIT_CONFIG_VALUE_0={url}"),
        ];
        if let Some(index) = &self.pip_index_url {
            env.push(format!("PIP_INDEX_URL={index}"));
        }
        if let Some(registry) = &self.npm_registry {
            env.push(format!("npm_config_registry={registry}"));
        }
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_settings_appear_only_when_configured() {
        let mut a = Attachment {
            network: "n".into(),
            network_id: "id".into(),
            proxy_url: "http://192.168.64.2:3128".into(),
            pip_index_url: None,
            npm_registry: None,
        };
        let env = a.env();
        assert!(env.contains(&"GIT_CONFIG_VALUE_0=http://192.168.64.2:3128".to_string()));
        assert!(!env
            .iter()
            .any(|e| e.starts_with("PIP_INDEX_URL") || e.starts_with("npm_config_registry")));
        a.pip_index_url = Some("https://pkg.example.internal/simple".into());
        a.npm_registry = Some("https://npm.example.internal/".into());
        let env = a.env();
        assert!(env.contains(&"PIP_INDEX_URL=https://pkg.example.internal/simple".to_string()));
        assert!(env.contains(&"npm_config_registry=https://npm.example.internal/".to_string()));
    }
}
