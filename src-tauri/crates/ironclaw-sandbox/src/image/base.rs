//! Choosing, pulling or creating the Debian base the sandbox image is built `FROM`.
//!
//! Order: an explicitly requested base; an official `debian:bookworm-slim` already present;
//! our offline `ironclaw-base:bookworm` already present; a pull of the official image (bounded,
//! because on air-gapped machines it can only fail); and finally building the offline base from
//! Debian packages with debootstrap, which needs only a Debian mirror, no container registry.

use std::sync::atomic::Ordering;
use std::time::Duration;

use bollard::query_parameters::CreateImageOptions;
use bollard::Docker;
use futures_util::StreamExt;
use tracing::{info_span, Instrument};

use super::build::exists;
use super::progress::{from_docker_message, Progress};
use super::{debootstrap, mirror, rootfs, BuildOptions};
use crate::{Error, Result};

/// The official base, preferred when available: smallest, and security-maintained upstream.
pub const OFFICIAL_BASE: &str = "debian:bookworm-slim";
/// The base we build ourselves when no registry is reachable.
pub const OFFLINE_BASE: &str = "ironclaw-base:bookworm";

/// Upper bound for the whole pull attempt. A working registry delivers bookworm-slim (~30 MB)
/// well within this; an unreachable one fails in seconds, or hangs on DNS/TCP, which this cuts.
const PULL_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a running upload reports its byte count.
const TICK: Duration = Duration::from_millis(250);

