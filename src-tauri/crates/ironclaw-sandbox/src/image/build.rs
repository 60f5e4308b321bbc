//! Building the sandbox image from the embedded context, and the cheap "is it there?" check that
//! every sandbox start goes through.

use std::collections::HashMap;

use bollard::errors::Error as BollardError;
use bollard::query_parameters::BuildImageOptions;
use bollard::Docker;
use futures_util::StreamExt;
use tracing::{info_span, Instrument};

use super::progress::{from_docker_message, lines, Tail};
use super::{base, context, BuildOptions, ImageSpec, Progress, HASH_LABEL};
use crate::error::is_not_found;
use crate::{Error, Result};

/// Label recording which base the image was built on (official Debian or the debootstrap one),
/// for `ironclaw doctor` and bug reports.
const BASE_LABEL: &str = "ironclaw.image-base";

/// Whether an image (`repo:tag`, ID or digest) is present on the engine.
pub async fn exists(docker: &Docker, tag: &str) -> Result<bool> {
    match docker.inspect_image(tag).await {
        Ok(_) => Ok(true),
        Err(err) if is_not_found(&err) => Ok(false),
        Err(err) => Err(Error::docker(format!("inspecting image {tag}"), err)),
    }
}

/// Makes sure the sandbox image for this binary exists, building it (and, if needed, its base)
/// when it does not. When the image is present this is a single inspect, so it is safe to call
/// before every container start.
pub async fn ensure(
    docker: &Docker,
    opts: &BuildOptions,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<ImageSpec> {
    let spec = context::spec();
    let present = exists(docker, &spec.tag)
        .instrument(info_span!("image.ensure", tag = %spec.tag))
        .await?;
    if present {
        progress(Progress::Done {
            tag: spec.tag.clone(),
        });
        return Ok(spec);
    }
    tracing::info!(tag = %spec.tag, "sandbox image missing; building it");
    build(docker, opts, progress).await
}

/// Builds the sandbox image (even if it exists: Docker's layer cache makes a rebuild of an
/// unchanged tree quick). Chooses or creates the base image first, see [`base::resolve`].
pub async fn build(
    docker: &Docker,
    opts: &BuildOptions,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<ImageSpec> {
    let spec = context::spec();
    let span = info_span!("image.build", tag = %spec.tag);
    async {
        let base = base::resolve(docker, opts, progress).await?;
        progress(Progress::phase(
            "build",
            format!("building {} on {base}", spec.tag),
        ));
        let context = context::context_tar(context::files()).map_err(|err| Error::ImageBuild {
            message: format!("packing the embedded build context: {err}"),
        })?;
        run_build(docker, &spec, &base, context, progress).await?;

        // The stream can end without an error message (engine restarted, builder crashed):
        // only an image that actually exists counts as built.
        if !exists(docker, &spec.tag).await? {
            return Err(Error::ImageBuild {
                message: format!(
                    "the build finished but {} does not exist on the engine; run \
                     `ironclaw image build` again and check `docker images`",
                    spec.tag
                ),
            });
        }
        tracing::info!(base = %base, "sandbox image built");
        progress(Progress::Done {
            tag: spec.tag.clone(),
        });
        Ok(spec.clone())
    }
    .instrument(span)
    .await
}

async fn run_build(
    docker: &Docker,
    spec: &ImageSpec,
    base: &str,
    context: Vec<u8>,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    let options = BuildImageOptions {
        t: Some(spec.tag.clone()),
        buildargs: Some(HashMap::from([("BASE".to_owned(), base.to_owned())])),
        // Intermediate containers go away even when a step fails, so failed builds leave no
        // litter for the user to clean up.
        rm: true,
        forcerm: true,
        labels: Some(HashMap::from([
            (HASH_LABEL.to_owned(), spec.hash.clone()),
            (BASE_LABEL.to_owned(), base.to_owned()),
        ])),
        // The offline base already carries every package, so its build needs no network: it
        // gets none. That keeps it hermetic, and independent of the engine's default bridge
        // (a missing `docker0` fails every networked build step with "failed to create
        // endpoint").
        networkmode: (base == super::base::OFFLINE_BASE).then(|| "none".to_owned()),
        ..Default::default()
    };
    let mut tail = Tail::default();
    let mut stream = docker.build_image(options, None, Some(bollard::body_full(context.into())));
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                if let Some(chunk) = info.stream.as_deref() {
                    for line in lines(chunk) {
                        tail.push(line);
                        progress(Progress::Log {
                            line: line.to_owned(),
                        });
                    }
                }
                // Status messages appear when the builder pulls a missing base itself.
                if let Some(event) = from_docker_message(
                    info.id.as_deref(),
                    info.status.as_deref(),
                    info.progress_detail.as_ref(),
                ) {
                    progress(event);
                }
            }
            // A failing RUN step, a missing base, a Dockerfile error: all arrive in-stream.
            Err(BollardError::DockerStreamError { error }) => {
                return Err(build_failure(&error, &tail));
            }
            // The engine refused the request itself (bad option, unreadable context).
            Err(BollardError::DockerResponseServerError { message, .. }) => {
                return Err(build_failure(&message, &tail));
            }
            Err(err) => return Err(Error::docker(format!("building {}", spec.tag), err)),
        }
    }
    Ok(())
}

fn build_failure(error: &str, tail: &Tail) -> Error {
    let output = tail.render();
    let message = if output.is_empty() {
        error.trim().to_owned()
    } else {
        format!("{}\nlast build output:\n{output}", error.trim())
    };
    Error::ImageBuild { message }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn build_failure_quotes_the_last_output() {
        let mut tail = Tail::default();
        tail.push("Step 2/8 : RUN false");
        let err = build_failure("The command returned a non-zero code: 1\n", &tail);
        let text = err.to_string();
        assert!(text.contains("non-zero code: 1\nlast build output:\nStep 2/8 : RUN false"));
        assert!(matches!(err, Error::ImageBuild { .. }));
    }
}
