//! Moving bytes between a sandbox's connection and the destination without copying them
//! through the proxy: `splice(2)` from one socket into a pipe and from the pipe into the other,
//! so a download costs the kernel page moves instead of two copies per chunk. Readiness comes
//! from tokio; each direction owns a pipe.

use std::os::fd::{AsFd, OwnedFd};

use nix::fcntl::{fcntl, splice, FcntlArg, OFlag, SpliceFFlags};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// How much one pipe holds. The kernel may refuse more than the per-user pipe quota; the
/// default size still works then, only with more system calls.
const PIPE_BYTES: usize = 1 << 20;

/// Pumps both directions until both have ended (each end's write side is shut once its reader
/// saw end-of-file), or either fails.
pub async fn bidirectional(a: &TcpStream, b: &TcpStream) -> std::io::Result<()> {
    tokio::try_join!(one_way(a, b), one_way(b, a)).map(|_| ())
}

async fn one_way(from: &TcpStream, to: &TcpStream) -> std::io::Result<()> {
    let (pipe_out, pipe_in) = pipe()?;
    let mut buffered = 0usize;
    loop {
        if buffered == 0 {
            let moved = from
                .async_io(Interest::READABLE, || {
                    splice(
                        from.as_fd(),
                        None,
                        pipe_in.as_fd(),
                        None,
                        PIPE_BYTES,
                        SpliceFFlags::SPLICE_F_MOVE | SpliceFFlags::SPLICE_F_NONBLOCK,
                    )
                    .map_err(std::io::Error::from)
                })
                .await?;
            if moved == 0 {
                break;
            }
            buffered = moved;
        }
        while buffered > 0 {
            let moved = to
                .async_io(Interest::WRITABLE, || {
                    splice(
                        pipe_out.as_fd(),
                        None,
                        to.as_fd(),
                        None,
                        buffered,
                        SpliceFFlags::SPLICE_F_MOVE | SpliceFFlags::SPLICE_F_NONBLOCK,
                    )
                    .map_err(std::io::Error::from)
                })
                .await?;
            buffered -= moved;
        }
    }
    // Half-close, like `copy_bidirectional`: the other side learns this direction is done.
    match nix::sys::socket::shutdown(
        std::os::fd::AsRawFd::as_raw_fd(to),
        nix::sys::socket::Shutdown::Write,
    ) {
        Ok(()) | Err(nix::errno::Errno::ENOTCONN) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A non-blocking pipe: (read end, write end).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
    let size = i32::try_from(PIPE_BYTES).unwrap_or(i32::MAX);
    let _ = fcntl(&w, FcntlArg::F_SETPIPE_SZ(size));
    Ok((r, w))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    async fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (s, _) = l.accept().await.unwrap();
        (c, s)
    }

    #[tokio::test]
    async fn bytes_cross_both_ways_and_end_of_file_is_passed_on() {
        let (mut client, proxy_a) = pair().await;
        let (proxy_b, mut server) = pair().await;
        let pumping = tokio::spawn(async move { bidirectional(&proxy_a, &proxy_b).await });
        let big: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = big.clone();
        let writer = tokio::spawn(async move {
            client.write_all(&sent).await.unwrap();
            client.shutdown().await.unwrap();
            let mut back = Vec::new();
            client.read_to_end(&mut back).await.unwrap();
            back
        });
        let mut got = Vec::new();
        server.read_to_end(&mut got).await.unwrap();
        assert!(
            got == big,
            "the server got {} bytes, not the same",
            got.len()
        );
        server.write_all(b"done").await.unwrap();
        server.shutdown().await.unwrap();
        assert_eq!(writer.await.unwrap(), b"done");
        pumping.await.unwrap().unwrap();
    }
}
