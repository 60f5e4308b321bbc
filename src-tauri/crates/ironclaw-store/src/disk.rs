//! Telling a full disk apart from other write failures, and saying how much room is left, so
//! the person reads "the disk holding X is full (N bytes free)" instead of a SQLite code.

use std::fmt;
use std::io;
use std::path::Path;

use rusqlite::ErrorCode;

/// Free bytes on the file system holding `path` (its folder when `path` is a file that may not
/// exist). `None` when the file system cannot say.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let probe = if path.is_dir() {
        path
    } else {
        path.parent().filter(|p| !p.as_os_str().is_empty())?
    };
    fs4::available_space(probe).ok()
}

/// Whether an I/O error means "no space left" (or over a disk quota).
pub fn io_is_disk_full(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// Whether SQLite failed because the disk (or its quota) is full.
pub(crate) fn sqlite_is_disk_full(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(ErrorCode::DiskFull)
}

/// "1.1 MiB (1153434 bytes) free", or that it is unknown; shown in disk-full messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreeSpace(pub Option<u64>);

impl fmt::Display for FreeSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(bytes) = self.0 else {
            return f.write_str("free space unknown");
        };
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if bytes < 1024 {
            return write!(f, "{bytes} bytes free");
        }
        let mut value = bytes as f64 / 1024.0;
        let mut unit = UNITS[0];
        for next in &UNITS[1..] {
            if value < 1024.0 {
                break;
            }
            value /= 1024.0;
            unit = next;
        }
        write!(f, "{value:.1} {unit} ({bytes} bytes) free")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn free_space_reads_in_units_and_keeps_the_exact_bytes() {
        assert_eq!(FreeSpace(Some(0)).to_string(), "0 bytes free");
        assert_eq!(
            FreeSpace(Some(1_153_434)).to_string(),
            "1.1 MiB (1153434 bytes) free"
        );
        assert_eq!(FreeSpace(None).to_string(), "free space unknown");
    }

    #[test]
    fn no_space_and_quota_errors_count_as_a_full_disk_and_others_do_not() {
        assert!(io_is_disk_full(&io::Error::from_raw_os_error(28))); // ENOSPC
        assert!(io_is_disk_full(&io::Error::from_raw_os_error(122))); // EDQUOT
        assert!(!io_is_disk_full(&io::Error::from_raw_os_error(13))); // EACCES
    }

    #[test]
    fn free_bytes_of_a_missing_file_is_its_folders() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(&dir.path().join("not-yet.sqlite3")).is_some());
    }
}
