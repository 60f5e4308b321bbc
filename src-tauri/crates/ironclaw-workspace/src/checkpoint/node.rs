//! What a workspace holds at one moment: every name with what it is, described without
//! following links, and the differences between two such moments.
//!
//! Stored as text, one line per name, with names and link targets in hex: a workspace may hold
//! any bytes a Linux file name can, and undo must put back exactly those.

use std::collections::BTreeMap;

use super::objects::Hash;
use super::CheckpointError;

/// What one name is. Files carry the hash of their contents (the bytes are in the object store);
/// `stamp` only says when the contents must be looked at again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File {
        mode: u32,
        size: u64,
        content: Hash,
        stamp: Stamp,
    },
    Dir {
        mode: u32,
    },
    /// Recorded as the link itself: its target is data, never a path IronClaw follows.
    Symlink {
        target: Vec<u8>,
    },
    /// A FIFO, socket or device: its appearance and disappearance are changes, but nothing of it
    /// is copied or opened.
    Special {
        mode: u32,
    },
}

/// What `stat` says about a file that the sandboxed code cannot set back: the change time moves
/// with every write, `utime` included. Equal stamps mean equal contents; different ones mean
/// "hash it again".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    pub ino: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

impl Node {
    /// The same thing in the workspace, ignoring when it was last touched.
    pub fn same_as(&self, other: &Node) -> bool {
        match (self, other) {
            (
                Node::File {
                    mode: a,
                    size: sa,
                    content: ca,
                    ..
                },
                Node::File {
                    mode: b,
                    size: sb,
                    content: cb,
                    ..
                },
            ) => a == b && sa == sb && ca == cb,
            _ => self == other,
        }
    }

    /// Only the permission bits differ.
    fn only_mode_differs(&self, other: &Node) -> bool {
        match (self, other) {
            (
                Node::File {
                    size: sa,
                    content: ca,
                    ..
                },
                Node::File {
                    size: sb,
                    content: cb,
                    ..
                },
            ) => sa == sb && ca == cb,
            (Node::Dir { .. }, Node::Dir { .. }) => true,
            _ => false,
        }
    }
}

/// Every name in a workspace, by its `/`-separated path from the root (bytes, exactly).
pub type Manifest = BTreeMap<Vec<u8>, Node>;

pub use ironclaw_protocol::ChangeKind;

/// One path a run changed, with what it was before and is after (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: Vec<u8>,
    pub change: ChangeKind,
    pub before: Option<Node>,
    pub after: Option<Node>,
}

impl Change {
    /// The path for people and JSON; names that are not UTF-8 are shown with `\u{FFFD}`.
    pub fn display_path(&self) -> String {
        String::from_utf8_lossy(&self.path).into_owned()
    }
}

/// What changed from `before` to `after`, in path order.
pub fn diff(before: &Manifest, after: &Manifest) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut push = |path: &Vec<u8>, change, b: Option<&Node>, a: Option<&Node>| {
        changes.push(Change {
            path: path.clone(),
            change,
            before: b.cloned(),
            after: a.cloned(),
        })
    };
    // A record from before `.ironclaw/` was left out still lists it: not a change.
    for (path, b) in before.iter().filter(|(p, _)| !super::scan::not_kept(p)) {
        match after.get(path) {
            None => push(path, ChangeKind::Deleted, Some(b), None),
            Some(a) if a.same_as(b) => {}
            Some(a) if a.only_mode_differs(b) => push(path, ChangeKind::Mode, Some(b), Some(a)),
            Some(a) => push(path, ChangeKind::Modified, Some(b), Some(a)),
        }
    }
    for (path, a) in after {
        if !before.contains_key(path) {
            push(path, ChangeKind::Added, None, Some(a));
        }
    }
    changes.sort_by(|x, y| x.path.cmp(&y.path));
    changes
}

// ---- text form ---------------------------------------------------------------------------

/// `F mode size hash ino mtime ctime` / `D mode` / `L target` / `S mode`, without the path.
fn node_fields(node: &Node) -> String {
    match node {
        Node::File {
            mode,
            size,
            content,
            stamp,
        } => format!(
            "F {mode:o} {size} {content} {} {} {}",
            stamp.ino, stamp.mtime_ns, stamp.ctime_ns
        ),
        Node::Dir { mode } => format!("D {mode:o}"),
        Node::Symlink { target } => format!("L {}", hex::encode(target)),
        Node::Special { mode } => format!("S {mode:o}"),
    }
}

fn parse_node<'a>(fields: &mut impl Iterator<Item = &'a str>) -> Option<Node> {
    let mut next = || fields.next();
    let octal = |s: Option<&str>| s.and_then(|s| u32::from_str_radix(s, 8).ok());
    Some(match next()? {
        "F" => Node::File {
            mode: octal(next())?,
            size: next()?.parse().ok()?,
            content: next()?.parse().ok()?,
            stamp: Stamp {
                ino: next()?.parse().ok()?,
                mtime_ns: next()?.parse().ok()?,
                ctime_ns: next()?.parse().ok()?,
            },
        },
        "D" => Node::Dir {
            mode: octal(next())?,
        },
        "L" => Node::Symlink {
            target: hex::decode(next()?).ok()?,
        },
        "S" => Node::Special {
            mode: octal(next())?,
        },
        _ => return None,
    })
}

