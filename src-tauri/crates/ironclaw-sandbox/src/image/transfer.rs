//! Moving images between machines as files (`docker save` / `docker load` through the API), for
//! air-gapped machines and for people who cannot run debootstrap as root.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bollard::errors::Error as BollardError;
use bollard::query_parameters::ImportImageOptions;
use bollard::Docker;
use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tracing::{info_span, Instrument};

use super::progress::{from_docker_message, lines, Progress, Tail};
use crate::error::is_not_found;
use crate::{Error, Result};

/// How often a running transfer reports its byte count.
const TICK: Duration = Duration::from_millis(250);
const READ_CHUNK: usize = 256 * 1024;

/// Saves `tag` to `file` as an image archive that [`import`] (or `docker load`) reads. The data
/// goes to `FILE.partial` first and is renamed at the end, so an interrupted export never leaves
/// a truncated archive under the real name.
pub async fn export(
    docker: &Docker,
    tag: &str,
    file: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    let span = info_span!("image.export", tag = %tag, file = %file.display());
    async {
        // Checked first: a missing image otherwise shows up as a failure mid-download.
        if let Err(err) = docker.inspect_image(tag).await {
            return Err(if is_not_found(&err) {
                Error::ImageMissing {
                    tag: tag.to_owned(),
                }
            } else {
                Error::docker(format!("inspecting image {tag}"), err)
            });
        }
        progress(Progress::phase(
            "export",
            format!("saving {tag} to {}", file.display()),
        ));
        let partial = partial_path(file);
        let result = write_archive(docker, tag, &partial, progress).await;
        let result = match result {
            Ok(()) => tokio::fs::rename(&partial, file)
                .await
                .map_err(|err| Error::io("renaming", &partial, err)),
            Err(err) => Err(err),
        };
        if result.is_err() {
            let _ = tokio::fs::remove_file(&partial).await;
        }
        result
    }
    .instrument(span)
    .await
}

fn partial_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

async fn write_archive(
    docker: &Docker,
    tag: &str,
    partial: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    let mut out = tokio::fs::File::create(partial)
        .await
        .map_err(|err| Error::io("creating", partial, err))?;
    let mut stream = docker.export_image(tag);
    let mut done = 0u64;
    let mut last_report = Instant::now();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|err| Error::docker(format!("exporting {tag}"), err))?;
        out.write_all(&chunk)
            .await
            .map_err(|err| Error::io("writing", partial, err))?;
        done += chunk.len() as u64;
        if last_report.elapsed() >= TICK {
            last_report = Instant::now();
            progress(Progress::Bytes { done, total: None });
        }
    }
    // The archive must be on disk before it gets its final name.
    out.sync_all()
        .await
        .map_err(|err| Error::io("writing", partial, err))?;
    progress(Progress::Bytes { done, total: None });
    Ok(())
}

