//! Settings' side of `mcp.yaml`: read the servers as written, add, change or remove one. Every
//! write is read back by the same strict parser first, so Settings cannot save a file the app
//! would then refuse; the file is replaced whole (written beside it, then renamed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{McpConfig, RawFile, RawServer, FILE_NAME};
use crate::error::{Error, Result};

const HEADER: &str = "\
# MCP servers. Each runs in its own sandbox container (no network, its packages read-only,
# the conversation's files only with `workspace: true`); every call of one of its tools is
# approved like code. Written by IronClaw's Settings; comments here are not kept.
";

/// The servers of `<dir>/mcp.yaml` as written (none without the file).
pub fn read(dir: &Path) -> Result<BTreeMap<String, RawServer>> {
    let file = dir.join(FILE_NAME);
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => return Err(Error::Read { file, source }),
    };
    McpConfig::parse(&text, &file)?;
    if text.trim().is_empty() {
        return Ok(BTreeMap::new());
    }
    let raw: RawFile = serde_yaml_ng::from_str(&text).map_err(|e| Error::Config {
        file: file.clone(),
        message: e.to_string(),
    })?;
    Ok(raw.servers)
}

/// Adds `name`, or replaces it.
pub fn save(dir: &Path, name: &str, server: RawServer) -> Result<McpConfig> {
    let mut servers = read(dir)?;
    servers.insert(name.to_string(), server);
    write(dir, servers)
}

/// Removes `name` (nothing to remove is not an error).
pub fn remove(dir: &Path, name: &str) -> Result<McpConfig> {
    let mut servers = read(dir)?;
    servers.remove(name);
    write(dir, servers)
}

fn write(dir: &Path, servers: BTreeMap<String, RawServer>) -> Result<McpConfig> {
    let file = dir.join(FILE_NAME);
    let body = serde_yaml_ng::to_string(&RawFile { servers }).map_err(|e| Error::Config {
        file: file.clone(),
        message: e.to_string(),
    })?;
    let text = format!("{HEADER}{body}");
    let parsed = McpConfig::parse(&text, &file)?;
    let io = |source| Error::Read {
        file: file.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let tmp: PathBuf = dir.join(format!(".{FILE_NAME}.new"));
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, &file).map_err(io)?;
    Ok(parsed)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn server(command: &[&str]) -> RawServer {
        RawServer {
            command: command.iter().map(|s| s.to_string()).collect(),
            packages: Some("~/mcp/time".into()),
            ..RawServer::default()
        }
    }

    #[test]
    fn servers_are_added_changed_and_removed_and_the_file_stays_valid() {
        let dir = tempfile::tempdir().unwrap();
        save(
            dir.path(),
            "time",
            server(&["python3", "-m", "mcp_server_time"]),
        )
        .unwrap();
        let mut off = server(&["node", "index.js"]);
        off.enabled = false;
        let config = save(dir.path(), "fs", off).unwrap();
        assert_eq!(config.servers.len(), 2);
        assert_eq!(config.enabled().count(), 1);
        let back = read(dir.path()).unwrap();
        assert_eq!(back["time"].command[2], "mcp_server_time");
        assert!(!back["fs"].enabled);
        let config = remove(dir.path(), "fs").unwrap();
        assert_eq!(config.servers.len(), 1);
        let text = std::fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(text.starts_with("# MCP servers."), "{text}");
    }

    #[test]
    fn an_entry_the_app_would_refuse_is_not_saved() {
        let dir = tempfile::tempdir().unwrap();
        save(dir.path(), "time", server(&["python3"])).unwrap();
        assert!(save(dir.path(), "Bad Name", server(&["x"])).is_err());
        assert!(save(dir.path(), "empty", server(&[])).is_err());
        assert_eq!(read(dir.path()).unwrap().len(), 1);
    }
}
