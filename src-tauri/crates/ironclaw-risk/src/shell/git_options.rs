//! git's options, by the same allowlist rule as [`super::options`]: global options first, then
//! those of the inspection subcommands.

use super::words::Word;

/// git options that only choose what to show: global options first, then those of the
/// inspection subcommands (`log`, `diff`, `show`, `status`, `blame`, `grep`, ...). Not
/// `--output` (writes), `--ext-diff`/`--textconv`/`--filters` (run helpers), `-p`/`--paginate`
/// (starts the pager), `-O`/`--open-files-in-pager` (runs a program), `-c`/`--config-env`/
/// `--exec-path` (change what git runs).
pub(super) const GIT_GLOBAL_VALUED: &[&str] = &["-C", "--git-dir", "--work-tree", "--namespace"];
#[rustfmt::skip]
const GIT_GLOBAL: &[&str] = &[
    "--no-pager", "-P", "--bare", "--no-replace-objects", "--literal-pathspecs",
    "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
    "--version", "--help", "--no-advice",
];

/// Whether a git global option is known-safe; `None` when it takes the next word as its value.
pub(super) fn git_global_is_safe(arg: &str) -> bool {
    let key = arg.split_once('=').map_or(arg, |(k, _)| k);
    GIT_GLOBAL.contains(&arg) || GIT_GLOBAL_VALUED.contains(&key)
}

const GIT_SHORT_FLAGS: &str = "pPusnlNMCBDRwWbqvazLtgcfmrhHdiEFIeAZ0123456789";
const GIT_SHORT_VALUED: &str = "nUSGLMCBlXeA";
#[rustfmt::skip]
const GIT_LONG: &[&str] = &[
    "oneline", "stat", "shortstat", "numstat", "summary", "name-only", "name-status", "graph",
    "decorate", "no-decorate", "abbrev-commit", "no-abbrev-commit", "abbrev", "all", "branches",
    "tags", "remotes", "follow", "reverse", "patch", "no-patch", "raw", "patch-with-stat",
    "patch-with-raw", "cached", "staged", "merge-base", "color", "no-color", "color-words",
    "color-moved", "word-diff", "word-diff-regex", "format", "pretty", "date", "author",
    "committer", "grep", "since", "until", "after", "before", "max-count", "skip", "merges",
    "no-merges", "first-parent", "topo-order", "date-order", "author-date-order", "left-right",
    "cherry-pick", "cherry-mark", "cherry", "boundary", "ancestry-path", "simplify-by-decoration",
    "full-history", "dense", "sparse", "relative", "relative-date", "diff-filter", "minimal",
    "patience", "histogram", "diff-algorithm", "ignore-space-change", "ignore-all-space",
    "ignore-blank-lines", "ignore-space-at-eol", "ignore-cr-at-eol", "unified",
    "inter-hunk-context", "function-context", "exit-code", "quiet", "check", "dirstat",
    "full-index", "binary", "submodule", "no-ext-diff", "no-textconv", "find-renames",
    "find-copies", "no-renames", "irreversible-delete", "src-prefix", "dst-prefix", "no-prefix",
    "default-prefix", "line-prefix", "ita-invisible-in-index", "show-signature", "no-notes",
    "notes", "show-notes", "log-size", "walk-reflogs", "mailmap", "use-mailmap", "source",
    "full-diff", "regexp-ignore-case", "basic-regexp", "extended-regexp", "fixed-strings",
    "perl-regexp", "all-match", "invert-grep", "no-walk", "do-walk", "in-commit-order",
    "expand-tabs", "no-expand-tabs", "encoding", "parents", "children", "count", "short", "branch",
    "porcelain", "long", "untracked-files", "ignored", "ignore-submodules", "show-stash",
    "ahead-behind", "no-ahead-behind", "renames", "column", "no-column", "verbose", "null",
    "line-number", "ignore-case", "word-regexp", "invert-match", "files-with-matches",
    "files-without-match", "name-only", "heading", "break", "show-function", "context",
    "after-context", "before-context", "threads", "untracked", "no-index", "recurse-submodules",
    "max-depth", "and", "or", "not", "all-match", "deleted", "modified", "others", "stage",
    "killed", "directory", "no-empty-directory", "exclude", "exclude-from", "exclude-standard",
    "error-unmatch", "full-name", "full-tree", "long", "name-status", "show-email", "root",
    "show-stats", "score-debug", "show-name", "show-number", "incremental", "line-porcelain",
    "contents", "ignore-rev", "ignore-revs-file", "tags", "contains", "no-contains", "merged",
    "no-merged", "points-at", "sort", "list", "candidates", "match", "dirty", "broken", "always",
    "first-parent", "exact-match", "verify", "symbolic", "symbolic-full-name", "abbrev-ref",
    "show-toplevel", "show-prefix", "show-cdup", "git-dir", "git-common-dir",
    "is-inside-work-tree", "is-inside-git-dir", "is-bare-repository", "is-shallow-repository",
    "absolute-git-dir", "show-object-format", "short", "head", "hash", "dereference", "batch",
    "batch-check", "batch-all-objects", "follow-symlinks", "allow-unknown-type", "human-readable",
    "numbered", "summary", "email", "group", "independent", "is-ancestor", "octopus", "fork-point",
    "object-only", "filter-print-omitted", "objects", "no-object-names", "stdin", "timestamp",
    "name-only", "annotate", "no-undefined", "guides", "anchored", "pickaxe-all", "pickaxe-regex",
    "find-object", "output-indicator-new", "output-indicator-old", "output-indicator-context",
    "remerge-diff", "diff-merges", "combined-all-paths", "cc", "compact-summary", "textconv-cache",
    "no-standard-notes",
];

/// The first option of a read-only git subcommand that is not known to be safe.
pub(super) fn git_first_unknown(args: &[Word]) -> Option<String> {
    for arg in args {
        let a = arg.text.as_str();
        if a == "--" {
            return None;
        }
        if !arg.is_literal() && a.starts_with('-') {
            return Some(a.to_owned());
        }
        if let Some(long) = a.strip_prefix("--") {
            let key = long.split_once('=').map_or(long, |(k, _)| k);
            let key = key
                .strip_prefix("no-")
                .filter(|k| GIT_LONG.contains(k))
                .unwrap_or(key);
            if !GIT_LONG.contains(&key) {
                return Some(a.to_owned());
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let cluster = &a[1..];
            if cluster.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            for c in cluster.chars() {
                if GIT_SHORT_VALUED.contains(c) {
                    break;
                }
                if !GIT_SHORT_FLAGS.contains(c) {
                    return Some(a.to_owned());
                }
            }
        }
    }
    None
}
