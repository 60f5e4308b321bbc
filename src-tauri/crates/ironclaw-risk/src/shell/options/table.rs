//! The option table: for every program the shell checker calls read-only, which of its options
//! are known to only read (an allowlist; see the parent module for how it is applied).

use super::{numeric, only, Check};

#[rustfmt::skip]
const GREP_LONG: &[&str] = &[
    "extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "regexp=", "file=",
    "ignore-case", "no-ignore-case", "word-regexp", "line-regexp", "null-data", "no-messages",
    "invert-match", "count", "color", "color=", "colour", "colour=", "files-without-match",
    "files-with-matches", "max-count=", "only-matching", "quiet", "silent", "byte-offset",
    "with-filename", "no-filename", "label=", "line-number", "initial-tab", "unix-byte-offsets",
    "null", "after-context=", "before-context=", "context=", "text", "binary-files=", "devices=",
    "directories=", "exclude=", "exclude-from=", "exclude-dir=", "include=", "recursive",
    "dereference-recursive", "line-buffered", "binary", "no-group-separator", "group-separator=",
];

#[rustfmt::skip]
const DIFF_LONG: &[&str] = &[
    "normal", "brief", "report-identical-files", "context", "context=", "unified", "unified=",
    "side-by-side", "width=", "left-column", "suppress-common-lines", "show-c-function",
    "show-function-line=", "label=", "expand-tabs", "initial-tab", "tabsize=",
    "suppress-blank-empty", "line-format=", "old-line-format=", "new-line-format=",
    "unchanged-line-format=", "old-group-format=", "new-group-format=", "changed-group-format=",
    "unchanged-group-format=", "recursive", "new-file", "unidirectional-new-file",
    "ignore-file-name-case", "no-ignore-file-name-case", "exclude=", "exclude-from=",
    "starting-file=", "from-file=", "to-file=", "ignore-case", "ignore-tab-expansion",
    "ignore-trailing-space", "ignore-space-change", "ignore-all-space", "ignore-blank-lines",
    "ignore-matching-lines=", "text", "strip-trailing-cr", "minimal", "horizon-lines=",
    "speed-large-files", "color", "color=", "palette=", "no-dereference",
];

#[rustfmt::skip]
const SUM_LONG: &[&str] = &[
    "binary", "check", "tag", "text", "zero", "ignore-missing", "quiet", "status", "strict",
    "warn", "untagged", "length=", "algorithm=", "base64", "raw", "debug",
];

