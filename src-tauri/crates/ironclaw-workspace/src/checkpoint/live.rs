//! Whether anyone holds a file open for writing now, mappings included: what a checkpoint
//! cannot vouch for. A page of a shared writable mapping can be written again with no event
//! and no change-time update until the kernel writes it back, so neither the watch nor a walk
//! sees it; a process that keeps such a mapping (an interpreter can hold one in a variable) can
//! change the file between any two looks.
//!
//! The kernel knows: a read lease (`F_SETLEASE`, `F_RDLCK`) is refused with `EAGAIN` while any
//! open file description of the inode has write access, and a mapping keeps the description it
//! was made from alive after its descriptor is closed. The lease is released at once. If a
//! writer opens the file in the microseconds it is held, the kernel breaks the lease with a
//! signal to this process: `SIGURG`, which is ignored unless handled, instead of the default
//! `SIGIO`, which would end the process.

use std::fs::File;
use std::os::fd::AsRawFd;

/// `F_SETSIG` from `<fcntl.h>` (Linux), which the `libc` crate does not name.
const F_SETSIG: libc::c_int = 10;

/// `Some(true)`: some process holds `file`'s inode open for writing (or mapped from such an
/// open). `None`: this cannot be known here (the file is not this user's, or the filesystem has
/// no leases). `file` must be open read-only.
#[allow(unsafe_code)]
pub fn held_for_writing(file: &File) -> Option<bool> {
    let fd = file.as_raw_fd();
    // SAFETY: `fcntl` with integer arguments on a descriptor `file` owns for this whole call;
    // no memory is passed.
    unsafe {
        if libc::fcntl(fd, F_SETSIG, libc::SIGURG) == -1 {
            return None;
        }
        if libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) == -1 {
            let held = std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN);
            return held.then_some(true);
        }
        libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK);
    }
    Some(false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    use super::*;

    /// Another process maps the file for writing and closes its descriptor: still held. A
    /// reader is not a writer, and once the mapping is gone nothing is held.
    #[test]
    fn a_mapping_kept_after_its_descriptor_closed_holds_the_file_and_a_reader_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.bin");
        std::fs::write(&path, [0u8; 4096]).unwrap();
        let hold = |script: &str| {
            let mut child = Command::new("python3")
                .arg("-c")
                .arg(format!(
                    "import mmap,sys,time\n{script}\nprint('ready',flush=True)\ntime.sleep(60)"
                ))
                .arg(&path)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            std::io::BufReader::new(child.stdout.as_mut().unwrap())
                .read_line(&mut line)
                .unwrap();
            assert_eq!(line.trim(), "ready");
            child
        };
        let probe = || held_for_writing(&File::open(&path).unwrap());
        assert_eq!(probe(), Some(false));

        let mut mapper =
            hold("f=open(sys.argv[1],'r+b')\nm=mmap.mmap(f.fileno(),0)\nf.close()\nm[0]=1");
        assert_eq!(probe(), Some(true));
        mapper.kill().unwrap();
        mapper.wait().unwrap();
        assert_eq!(probe(), Some(false));

        let mut reader = hold("f=open(sys.argv[1],'rb')");
        assert_eq!(probe(), Some(false));
        reader.kill().unwrap();
        reader.wait().unwrap();
    }
}
