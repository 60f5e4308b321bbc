//! Which options of the read-only programs are known to only read. An allowlist, not a
//! denylist: an option not listed here (a write like `shuf -o`, a helper like `rg --pre`, a
//! config or plugin like `file -m`, a pager like `man -P`, a BSD-only form like `base64 -o`, or
//! simply one IronClaw does not know) makes the command not read-only, so `ask-unless-safe`
//! asks about it.

use super::words::Word;

mod table;

use table::check_for;

/// The known-safe options of one program.
pub(super) struct Opts {
    /// Short flags without a value.
    flags: &'static str,
    /// Short options that take a value (`-n 5` or `-n5`).
    valued: &'static str,
    /// Long options; a trailing `=` means it takes a value (`--lines=5` or `--lines 5`).
    long: &'static [&'static str],
    /// `-5`-style numeric options (`head -5`, `seq -3 3`).
    numeric: bool,
}

/// How a read-only program's options are judged.
pub(super) enum Check {
    /// Shell builtins and tools whose every option was reviewed: none writes, runs a program,
    /// or loads a config.
    Any,
    Only(Opts),
}

const fn only(flags: &'static str, valued: &'static str, long: &'static [&'static str]) -> Check {
    Check::Only(Opts {
        flags,
        valued,
        long,
        numeric: false,
    })
}

const fn numeric(
    flags: &'static str,
    valued: &'static str,
    long: &'static [&'static str],
) -> Check {
    Check::Only(Opts {
        flags,
        valued,
        long,
        numeric: true,
    })
}

/// The first option of `args` the policy does not list, or an operand that changes what the
/// program does (`date MMDDhhmm` sets the clock, `xxd IN OUT` writes OUT, `less +cmd` runs a
/// command).
pub(super) fn first_unknown(name: &str, args: &[Word]) -> Option<String> {
    let check = check_for(name);
    let opts = match &check {
        Some(Check::Any) => return None,
        Some(Check::Only(opts)) => Some(opts),
        None => None,
    };
    let mut operands = 0usize;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let a = arg.text.as_str();
        if a == "--" {
            operands += args.len() - i;
            break;
        }
        if !arg.is_literal() && a.starts_with('-') {
            return Some(a.to_owned());
        }
        if let Some(long) = a.strip_prefix("--") {
            let (key, inline) = match long.split_once('=') {
                Some((k, _)) => (k, true),
                None => (long, false),
            };
            let Some(opts) = opts else {
                return Some(a.to_owned());
            };
            if opts.long.contains(&key) {
                continue;
            }
            let with_value = format!("{key}=");
            if opts.long.contains(&with_value.as_str()) {
                if !inline {
                    i += 1;
                }
                continue;
            }
            return Some(a.to_owned());
        }
        if a.len() > 1 && a.starts_with('-') {
            let Some(opts) = opts else {
                return Some(a.to_owned());
            };
            let cluster = &a[1..];
            if opts.numeric && cluster.chars().all(|c| c.is_ascii_digit() || c == '.') {
                continue;
            }
            for (at, c) in cluster.char_indices() {
                if opts.flags.contains(c) {
                    continue;
                }
                if opts.valued.contains(c) {
                    if at + c.len_utf8() == cluster.len() {
                        i += 1;
                    }
                    break;
                }
                return Some(a.to_owned());
            }
            continue;
        }
        if a.starts_with('+') && matches!(name, "less" | "more") {
            return Some(a.to_owned());
        }
        if name == "date" && !a.starts_with('+') {
            return Some(a.to_owned());
        }
        operands += 1;
    }
    (name == "xxd" && operands > 1).then(|| XXD_OUTPUT.to_owned())
}

/// What [`first_unknown`] returns for `xxd IN OUT`, which writes OUT.
pub(super) const XXD_OUTPUT: &str = "an output file operand";
