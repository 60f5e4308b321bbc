//! First run / doctor: is Docker there and usable, is the sandbox image built, is a model set
//! up. Each failure carries the fix a person can act on. Docker failures come classified by
//! `ironclaw_sandbox::docker` (not installed / not running / no permission / other).

use std::time::Duration;

use ironclaw_sandbox::{docker, image};
use serde::Serialize;

use crate::error::{DesktopError, Result};
use crate::settings::SettingsStore;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum DockerState {
    Ok,
    NotInstalled,
    NotRunning,
    NoPermission,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DockerCheck {
    pub state: DockerState,
    /// What was found, e.g. "Docker 20.10.24 (API 1.41) at unix:///var/run/docker.sock".
    pub message: String,
    /// What to do about it; `null` when all is well.
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ImageState {
    Ready,
    Missing,
    /// Docker is not usable, so the image could not be checked.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ImageCheck {
    pub state: ImageState,
    pub tag: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelCheck {
    /// A provider is saved in Settings (otherwise the environment or a local Ollama is used).
    pub configured: bool,
    /// An Ollama answers on this machine; these are its models.
    pub ollama_models: Vec<String>,
    /// Whether keys can be saved in the OS keyring here, and if not why.
    pub keyring_available: bool,
    pub keyring_message: String,
}

/// Which wall stands between the code and this computer: gVisor (a second kernel) or runc.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WallCheck {
    /// New sandboxes run under gVisor.
    pub gvisor: bool,
    /// Nothing can start: the profile requires gVisor and the engine lacks it.
    pub blocked: bool,
    /// One sentence, e.g. "new sandboxes run under gVisor: a second kernel …".
    pub summary: String,
    /// What to do; `null` when nothing needs doing.
    pub fix: Option<String>,
}

impl WallCheck {
    fn from_engine(paths: &ironclaw_sandbox::Paths, engine_has_gvisor: bool) -> Self {
        use ironclaw_sandbox::policy::{wall, Policy, Runtime};
        let wanted = Policy::load(paths)
            .ok()
            .and_then(|p| p.profile(None).ok().map(|(_, profile)| profile.runtime))
            .unwrap_or(Runtime::Auto);
        let w = wall::wall_for(wanted, engine_has_gvisor);
        Self {
            gvisor: w.runtime == Some(Runtime::Runsc),
            blocked: w.runtime.is_none(),
            summary: w.summary,
            fix: w.fix,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DoctorReport {
    pub docker: DockerCheck,
    pub image: ImageCheck,
    /// `null` until Docker answers.
    pub wall: Option<WallCheck>,
    pub model: ModelCheck,
    pub data_dir: String,
    /// Docker and the image are ready: code can run.
    pub ready: bool,
}

/// One step of preparing the sandbox image, for the progress bar. `fraction` is 0–1 when the
/// step knows how far it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ImageProgress {
    /// `base`, `pull`, `debootstrap`, `import`, `build`, `export`, `load`, or `done`.
    pub phase: String,
    pub message: String,
    pub fraction: Option<f64>,
    pub done: bool,
}

/// The fix for each kind of Docker failure, shown under the status.
pub fn docker_fix(state: DockerState) -> Option<&'static str> {
    match state {
        DockerState::Ok => None,
        DockerState::NotInstalled => Some(
            "Install Docker: `sudo apt-get install docker.io` on Debian/Ubuntu (or Docker Desktop / Podman elsewhere), then press Check again.",
        ),
        DockerState::NotRunning => Some(
            "Start Docker: `sudo systemctl start docker` (or `sudo dockerd &` where there is no systemd), then press Check again.",
        ),
        DockerState::NoPermission => Some(
            "Let your user use Docker: `sudo usermod -aG docker $USER`, then log out and back in.",
        ),
        DockerState::Error => Some(
            "Check DOCKER_HOST and `docker context ls`; `docker info` in a terminal shows what is wrong.",
        ),
    }
}

pub fn docker_state(err: &ironclaw_sandbox::Error) -> DockerState {
    use ironclaw_sandbox::Error as E;
    match err {
        E::DockerNotInstalled { .. } => DockerState::NotInstalled,
        E::DockerNotRunning { .. } => DockerState::NotRunning,
        E::DockerPermissionDenied { .. } => DockerState::NoPermission,
        _ => DockerState::Error,
    }
}

/// What was found, without the fix: the screen shows the fix under it, so the error's own
/// "start it: …" would say it twice.
fn docker_finding(err: &ironclaw_sandbox::Error) -> String {
    use ironclaw_sandbox::Error as E;
    match err {
        E::DockerNotInstalled { endpoint } => {
            format!("No Docker engine was found: nothing is at {endpoint}.")
        }
        E::DockerNotRunning { endpoint } => {
            format!("Docker is installed, but nothing answers at {endpoint}.")
        }
        E::DockerPermissionDenied { endpoint } => {
            format!("Your user may not use the Docker socket {endpoint}.")
        }
        other => other.to_string(),
    }
}

pub(crate) async fn run(
    settings: &SettingsStore,
    paths: &ironclaw_sandbox::Paths,
    data_dir: String,
) -> DoctorReport {
    let spec = image::spec();
    let mut wall = None;
    let (docker, image) = match docker::connect().await {
        Ok(engine) => {
            wall = Some(WallCheck::from_engine(paths, engine.has_runtime("runsc")));
            let docker_check = DockerCheck {
                state: DockerState::Ok,
                message: format!(
                    "{} {} answers at {} (API {}).",
                    if engine.is_podman { "Podman" } else { "Docker" },
                    engine.server_version,
                    engine.endpoint.host,
                    engine.api_version,
                ),
                fix: None,
            };
            let image_check = match image::exists(&engine.docker, &spec.tag).await {
                Ok(true) => ImageCheck {
                    state: ImageState::Ready,
                    tag: spec.tag.clone(),
                    message: "The sandbox image is ready.".into(),
                },
                Ok(false) => ImageCheck {
                    state: ImageState::Missing,
                    tag: spec.tag.clone(),
                    message: "The sandbox image is not built yet. Press “Prepare sandbox image”: it is built on this computer (offline from Debian packages when no registry answers) and takes a minute or two.".into(),
                },
                Err(e) => ImageCheck {
                    state: ImageState::Unknown,
                    tag: spec.tag.clone(),
                    message: e.to_string(),
                },
            };
            (docker_check, image_check)
        }
        Err(e) => {
            let state = docker_state(&e);
            (
                DockerCheck {
                    state,
                    message: docker_finding(&e),
                    fix: docker_fix(state).map(str::to_owned),
                },
                ImageCheck {
                    state: ImageState::Unknown,
                    tag: spec.tag.clone(),
                    message: "The image can be checked once Docker answers.".into(),
                },
            )
        }
    };
    let ready = docker.state == DockerState::Ok
        && image.state == ImageState::Ready
        && !wall.as_ref().is_some_and(|w| w.blocked);
    // A missing Ollama must not slow the first screen down.
    let ollama_models = match tokio::time::timeout(
        Duration::from_millis(1500),
        ironclaw_llm::detect_ollama(None),
    )
    .await
    {
        Ok(Ok(models)) => models,
        _ => Vec::new(),
    };
    let (keyring_available, keyring_message) = crate::settings::keyring_status();
    DoctorReport {
        docker,
        image,
        wall,
        model: ModelCheck {
            configured: settings.provider_config().ok().flatten().is_some(),
            ollama_models,
            keyring_available,
            keyring_message,
        },
        data_dir,
        ready,
    }
}

impl From<&image::Progress> for ImageProgress {
    fn from(p: &image::Progress) -> Self {
        let step = |phase: &str, message: String, fraction: Option<f64>| ImageProgress {
            phase: phase.to_owned(),
            message,
            fraction,
            done: false,
        };
        let ratio = |done: u64, total: Option<u64>| {
            total
                .filter(|t| *t > 0)
                .map(|t| (done as f64 / t as f64).clamp(0.0, 1.0))
        };
        match p {
            image::Progress::Phase { name, message } => step(name, message.clone(), None),
            image::Progress::Layer {
                id,
                status,
                current,
                total,
            } => step(
                "layer",
                format!("Layer {id}: {status}"),
                current.and_then(|c| ratio(c, *total)),
            ),
            image::Progress::Bytes { done, total } => step(
                "bytes",
                match total {
                    Some(t) if *t > 0 => {
                        format!("{} MB of {} MB", done / 1_000_000, t / 1_000_000)
                    }
                    _ => format!("{} MB so far", done / 1_000_000),
                },
                ratio(*done, *total),
            ),
            image::Progress::Log { line } => step("log", line.clone(), None),
            image::Progress::Done { tag } => ImageProgress {
                phase: "done".into(),
                message: format!("The sandbox image {tag} is ready."),
                fraction: Some(1.0),
                done: true,
            },
        }
    }
}

/// Builds (or finds) the sandbox image, reporting each step.
pub(crate) async fn prepare_image(
    progress: &mut (dyn FnMut(ImageProgress) + Send),
) -> Result<String> {
    let engine = docker::connect().await?;
    let mut forward = |p: image::Progress| progress(ImageProgress::from(&p));
    let spec = image::ensure(&engine.docker, &Default::default(), &mut forward)
        .await
        .map_err(DesktopError::from)?;
    Ok(spec.tag)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn image_progress_reads_as_sentences() {
        let bytes =
            |done, total| ImageProgress::from(&image::Progress::Bytes { done, total }).message;
        assert_eq!(bytes(12_000_000, Some(40_000_000)), "12 MB of 40 MB");
        assert_eq!(bytes(3_000_000, None), "3 MB so far");
        let done = ImageProgress::from(&image::Progress::Done {
            tag: "ironclaw-sandbox:abc".into(),
        });
        assert!(done.done);
        assert_eq!(
            done.message,
            "The sandbox image ironclaw-sandbox:abc is ready."
        );
    }

    #[test]
    fn what_docker_failed_with_is_said_once_the_fix_is_left_to_the_fix_line() {
        use ironclaw_sandbox::Error as E;
        let endpoint = || "unix:///run/x.sock".to_string();
        for err in [
            E::DockerNotInstalled {
                endpoint: endpoint(),
            },
            E::DockerNotRunning {
                endpoint: endpoint(),
            },
            E::DockerPermissionDenied {
                endpoint: endpoint(),
            },
        ] {
            let found = docker_finding(&err);
            assert!(found.contains("unix:///run/x.sock"), "{found}");
            assert!(!found.contains("sudo") && !found.contains('`'), "{found}");
            assert!(docker_fix(docker_state(&err)).is_some_and(|f| f.contains("sudo")));
        }
    }

    #[test]
    fn every_docker_failure_has_a_fix_and_success_has_none() {
        for state in [
            DockerState::NotInstalled,
            DockerState::NotRunning,
            DockerState::NoPermission,
            DockerState::Error,
        ] {
            assert!(
                docker_fix(state).is_some_and(|f| !f.is_empty()),
                "{state:?}"
            );
        }
        assert_eq!(docker_fix(DockerState::Ok), None);
    }

    #[test]
    fn sandbox_errors_map_to_the_doctor_states() {
        let e = ironclaw_sandbox::Error::DockerPermissionDenied {
            endpoint: "unix:///var/run/docker.sock".into(),
        };
        assert_eq!(docker_state(&e), DockerState::NoPermission);
        let e = ironclaw_sandbox::Error::DockerNotRunning {
            endpoint: "x".into(),
        };
        assert_eq!(docker_state(&e), DockerState::NotRunning);
    }

    #[test]
    fn byte_progress_becomes_a_fraction() {
        let p = ImageProgress::from(&image::Progress::Bytes {
            done: 50,
            total: Some(200),
        });
        assert_eq!(p.fraction, Some(0.25));
        let p = ImageProgress::from(&image::Progress::Done { tag: "t".into() });
        assert!(p.done);
    }
}