/// The option policy of every program `commands::simple` calls read-only, and of the read-only
/// forms of the tools in `tools`.
#[rustfmt::skip]
pub(super) fn check_for(name: &str) -> Option<Check> {
    Some(match name {
        // Shell builtins: fixed option sets, none of which writes files or runs programs.
        // (`hash -p`, `history -w/-a`, `enable -f` do; they are listed below or not at all.)
        "true" | "false" | ":" | "test" | "[" | "echo" | "printf" | "pwd" | "type" | "help"
        | "jobs" | "pushd" | "popd" | "dirs" | "set" | "shopt" | "wait" | "exit" | "return"
        | "break" | "continue" | "shift" | "let" | "unalias" | "unset" | "local" | "declare"
        | "typeset" | "readonly" | "export" | "cd" | "read" | "mapfile" | "readarray"
        | "getopts" | "expr" | "sleep" | "yes" | "factor" | "which" | "whereis" | "whoami"
        | "id" | "groups" | "logname" | "users" | "tty" | "arch" | "nproc" | "locale"
        | "getconf" | "printenv" | "env" | "ps" | "pgrep" | "free" | "uptime" | "who" | "w"
        | "lscpu" | "lsblk" | "findmnt" | "lsof" | "netstat" | "vmstat" | "iostat" | "lsattr"
        | "getfacl" | "readelf" | "tput" | "clear" | "cal" | "look" | "csvlook" | "tsort"
        | "sha" => Check::Any,
        // Not `-K`/`--kill` (closes sockets).
        "ss" => only(
            "hVHnraltuwxpeimoZzbsEOS046", "fA",
            &[
                "numeric", "resolve", "all", "listening", "tcp", "udp", "unix", "processes",
                "extended", "info", "memory", "summary", "no-header", "oneline", "family=",
                "query=",
            ],
        ),
        // binutils: not `--plugin` (loads a shared object).
        "nm" => only(
            "aABCDgjlnoprsSuUvPV", "ft",
            &[
                "debug-syms", "demangle", "dynamic", "defined-only", "extern-only", "line-numbers",
                "numeric-sort", "no-sort", "portability", "reverse-sort", "size-sort",
                "undefined-only", "format=", "radix=",
            ],
        ),
        "objdump" => only(
            "aCdDefgGhlrRsStTVwWxz", "jMb",
            &[
                "archive-headers", "demangle", "disassemble", "disassemble=", "disassemble-all",
                "file-headers", "private-headers", "headers", "section-headers", "section=",
                "syms", "dynamic-syms", "reloc", "dynamic-reloc", "full-contents", "line-numbers",
                "source", "wide", "no-show-raw-insn", "start-address=", "stop-address=", "dwarf",
                "dwarf=",
            ],
        ),
        "size" => only("ABdoxtG", "", &["format=", "radix=", "totals", "common"]),
        "hash" => only("rtld", "", &[]),
        "history" => only("", "", &[]),
        "ls" | "ll" | "dir" | "vdir" => only(
            "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1", "IwT",
            &[
                "all", "almost-all", "author", "escape", "block-size=", "ignore-backups", "color",
                "color=", "directory", "dired", "classify", "classify=", "file-type", "format=",
                "full-time", "group-directories-first", "no-group", "human-readable", "si",
                "dereference-command-line", "dereference-command-line-symlink-to-dir", "hide=",
                "hyperlink", "hyperlink=", "indicator-style=", "inode", "ignore=", "kibibytes",
                "dereference", "numeric-uid-gid", "literal", "hide-control-chars",
                "show-control-chars", "quote-name", "quoting-style=", "reverse", "recursive",
                "size", "sort=", "time=", "time-style=", "tabsize=", "width=", "context", "zero",
            ],
        ),
        "cat" => only(
            "AbeEnstTuv", "",
            &[
                "show-all", "number-nonblank", "show-ends", "number", "squeeze-blank", "show-tabs",
                "show-nonprinting",
            ],
        ),
        "tac" => only("br", "s", &["before", "regex", "separator="]),
        "head" | "tail" => numeric(
            "qvzfF", "ncs",
            &[
                "bytes=", "lines=", "quiet", "silent", "verbose", "zero-terminated", "follow",
                "follow=", "retry", "pid=", "sleep-interval=", "max-unchanged-stats=",
            ],
        ),
        "wc" => only(
            "cmlLw", "",
            &[
                "bytes", "chars", "lines", "max-line-length", "words", "files0-from=", "total=",
            ],
        ),
        "grep" | "egrep" | "fgrep" | "zgrep" => {
            numeric("EFGPiywxzsvVcLloqbHhnTZaIrRUu", "efmABCdD", GREP_LONG)
        }
        "rg" => numeric(
            "aiIjlLnNoqrsSuvwxFHpcbeE.0", "egtTAmBCMdfj",
            &[
                "regexp=", "file=", "files", "files-with-matches", "files-without-match", "count",
                "count-matches", "fixed-strings", "ignore-case", "smart-case", "case-sensitive",
                "invert-match", "word-regexp", "line-regexp", "line-number", "no-line-number",
                "only-matching", "quiet", "hidden", "no-ignore", "no-ignore-vcs", "no-ignore-dot",
                "no-ignore-parent", "no-ignore-global", "no-ignore-exclude", "no-ignore-files",
                "glob=", "iglob=", "type=", "type-not=", "type-list", "max-count=", "max-depth=",
                "max-filesize=", "after-context=", "before-context=", "context=", "color=",
                "colors=", "heading", "no-heading", "with-filename", "no-filename", "vimgrep",
                "json", "stats", "sort=", "sortr=", "follow", "multiline", "multiline-dotall",
                "pcre2", "engine=", "text", "null", "null-data", "trim", "column", "no-column",
                "byte-offset", "replace=", "passthru", "unrestricted", "one-file-system",
                "threads=", "max-columns=", "max-columns-preview", "encoding=", "crlf", "binary",
                "debug", "no-messages", "no-config", "fixed-strings", "path-separator=", "pretty",
                "ignore-file=", "include-zero", "no-unicode", "auto-hybrid-regex", "line-buffered",
                "block-buffered", "files-with-matches", "quiet",
            ],
        ),
        "ag" => numeric(
            "aiIlLnoQrsSuUvwzcfGgtmABC", "GgmABCp",
            &[
                "all-text", "all-types", "ignore-case", "case-sensitive", "smart-case", "literal",
                "files-with-matches", "files-without-matches", "count", "column", "context=",
                "after=", "before=", "depth=", "follow", "hidden", "ignore=", "ignore-dir=",
                "max-count=", "nocolor", "color", "noheading", "heading", "nobreak", "word-regexp",
                "invert-match", "vimgrep", "numbers", "nonumbers", "only-matching", "silent",
                "stats", "search-zip", "skip-vcs-ignores", "unrestricted", "filename-pattern=",
                "file-search-regex=",
            ],
        ),
        "cut" => only(
            "sznw", "bcdf",
            &[
                "bytes=", "characters=", "delimiter=", "fields=", "complement", "only-delimited",
                "output-delimiter=", "zero-terminated",
            ],
        ),
        "tr" => only(
            "cCdst", "",
            &["complement", "delete", "squeeze-repeats", "truncate-set1"],
        ),
        "diff" => numeric("iEZbwBaTtlrNPqsyucedDnpH", "CUWxXFIS", DIFF_LONG),
        "cmp" => only(
            "blsv", "inI",
            &[
                "print-bytes", "ignore-initial=", "verbose", "bytes=", "quiet", "silent",
            ],
        ),
        "comm" => only(
            "123iz", "",
            &[
                "check-order", "nocheck-order", "output-delimiter=", "total", "zero-terminated",
            ],
        ),
        // No `+command` operand (less runs it as if typed, `!` included), no log file.
        "less" => numeric(
            "NSRrFXiIMmJeEqQsKcwW~", "xhyzbj",
            &[
                "LINE-NUMBERS", "chop-long-lines", "RAW-CONTROL-CHARS", "raw-control-chars",
                "quit-if-one-screen", "no-init", "ignore-case", "IGNORE-CASE", "LONG-PROMPT",
                "long-prompt", "status-column", "quit-at-eof", "QUIT-AT-EOF", "quiet", "QUIET",
                "silent", "squeeze-blank-lines", "tabs=", "mouse", "no-histdups",
            ],
        ),
        "more" => numeric(
            "dflpcsu", "n",
            &[
                "silent", "logical", "no-pause", "print-over", "clean-print", "squeeze", "plain",
                "lines=",
            ],
        ),
        "tree" => numeric(
            "adfilxsughDFqNQpACnJXr", "LPIH",
            &[
                "noreport", "charset=", "filelimit=", "timefmt=", "du", "si", "prune", "dirsfirst",
                "filesfirst", "gitignore", "sort=", "matchdirs", "ignore-case", "inodes", "device",
                "noreport", "metafirst",
            ],
        ),
        "realpath" => only(
            "eEmLPqsz", "",
            &[
                "canonicalize-existing", "canonicalize-missing", "logical", "physical", "quiet",
                "relative-to=", "relative-base=", "strip", "no-symlinks", "zero",
            ],
        ),
        "readlink" => only(
            "femnqsvz", "",
            &[
                "canonicalize", "canonicalize-existing", "canonicalize-missing", "no-newline",
                "quiet", "silent", "verbose", "zero",
            ],
        ),
        "basename" => only("az", "s", &["multiple", "suffix=", "zero"]),
        "dirname" => only("z", "", &["zero"]),
        "seq" => numeric("w", "fs", &["format=", "separator=", "equal-width"]),
        "stat" => only(
            "LftZ", "c",
            &[
                "dereference", "file-system", "format=", "printf=", "terse", "cached=",
            ],
        ),
        // Not -z/-Z (starts decompressors), -m (loads a magic file), -C (writes one).
        "file" => only(
            "bciEhiklLNnprsS0", "eFP",
            &[
                "brief", "mime", "mime-type", "mime-encoding", "extension", "keep-going", "raw",
                "special-files", "dereference", "no-dereference", "no-pad", "no-buffer",
                "preserve-date", "print0", "separator=", "exclude=", "exclude-quiet=",
                "parameter=", "no-sandbox",
            ],
        ),
        "du" => only(
            "0abcDhHklLmPsSx", "dBtX",
            &[
                "null", "all", "apparent-size", "block-size=", "bytes", "total",
                "dereference-args", "max-depth=", "human-readable", "inodes", "count-links",
                "dereference", "no-dereference", "separate-dirs", "si", "summarize", "threshold=",
                "time", "time=", "time-style=", "exclude-from=", "exclude=", "one-file-system",
                "files0-from=",
            ],
        ),
        "df" => only(
            "ahHiklPTvx", "Bt",
            &[
                "all", "block-size=", "human-readable", "si", "inodes", "local", "no-sync",
                "output", "output=", "portability", "print-type", "sync", "total", "type=",
                "exclude-type=",
            ],
        ),
        "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum"
        | "cksum" => only("bctwz", "la", SUM_LONG),
        "sum" => only("rs", "", &["sysv"]),
        "od" => numeric(
            "abcdfhilosvxDFIOLX", "AjNtwS",
            &[
                "address-radix=", "endian=", "skip-bytes=", "read-bytes=", "strings", "strings=",
                "format=", "output-duplicates", "width", "width=", "traditional",
            ],
        ),
        "hexdump" => only(
            "bcCdovx", "efns",
            &[
                "canonical", "format=", "format-file=", "length=", "skip=", "no-squeezing",
            ],
        ),
        // `xxd IN OUT` and `xxd -r` write a file: only the dump to stdout is read-only.
        "xxd" => only(
            "aCEipuRd", "clgos",
            &[
                "autoskip", "capitalize", "cols=", "groupsize=", "include", "len=", "offset=",
                "plain", "postscript", "seek=", "uppercase", "ps", "bits", "EBCDIC",
                "little-endian", "color=",
            ],
        ),
        "strings" => numeric(
            "adfwsDU", "nteoT",
            &[
                "all", "data", "print-file-name", "bytes=", "radix=", "encoding=",
                "include-all-whitespace", "output-separator=", "unicode=",
            ],
        ),
        "jq" => only(
            "rjcnesSCMaR", "f",
            &[
                "raw-output", "raw-output0", "join-output", "compact-output", "null-input",
                "exit-status", "slurp", "sort-keys", "color-output", "monochrome-output",
                "ascii-output", "raw-input", "tab", "indent=", "arg", "argjson", "slurpfile",
                "rawfile", "args", "jsonargs", "seq", "stream", "stream-errors", "from-file=",
            ],
        ),
        "column" => only(
            "tnexJcsoNORTWHLldEir", "",
            &[
                "table", "separator=", "output-separator=", "table-columns=", "table-right=",
                "table-hide=", "table-wrap=", "table-noextreme=", "table-name=",
                "keep-empty-lines", "json", "fillrows", "columns=",
            ],
        ),
        "nl" => only(
            "pb", "dfhilnsvw",
            &[
                "body-numbering=", "section-delimiter=", "footer-numbering=", "header-numbering=",
                "line-increment=", "join-blank-lines=", "number-format=", "no-renumber",
                "number-separator=", "starting-line-number=", "number-width=",
            ],
        ),
        "rev" => only("0", "", &["zero"]),
        "fold" => only("bs", "w", &["bytes", "characters", "spaces", "width="]),
        "expand" | "unexpand" => numeric("ia", "t", &["initial", "all", "first-only", "tabs="]),
        "paste" => only("sz", "d", &["serial", "delimiters=", "zero-terminated"]),
        "join" => numeric(
            "iz", "aevjot",
            &[
                "ignore-case", "check-order", "nocheck-order", "header", "zero-terminated",
            ],
        ),
        "fmt" => numeric(
            "cstu", "pwg",
            &[
                "crown-margin", "prefix=", "split-only", "tagged-paragraph", "uniform-spacing",
                "width=", "goal=",
            ],
        ),
        "numfmt" => only(
            "dz", "",
            &[
                "debug", "delimiter=", "field=", "format=", "from=", "from-unit=", "grouping",
                "header", "header=", "invalid=", "padding=", "round=", "suffix=", "to=",
                "to-unit=", "zero-terminated",
            ],
        ),
        "pr" => numeric("adFfJmrtTv", "cDehilNnoSsWw", &[]),
        "zcat" | "bzcat" | "xzcat" => only(
            "fqvlLtT", "",
            &["force", "quiet", "verbose", "list", "test"],
        ),
        // GNU only: BSD's `-o FILE` writes and `-i FILE` names the input.
        "base64" | "base32" => only("di", "w", &["decode", "ignore-garbage", "wrap="]),
        // Not `-o FILE`; `--random-source` only reads.
        "shuf" => numeric(
            "erz", "inw",
            &[
                "echo", "input-range=", "head-count=", "random-source=", "repeat",
                "zero-terminated",
            ],
        ),
        "uniq" => numeric(
            "cdDiuz", "fsw",
            &[
                "count", "repeated", "all-repeated", "all-repeated=", "group", "group=",
                "ignore-case", "unique", "skip-fields=", "skip-chars=", "check-chars=",
                "zero-terminated",
            ],
        ),
        // Not `--compress-program` (runs it); `-o` is judged as a write.
        "sort" => only(
            "bdfgiMhnRrVcCmsuz", "kotST",
            &[
                "ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort",
                "ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort",
                "random-sort", "random-source=", "reverse", "sort=", "version-sort", "batch-size=",
                "check", "check=", "debug", "files0-from=", "key=", "merge", "output=", "stable",
                "buffer-size=", "field-separator=", "temporary-directory=", "parallel=", "unique",
                "zero-terminated",
            ],
        ),
        // Not `-P PAGER`, `-H BROWSER`, `--html`, `-p` preprocessors, `-C` config, `-M` paths.
        "man" => only(
            "akfwWlL", "sS",
            &[
                "apropos", "whatis", "where", "path", "local-file", "sections=", "all",
            ],
        ),
        // bc has no shell escape; dc's `!` runs one, so dc is judged elsewhere.
        "bc" => only(
            "hilqsw", "",
            &[
                "help", "interactive", "mathlib", "quiet", "standard", "warn",
            ],
        ),
        "iconv" => only("cls", "ft", &["from-code=", "to-code=", "list", "silent"]),
        // Interactive views; batch-mode output only reads. htop has no write option.
        "top" => only("bcHiSs1E", "dnpouUwe", &["batch"]),
        "htop" => only(
            "CHMt", "dpsu",
            &[
                "no-color", "no-mouse", "tree", "delay=", "pid=", "sort-key=", "user=",
            ],
        ),
        "locate" => only(
            "AbceiLlPqrSw0", "dln",
            &[
                "all", "basename", "count", "existing", "ignore-case", "limit=", "null", "quiet",
                "regex", "regexp=", "statistics", "wholename", "database=",
            ],
        ),
        "date" => only(
            "uRI", "dfr",
            &[
                "date=", "file=", "reference=", "utc", "universal", "rfc-email", "rfc-3339=",
                "iso-8601", "iso-8601=", "debug",
            ],
        ),
        "uname" => only(
            "asnrvmpio", "",
            &[
                "all", "kernel-name", "nodename", "kernel-release", "kernel-version", "machine",
                "processor", "hardware-platform", "operating-system",
            ],
        ),
        _ => return None,
    })
}