/// Returns the base image to build on, creating it if necessary.
pub async fn resolve(
    docker: &Docker,
    opts: &BuildOptions,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<String> {
    if let Some(base) = &opts.base {
        if !exists(docker, base).await? && opts.offline {
            return Err(Error::BaseImage {
                message: format!(
                    "the requested base {base} is not present locally and offline mode forbids \
                     pulling it; load it first (`docker load`) or drop the explicit base"
                ),
            });
        }
        // When it is missing (and pulling is allowed) the builder pulls it itself.
        progress(Progress::phase(
            "base",
            format!("using the requested base {base}"),
        ));
        return Ok(base.clone());
    }
    for candidate in [OFFICIAL_BASE, OFFLINE_BASE] {
        if exists(docker, candidate).await? {
            progress(Progress::phase(
                "base",
                format!("using local base {candidate}"),
            ));
            return Ok(candidate.to_owned());
        }
    }
    if !opts.offline {
        match pull(docker, OFFICIAL_BASE, progress).await {
            Ok(()) => {
                progress(Progress::phase("base", format!("using {OFFICIAL_BASE}")));
                return Ok(OFFICIAL_BASE.to_owned());
            }
            Err(reason) => {
                tracing::info!(%reason, "official base unavailable; building the offline base");
                progress(Progress::phase(
                    "base",
                    format!("cannot pull {OFFICIAL_BASE} ({reason}); building {OFFLINE_BASE} from Debian packages"),
                ));
            }
        }
    } else {
        progress(Progress::phase(
            "base",
            format!("offline mode: building {OFFLINE_BASE} from Debian packages"),
        ));
    }
    build_offline_base(docker, progress).await?;
    Ok(OFFLINE_BASE.to_owned())
}

/// Tries to pull `image`; the error is a reason for the log, not a failure, since the caller
/// falls back to the offline base.
async fn pull(
    docker: &Docker,
    image: &str,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> std::result::Result<(), String> {
    progress(Progress::phase("pull", format!("pulling {image}")));
    let (repo, tag) = image.rsplit_once(':').unwrap_or((image, "latest"));
    let options = CreateImageOptions {
        from_image: Some(repo.to_owned()),
        tag: Some(tag.to_owned()),
        ..Default::default()
    };
    let attempt = async {
        let mut stream = docker.create_image(Some(options), None, None);
        while let Some(item) = stream.next().await {
            let info = item.map_err(|err| err.to_string())?;
            if let Some(event) = from_docker_message(
                info.id.as_deref(),
                info.status.as_deref(),
                info.progress_detail.as_ref(),
            ) {
                progress(event);
            }
        }
        Ok::<(), String>(())
    };
    tokio::time::timeout(PULL_TIMEOUT, attempt)
        .instrument(info_span!("image.pull", image = %image))
        .await
        .map_err(|_| format!("no answer within {} s", PULL_TIMEOUT.as_secs()))??;
    match exists(docker, image).await {
        Ok(true) => Ok(()),
        Ok(false) => Err("the pull ended but the image is not there".to_owned()),
        Err(err) => Err(err.to_string()),
    }
}

/// Builds `ironclaw-base:bookworm`: debootstrap a minimal bookworm with everything the sandbox
/// Dockerfile installs (so its build needs no network), then stream the root filesystem into
/// Docker's image import. Needs root (debootstrap creates device nodes and chroots).
pub async fn build_offline_base(
    docker: &Docker,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    let span = info_span!("image.base", tag = %OFFLINE_BASE);
    async {
        let bin = debootstrap::locate()?;
        let mirror = mirror::mirror();
        let mut dir = debootstrap::RootfsDir::create()?;
        let made = async {
            debootstrap::run(&bin, dir.path(), mirror.as_deref(), progress).await?;
            import_rootfs(docker, dir.path(), OFFLINE_BASE, progress).await
        }
        .await;
        // Removing ~400 MB of small files takes seconds; keep it off the async threads, on
        // success and failure alike (a panic there just leaves the scratch directory behind).
        let _ = tokio::task::spawn_blocking(move || dir.remove()).await;
        made?;
        if !exists(docker, OFFLINE_BASE).await? {
            return Err(Error::BaseImage {
                message: format!("the import finished but {OFFLINE_BASE} does not exist"),
            });
        }
        Ok(())
    }
    .instrument(span)
    .await
}

/// `POST /images/create?fromSrc=-` with the rootfs tar as the streamed body (`docker import`).
pub(crate) async fn import_rootfs(
    docker: &Docker,
    root: &std::path::Path,
    image: &str,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    progress(Progress::phase(
        "import",
        format!("importing the root filesystem as {image}"),
    ));
    let (repo, tag) = image.rsplit_once(':').unwrap_or((image, "latest"));
    let options = CreateImageOptions {
        from_src: Some("-".to_owned()),
        repo: Some(repo.to_owned()),
        tag: Some(tag.to_owned()),
        message: Some("IronClaw offline base: Debian bookworm via debootstrap".to_owned()),
        ..Default::default()
    };
    let upload = rootfs::stream_tar(root.to_path_buf());
    let mut stream = docker.create_image(
        Some(options),
        Some(bollard::body_try_stream(upload.body)),
        None,
    );
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let outcome = loop {
        tokio::select! {
            item = stream.next() => match item {
                None => break Ok(()),
                Some(Ok(info)) => {
                    if let Some(event) = from_docker_message(
                        info.id.as_deref(),
                        info.status.as_deref(),
                        info.progress_detail.as_ref(),
                    ) {
                        progress(event);
                    }
                }
                Some(Err(err)) => break Err(err),
            },
            _ = ticker.tick() => progress(Progress::Bytes {
                done: upload.sent.load(Ordering::Relaxed),
                total: None,
            }),
        }
    };
    // A failure while reading the rootfs explains a failed upload better than the HTTP error
    // it caused, so it takes precedence.
    let packed = upload
        .task
        .await
        .map_err(|err| Error::io("archiving", root, std::io::Error::other(err)))?;
    packed.map_err(|err| Error::io("archiving", root, err))?;
    outcome.map_err(|err| Error::docker(format!("importing {image}"), err))?;
    progress(Progress::Bytes {
        done: upload.sent.load(Ordering::Relaxed),
        total: None,
    });
    Ok(())
}
