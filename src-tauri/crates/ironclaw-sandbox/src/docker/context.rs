//! Reading the docker CLI's context store (`docker context create/use`), so a user who switched
//! contexts for their own shell gets the same engine in IronClaw.
//!
//! Layout (docker/cli `context/store`): a context named X lives under the SHA-256 hex of X, because
//! context names may contain characters that are not safe in file names.

use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::endpoint::{
    list_paths, parse_host, tcp_addr, Endpoint, EndpointKind, EndpointSource, ParsedHost, TlsFiles,
};
use crate::error::{Error, Result};

#[derive(Debug, Deserialize)]
struct ConfigFile {
    #[serde(rename = "currentContext", default)]
    current_context: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Meta {
    #[serde(rename = "Endpoints", default)]
    endpoints: MetaEndpoints,
}

#[derive(Debug, Default, Deserialize)]
struct MetaEndpoints {
    docker: Option<DockerEndpointMeta>,
}

#[derive(Debug, Deserialize)]
struct DockerEndpointMeta {
    #[serde(rename = "Host", default)]
    host: String,
    #[serde(rename = "SkipTLSVerify", default)]
    skip_tls_verify: bool,
}

pub(crate) fn context_id(name: &str) -> String {
    hex::encode(Sha256::digest(name.as_bytes()))
}

pub(crate) fn meta_path(config_dir: &Path, name: &str) -> PathBuf {
    config_dir
        .join("contexts")
        .join("meta")
        .join(context_id(name))
        .join("meta.json")
}

pub(crate) fn tls_dir(config_dir: &Path, name: &str) -> PathBuf {
    config_dir
        .join("contexts")
        .join("tls")
        .join(context_id(name))
        .join("docker")
}

/// The `currentContext` of `config.json`, if any. An unreadable or malformed config is logged and
/// ignored, which is what the docker CLI does too (it warns and carries on with the defaults).
pub(crate) fn current_context(config_dir: &Path) -> Option<String> {
    let path = config_dir.join("config.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read the docker CLI config; ignoring it");
            return None;
        }
    };
    let mut de = serde_json::Deserializer::from_str(&text);
    match serde_path_to_error::deserialize::<_, ConfigFile>(&mut de) {
        Ok(cfg) => cfg
            .current_context
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty()),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "malformed docker CLI config; ignoring it");
            None
        }
    }
}

/// Loads context `name` from the store under `config_dir`.
pub(crate) fn load(config_dir: &Path, name: &str) -> Result<Endpoint> {
    let ctx_err = |reason: String| Error::DockerContext {
        context: name.to_string(),
        reason,
    };
    let path = meta_path(config_dir, name);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        ctx_err(match e.kind() {
            io::ErrorKind::NotFound => format!(
                "no such context ({} does not exist); `docker context ls` lists the available ones",
                path.display()
            ),
            _ => format!("cannot read {}: {e}", path.display()),
        })
    })?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let meta: Meta = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        ctx_err(format!(
            "{} is malformed at `{}`: {}",
            path.display(),
            e.path(),
            e.inner()
        ))
    })?;
    let docker = meta
        .endpoints
        .docker
        .ok_or_else(|| ctx_err(format!("{} has no docker endpoint", path.display())))?;
    let host = docker.host.trim();
    if host.is_empty() {
        return Err(ctx_err(format!(
            "{} has an empty docker Host",
            path.display()
        )));
    }

    let kind = match parse_host(host).map_err(|e| e.into_error(host, Some(name)))? {
        ParsedHost::Unix(path) => EndpointKind::Unix(path),
        ParsedHost::Tcp {
            host: h,
            port,
            https,
        } => {
            let tls = context_tls(config_dir, name, docker.skip_tls_verify, https)?;
            EndpointKind::Tcp {
                addr: tcp_addr(&h, port, tls.is_some()),
                tls,
            }
        }
    };
    Ok(Endpoint {
        host: host.to_string(),
        kind,
        source: EndpointSource::Context(name.to_string()),
    })
}

fn context_tls(
    config_dir: &Path,
    name: &str,
    skip_verify: bool,
    https: bool,
) -> Result<Option<TlsFiles>> {
    let ctx_err = |reason: String| Error::DockerContext {
        context: name.to_string(),
        reason,
    };
    let dir = tls_dir(config_dir, name);
    if !dir.is_dir() {
        if skip_verify || https {
            // The docker CLI would speak unverified TLS here; we refuse rather than send the
            // agent's code to an engine we cannot authenticate.
            return Err(ctx_err(format!(
                "it asks for TLS but has no certificates in {}; IronClaw does not support \
                 SkipTLSVerify. Recreate it with `--docker host=...,ca=...,cert=...,key=...`",
                dir.display()
            )));
        }
        return Ok(None);
    }
    let files = TlsFiles::in_dir(&dir);
    let missing = files.missing();
    if !missing.is_empty() {
        return Err(ctx_err(format!(
            "its TLS material is incomplete: {} missing (IronClaw needs ca.pem, cert.pem and key.pem)",
            list_paths(&missing)
        )));
    }
    if skip_verify {
        tracing::warn!(
            context = name,
            "context sets SkipTLSVerify; IronClaw verifies the engine certificate anyway"
        );
    }
    Ok(Some(files))
}