/// One line per name: `<path hex> <node>`.
pub fn encode_manifest(manifest: &Manifest) -> String {
    let mut out = String::with_capacity(manifest.len() * 120);
    for (path, node) in manifest {
        out.push_str(&hex::encode(path));
        out.push(' ');
        out.push_str(&node_fields(node));
        out.push('\n');
    }
    out
}

pub fn decode_manifest(text: &str) -> Result<Manifest, CheckpointError> {
    let mut manifest = Manifest::new();
    for (n, line) in text.lines().enumerate() {
        let mut fields = line.split(' ');
        let parsed = fields
            .next()
            .and_then(|p| hex::decode(p).ok())
            .zip(parse_node(&mut fields));
        let Some((path, node)) = parsed else {
            return Err(CheckpointError::Corrupt(format!(
                "line {} of a manifest",
                n + 1
            )));
        };
        manifest.insert(path, node);
    }
    Ok(manifest)
}

/// One line per change: `<path hex> <kind> | <before node or -> | <after node or ->`.
pub fn encode_changes(changes: &[Change]) -> String {
    let side = |n: &Option<Node>| n.as_ref().map_or_else(|| "-".to_owned(), node_fields);
    changes
        .iter()
        .map(|c| {
            format!(
                "{} {} | {} | {}\n",
                hex::encode(&c.path),
                c.change.as_str(),
                side(&c.before),
                side(&c.after)
            )
        })
        .collect()
}

pub fn decode_changes(text: &str) -> Result<Vec<Change>, CheckpointError> {
    let corrupt = |n: usize| CheckpointError::Corrupt(format!("line {} of a run record", n + 1));
    let side = |s: &str| -> Option<Option<Node>> {
        let s = s.trim();
        if s == "-" {
            Some(None)
        } else {
            parse_node(&mut s.split(' ')).map(Some)
        }
    };
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut parts = line.split(" | ");
        let (Some(head), Some(before), Some(after)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(corrupt(n));
        };
        let mut head = head.split(' ');
        let path = head
            .next()
            .and_then(|p| hex::decode(p).ok())
            .ok_or_else(|| corrupt(n))?;
        let change = head
            .next()
            .and_then(|w| w.parse::<ChangeKind>().ok())
            .ok_or_else(|| corrupt(n))?;
        out.push(Change {
            path,
            change,
            before: side(before).ok_or_else(|| corrupt(n))?,
            after: side(after).ok_or_else(|| corrupt(n))?,
        });
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn file(byte: u8, mode: u32) -> Node {
        Node::File {
            mode,
            size: 3,
            content: Hash::of(&[byte; 3]),
            stamp: Stamp {
                ino: 7,
                mtime_ns: -5,
                ctime_ns: 1_700_000_000_123_456_789,
            },
        }
    }

    #[test]
    fn a_diff_names_each_kind_of_change_and_ignores_touches() {
        let mut before = Manifest::new();
        before.insert(b"keep".to_vec(), file(1, 0o644));
        before.insert(b"touched".to_vec(), file(2, 0o644));
        before.insert(b"gone".to_vec(), file(3, 0o644));
        before.insert(b"chmod".to_vec(), file(4, 0o644));
        before.insert(b"edit".to_vec(), file(5, 0o644));
        let mut after = before.clone();
        after.remove(b"gone".as_slice());
        if let Some(Node::File { stamp, .. }) = after.get_mut(b"touched".as_slice()) {
            stamp.mtime_ns += 1;
        }
        after.insert(b"chmod".to_vec(), file(4, 0o755));
        after.insert(b"edit".to_vec(), file(9, 0o644));
        after.insert(
            b"new\xff".to_vec(),
            Node::Symlink {
                target: b"/etc/passwd".to_vec(),
            },
        );
        let kinds: Vec<(Vec<u8>, ChangeKind)> = diff(&before, &after)
            .into_iter()
            .map(|c| (c.path, c.change))
            .collect();
        assert_eq!(
            kinds,
            [
                (b"chmod".to_vec(), ChangeKind::Mode),
                (b"edit".to_vec(), ChangeKind::Modified),
                (b"gone".to_vec(), ChangeKind::Deleted),
                (b"new\xff".to_vec(), ChangeKind::Added),
            ]
        );
    }

    #[test]
    fn manifests_and_changes_read_back_exactly_whatever_bytes_the_names_hold() {
        let mut m = Manifest::new();
        m.insert(b"a b\n|c\xff".to_vec(), file(1, 0o4755));
        m.insert(b"dir".to_vec(), Node::Dir { mode: 0o700 });
        m.insert(
            b"dir/link".to_vec(),
            Node::Symlink {
                target: b"../../x | y".to_vec(),
            },
        );
        m.insert(b"dir/fifo".to_vec(), Node::Special { mode: 0o600 });
        assert_eq!(decode_manifest(&encode_manifest(&m)).unwrap(), m);

        let changes = diff(&Manifest::new(), &m);
        assert_eq!(decode_changes(&encode_changes(&changes)).unwrap(), changes);
        assert!(decode_manifest("zz F 644").is_err());
    }
}