/// Loads an image archive (from [`export`] or `docker save`, optionally compressed) and
/// returns the tags it contained; for untagged images, their IDs.
pub async fn import(
    docker: &Docker,
    file: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Vec<String>> {
    let span = info_span!("image.import", file = %file.display());
    async {
        let mut handle = tokio::fs::File::open(file)
            .await
            .map_err(|err| Error::io("opening", file, err))?;
        let total = handle
            .metadata()
            .await
            .map_err(|err| Error::io("reading", file, err))?
            .len();
        // Sniffed locally because Docker's answer to a random file is an obscure tar error.
        let mut head = vec![0u8; 512];
        let n = read_up_to(&mut handle, &mut head)
            .await
            .map_err(|err| Error::io("reading", file, err))?;
        if !looks_like_image_archive(&head[..n]) {
            return Err(not_an_archive(file, "it is not a tar archive"));
        }
        drop(handle);
        let handle = tokio::fs::File::open(file)
            .await
            .map_err(|err| Error::io("opening", file, err))?;

        progress(Progress::phase("load", format!("loading {}", file.display())));
        let sent = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&sent);
        let body = tokio_util::io::ReaderStream::with_capacity(handle, READ_CHUNK).inspect(
            move |chunk| {
                if let Ok(chunk) = chunk {
                    counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
            },
        );
        let mut stream = docker.import_image_stream(ImportImageOptions::default(), body, None);
        let mut ticker = tokio::time::interval(TICK);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut loaded = Vec::new();
        let mut tail = Tail::default();
        loop {
            tokio::select! {
                item = stream.next() => match item {
                    None => break,
                    Some(Ok(info)) => {
                        for line in info.stream.as_deref().into_iter().flat_map(lines) {
                            tail.push(line);
                            if let Some(name) = loaded_name(line) {
                                loaded.push(name.to_owned());
                            }
                            progress(Progress::Log { line: line.to_owned() });
                        }
                        if let Some(event) = from_docker_message(
                            info.id.as_deref(),
                            info.status.as_deref(),
                            info.progress_detail.as_ref(),
                        ) {
                            progress(event);
                        }
                    }
                    // The engine read the file and rejected it: a content problem.
                    Some(Err(BollardError::DockerStreamError { error }))
                    | Some(Err(BollardError::DockerResponseServerError { message: error, .. })) => {
                        return Err(not_an_archive(file, &error));
                    }
                    Some(Err(err)) => return Err(Error::docker(format!("loading {}", file.display()), err)),
                },
                _ = ticker.tick() => progress(Progress::Bytes {
                    done: sent.load(Ordering::Relaxed),
                    total: Some(total),
                }),
            }
        }
        progress(Progress::Bytes {
            done: sent.load(Ordering::Relaxed),
            total: Some(total),
        });
        if loaded.is_empty() {
            return Err(not_an_archive(
                file,
                &format!("Docker loaded no image from it. Its output:\n{}", tail.render()),
            ));
        }
        // Helpful when someone imports an archive made by a different IronClaw version.
        let wanted = super::spec().tag;
        if !loaded.contains(&wanted) {
            progress(Progress::Log {
                line: format!("note: this IronClaw uses {wanted}, which this archive does not contain"),
            });
        }
        for tag in &loaded {
            progress(Progress::Done { tag: tag.clone() });
        }
        Ok(loaded)
    }
    .instrument(span)
    .await
}

async fn read_up_to(file: &mut tokio::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = file.read(&mut buf[filled..]).await?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

fn not_an_archive(file: &Path, why: &str) -> Error {
    Error::ImageArchive {
        message: format!(
            "{} is not a usable image archive ({}); create one with `ironclaw image export FILE` \
             or `docker save IMAGE -o FILE`",
            file.display(),
            why.trim()
        ),
    }
}

/// A tar (ustar/GNU magic at offset 257) or one of the compressions `docker load` accepts.
pub(crate) fn looks_like_image_archive(head: &[u8]) -> bool {
    const COMPRESSED: &[&[u8]] = &[
        &[0x1f, 0x8b],                         // gzip
        &[0xfd, b'7', b'z', b'X', b'Z', 0x00], // xz
        b"BZh",                                // bzip2
        &[0x28, 0xb5, 0x2f, 0xfd],             // zstd
    ];
    COMPRESSED.iter().any(|magic| head.starts_with(magic))
        || head.get(257..262) == Some(b"ustar".as_slice())
}

/// The name in Docker's "Loaded image: NAME" / "Loaded image ID: sha256:..." lines.
fn loaded_name(line: &str) -> Option<&str> {
    let line = line.trim();
    line.strip_prefix("Loaded image ID: ")
        .or_else(|| line.strip_prefix("Loaded image: "))
        .map(str::trim)
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn recognises_tars_and_compressed_archives() {
        let tar = super::super::context::context_tar(&[("a", b"x")]).unwrap();
        assert!(looks_like_image_archive(&tar[..512]));
        assert!(looks_like_image_archive(&[0x1f, 0x8b, 8, 0]));
        assert!(!looks_like_image_archive(b"hello, this is not an image\n"));
        assert!(!looks_like_image_archive(&[]));
    }

    #[test]
    fn parses_loaded_lines() {
        assert_eq!(
            loaded_name("Loaded image: ironclaw-sandbox:0123456789abcdef\n"),
            Some("ironclaw-sandbox:0123456789abcdef")
        );
        assert_eq!(
            loaded_name("Loaded image ID: sha256:abc"),
            Some("sha256:abc")
        );
        assert_eq!(loaded_name("Loading layer"), None);
    }

    #[test]
    fn partial_name_appends_a_suffix() {
        assert_eq!(
            partial_path(Path::new("/x/image.tar")),
            PathBuf::from("/x/image.tar.partial")
        );
    }

    #[tokio::test]
    async fn a_text_file_is_rejected_before_reaching_docker() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "not an image").unwrap();
        // No engine is contacted for this: the path fails before the first request.
        let docker =
            Docker::connect_with_http("http://127.0.0.1:9", 1, bollard::API_DEFAULT_VERSION)
                .unwrap();
        let err = import(&docker, &file, &mut |_| {}).await.unwrap_err();
        assert!(matches!(err, Error::ImageArchive { .. }), "{err}");
        let err = import(&docker, &dir.path().join("missing.tar"), &mut |_| {})
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }
}
