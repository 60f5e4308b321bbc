//! Where IronClaw keeps things on the host. `directories` gives the platform locations;
//! `IRONCLAW_DATA_DIR` / `IRONCLAW_CONFIG_DIR` override them (tests and portable installs use these).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct Paths {
    pub data_dir: PathBuf,
    pub config_dir: PathBuf,
}

impl Paths {
    pub fn from_env() -> Result<Self> {
        let dirs = directories::ProjectDirs::from("dev", "IronClaw", "ironclaw");
        let pick = |var: &str, fallback: Option<PathBuf>| -> Result<PathBuf> {
            match std::env::var_os(var) {
                Some(v) if !v.is_empty() => Ok(PathBuf::from(v)),
                _ => fallback.ok_or_else(|| Error::Config {
                    file: PathBuf::from("(environment)"),
                    field: var.to_string(),
                    message: "no home directory found; set this variable to a writable folder"
                        .into(),
                }),
            }
        };
        Ok(Self {
            data_dir: pick(
                "IRONCLAW_DATA_DIR",
                dirs.as_ref().map(|d| d.data_dir().to_path_buf()),
            )?,
            config_dir: pick(
                "IRONCLAW_CONFIG_DIR",
                dirs.as_ref().map(|d| d.config_dir().to_path_buf()),
            )?,
        })
    }

    pub fn at(data_dir: impl Into<PathBuf>, config_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            config_dir: config_dir.into(),
        }
    }

    pub fn workspaces_dir(&self) -> PathBuf {
        self.data_dir.join("workspaces")
    }

    /// Where each session's checkpoint record lives: in the data folder, never mounted into a
    /// container.
    pub fn checkpoints_dir(&self) -> PathBuf {
        self.data_dir.join("checkpoints")
    }

    /// Each container's folder of output sockets (see `exec::channel`): in the data folder, so
    /// only this user's IronClaw listens there.
    pub fn channels_dir(&self) -> PathBuf {
        self.data_dir.join("channels")
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.data_dir.join("sessions")
    }

    /// What the last command learned about the container engine (see `docker::known`).
    pub fn engine_cache_file(&self) -> PathBuf {
        self.data_dir.join("engine.json")
    }

    /// The user's policy override: `<config dir>/sandbox.yaml`.
    pub fn user_policy_file(&self) -> PathBuf {
        self.config_dir.join("sandbox.yaml")
    }

    /// A short, stable id for this data directory. Containers carry it as a label so two
    /// IronClaw installs (or parallel test runs) sharing one Docker engine never touch each
    /// other's containers when cleaning up orphans.
    pub fn instance_id(&self) -> String {
        let canonical =
            std::fs::canonicalize(&self.data_dir).unwrap_or_else(|_| self.data_dir.clone());
        instance_id_for(&canonical)
    }
}

fn instance_id_for(path: &Path) -> String {
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    hex::encode(&digest[..6])
}

pub(crate) fn ensure_dir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|e| Error::io("cannot create folder", path, e))
}
