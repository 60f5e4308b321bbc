//! From an argv to reasons: resolves how the command name is spelled (variables, wildcards,
//! aliases, functions, paths), then dispatches on the program. The per-program knowledge lives in
//! `programs`; the plain tables live here.

use super::glob::glob_match;
use super::words::{brace_expand, Word};
use super::{Ctx, Input, Walker};
use crate::parse::MAX_TREE_DEPTH;
use crate::{Category, RiskLevel};

/// What a program does when its options do not matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Simple {
    ReadOnly,
    Effect(RiskLevel, Category, &'static str),
}

use Category as C;
use RiskLevel::{Destructive as D, Normal as N};

pub(super) fn simple(name: &str) -> Option<Simple> {
    let effect = |level, category, action| Some(Simple::Effect(level, category, action));
    match name {
        "ls" | "ll" | "dir" | "vdir" | "cat" | "tac" | "head" | "tail" | "wc" | "grep"
        | "egrep" | "fgrep" | "rg" | "ag" | "pwd" | "echo" | "printf" | "true" | "false"
        | "test" | "[" | "stat" | "file" | "du" | "df" | "which" | "whereis" | "type"
        | "whoami" | "id" | "groups" | "date" | "cal" | "uname" | "printenv" | "cut" | "tr"
        | "diff" | "cmp" | "comm" | "less" | "more" | "tree" | "realpath" | "readlink"
        | "basename" | "dirname" | "seq" | "sleep" | "md5sum" | "sha1sum" | "sha224sum"
        | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum" | "cksum" | "sum" | "od"
        | "hexdump" | "xxd" | "strings" | "jq" | "column" | "nl" | "rev" | "fold" | "expand"
        | "unexpand" | "paste" | "join" | "fmt" | "numfmt" | "nproc" | "free" | "uptime" | "ps"
        | "pgrep" | "locale" | "getconf" | "arch" | "tty" | "logname" | "users" | "who" | "w"
        | "lscpu" | "lsblk" | "lsattr" | "getfacl" | "findmnt" | "zcat" | "zgrep" | "bzcat"
        | "xzcat" | "base64" | "base32" | "shuf" | "expr" | "factor" | "yes" | "man" | "help"
        | "history" | "jobs" | ":" | "pushd" | "popd" | "dirs" | "set" | "shopt" | "wait"
        | "exit" | "return" | "break" | "continue" | "shift" | "let" | "tput" | "clear"
        | "locate" | "env" | "hash" | "unalias" | "unset" | "local" | "declare" | "typeset"
        | "readonly" | "export" | "cd" | "read" | "mapfile" | "readarray" | "getopts" | "bc"
        | "look" | "iconv" | "sha" | "lsof" | "ss" | "netstat" | "top" | "htop" | "vmstat"
        | "iostat" | "tsort" | "pr" | "csvlook" | "nm" | "objdump" | "readelf" | "size" => {
            Some(Simple::ReadOnly)
        }
        // dc's `!` runs a shell command; ldd may run the program it inspects.
        "dc" => effect(
            N,
            C::DynamicCode,
            "runs a dc program, which can run shell commands",
        ),
        "ldd" => effect(N, C::ScriptFile, "may run the program it inspects"),
        "rm" | "unlink" | "shred" | "srm" => effect(D, C::Delete, "deletes files"),
        // rmdir removes only empty folders (it refuses any other): no file's contents go.
        "rmdir" => effect(N, C::Write, "removes empty folders"),
        "truncate" | "sponge" => effect(D, C::Overwrite, "replaces the contents of files"),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" | "chcon" => {
            effect(D, C::Permissions, "changes permissions or ownership")
        }
        "dd" | "mkfs" | "mke2fs" | "wipefs" | "fdisk" | "sfdisk" | "cfdisk" | "gdisk"
        | "sgdisk" | "parted" | "mkswap" | "swapon" | "swapoff" | "blkdiscard" | "hdparm"
        | "losetup" | "cryptsetup" | "umount" | "fsck" | "e2fsck" | "tune2fs" | "resize2fs" => {
            effect(D, C::Disk, "writes to disks or file systems")
        }
        "kill" | "pkill" | "killall" | "skill" | "xkill" | "killall5" => {
            effect(D, C::ProcessKill, "stops processes")
        }
        "shutdown" | "reboot" | "halt" | "poweroff" | "init" | "telinit" | "systemctl"
        | "service" => effect(D, C::ProcessKill, "stops or restarts services"),
        "useradd" | "userdel" | "usermod" | "passwd" | "chpasswd" | "groupadd" | "groupdel"
        | "visudo" | "adduser" | "deluser" => {
            effect(D, C::PrivilegeEscalation, "changes user accounts")
        }
        "mkdir" | "touch" | "mktemp" | "install" | "patch" | "split" | "csplit" | "zip"
        | "unzip" | "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "7z"
        | "ffmpeg" | "convert" | "pandoc" | "gcc" | "cc" | "g++" | "clang" | "rustc" | "javac"
        | "mkfifo" | "mknod" | "sqlite3" => effect(N, C::Write, "creates or changes files"),
        "ssh" | "scp" | "sftp" | "ftp" | "telnet" | "ping" | "dig" | "nslookup" | "host"
        | "whois" | "traceroute" | "http" | "https" | "nc" | "ncat" | "netcat" | "socat"
        | "aria2c" | "fetch" | "curl" | "wget" => effect(N, C::Network, "uses the network"),
        "pip" | "pip3" | "apt" | "apt-get" | "aptitude" | "dpkg" | "npm" | "npx" | "yarn"
        | "pnpm" | "cargo" | "gem" | "conda" | "mamba" | "micromamba" | "uv" | "uvx" | "poetry"
        | "pipx" | "go" | "brew" | "apk" | "dnf" | "yum" | "snap" | "flatpak" => {
            effect(N, C::Install, "installs or builds packages")
        }
        "make" | "cmake" | "ninja" | "java" | "crontab" | "at" | "docker" | "podman"
        | "kubectl" | "iptables" | "nft" | "ufw" | "ip" | "ifconfig" | "route" | "sysctl"
        | "modprobe" | "insmod" | "rmmod" | "hostname" | "timedatectl" | "ulimit" | "umask"
        | "mount" => effect(
            N,
            C::Unrecognized,
            "runs a program that can change the system",
        ),
        _ if name.starts_with("mkfs.") => effect(D, C::Disk, "creates a file system"),
        _ => None,
    }
}

/// Program names that make even unparseable text destructive.
pub(crate) fn is_alarming(name: &str) -> bool {
    matches!(
        simple(name),
        Some(Simple::Effect(RiskLevel::Destructive, _, _))
    ) || matches!(name, "sudo" | "su" | "doas" | "mv" | "cp")
}

/// Programs whose stdout carries bytes from the network.
pub(super) fn is_downloader(name: &str) -> bool {
    matches!(
        name,
        "curl"
            | "wget"
            | "fetch"
            | "nc"
            | "ncat"
            | "netcat"
            | "socat"
            | "aria2c"
            | "http"
            | "https"
            | "lwp-request"
            | "GET"
    )
}

/// Variables that decide which programs, libraries, configs or startup files later commands
/// load or run (pagers, editors, diff and preprocessor helpers, git's config and trace files).
pub(crate) fn is_sensitive_variable(name: &str) -> bool {
    const PREFIXES: &[&str] = &["LD_", "GIT_CONFIG", "GIT_TRACE", "LESS", "DYLD_"];
    PREFIXES.iter().any(|p| name.starts_with(p))
        || matches!(
            name,
            "GIT_EXTERNAL_DIFF"
                | "GIT_PAGER"
                | "PAGER"
                | "MANPAGER"
                | "MANOPT"
                | "MANPL"
                | "BROWSER"
                | "EDITOR"
                | "VISUAL"
                | "GIT_EDITOR"
                | "GIT_SEQUENCE_EDITOR"
                | "GIT_ASKPASS"
                | "SSH_ASKPASS"
                | "GIT_PROXY_COMMAND"
                | "GIT_SSH"
                | "GIT_DIFF_OPTS"
                | "GIT_TEMPLATE_DIR"
                | "RIPGREP_CONFIG_PATH"
                | "JQ_LIBRARY_PATH"
                | "MORE"
                | "SHELL"
                | "TAR_OPTIONS"
                | "XDG_CONFIG_HOME"
                | "XDG_CONFIG_DIRS"
        )
        || matches!(
            name,
            "PATH"
                | "LD_PRELOAD"
                | "LD_LIBRARY_PATH"
                | "LD_AUDIT"
                | "BASH_ENV"
                | "ENV"
                | "PROMPT_COMMAND"
                | "PS4"
                | "IFS"
                | "SHELLOPTS"
                | "BASHOPTS"
                | "PYTHONPATH"
                | "PYTHONSTARTUP"
                | "PYTHONHOME"
                | "PYTHONINSPECT"
                | "PERL5LIB"
                | "PERL5OPT"
                | "RUBYOPT"
                | "NODE_OPTIONS"
                | "GIT_SSH_COMMAND"
                | "GIT_EXEC_PATH"
                | "GIT_DIR"
                | "GIT_WORK_TREE"
                | "HOME"
                | "CDPATH"
        )
}

/// True for names this module gives meaning to; redefining them as aliases or functions changes
/// what later, innocent-looking commands do.
pub(crate) fn is_known_command(name: &str) -> bool {
    simple(name).is_some() || super::programs::is_special(name)
}

/// Destructive names a wildcard command name (`/???/?m`) is matched against.
const WILDCARD_SUSPECTS: &[&str] = &[
    "rm", "rmdir", "unlink", "shred", "truncate", "dd", "chmod", "chown", "chgrp", "kill", "pkill",
    "killall", "sudo", "su", "doas", "mkfs", "wipefs", "mv", "cp", "curl", "wget", "bash", "sh",
    "dash", "zsh", "python", "python3", "perl", "find", "git", "xargs", "env", "eval",
];

impl Walker<'_> {
    /// Judges one command. `argv[0]` is the command name as the shell would see it.
    pub(super) fn run(&mut self, argv: &[Word], ctx: &Ctx, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            self.add(
                N,
                C::Unparseable,
                "wraps commands too deeply to analyse",
                &ctx.snippet,
                ctx.line,
            );
            return;
        }
        let Some((first, rest)) = argv.split_first() else {
            return;
        };
        if first.dynamic || first.from_var {
            self.add(
                N,
                C::DynamicCode,
                "runs a command whose name is only known at run time",
                &ctx.snippet,
                ctx.line,
            );
            let candidates = if first.dynamic {
                first.alternatives.clone()
            } else {
                vec![first.text.clone()]
            };
            for candidate in candidates {
                let mut expanded: Vec<Word> =
                    candidate.split_whitespace().map(Word::literal).collect();
                expanded.extend_from_slice(rest);
                self.run(&expanded, ctx, depth + 1);
            }
            return;
        }
        if first.glob {
            self.add(
                N,
                C::DynamicCode,
                "uses a wildcard as the command name, which the shell expands at run time",
                &ctx.snippet,
                ctx.line,
            );
            let pattern = basename(&first.text);
            for suspect in WILDCARD_SUSPECTS.iter().filter(|s| glob_match(pattern, s)) {
                let mut expanded = vec![Word::literal(suspect)];
                expanded.extend_from_slice(rest);
                self.run(&expanded, ctx, depth + 1);
            }
            return;
        }
        if first.text.contains(',') && first.text.contains(['{', '}']) {
            // `{rm,-rf,x}`: tree-sitter-bash does not parse brace expansion in command position.
            let spelled = format!("{{{}}}", first.text.trim_matches(['{', '}']));
            if let Some(expanded) = brace_expand(&spelled) {
                let mut words: Vec<Word> = expanded.iter().map(|w| Word::literal(w)).collect();
                words.extend_from_slice(rest);
                self.run(&words, ctx, depth + 1);
                return;
            }
        }
        let name = basename(&first.text).to_owned();
        if let Some(value) = self.state.aliases.remove(&name) {
            // Bash does not re-expand an alias inside its own expansion; removing it while the
            // expansion is analysed mirrors that and ends `alias ls='ls -l'` recursion.
            let mut code = value.clone();
            for word in rest {
                code.push(' ');
                code.push_str(&quote(word));
            }
            self.nested_shell(&code, ctx.line, &format!("through alias {name}"));
            self.state.aliases.insert(name, value);
            return;
        }
        if self.state.functions.contains(&name) {
            return;
        }
        if first.text.contains('/') && !is_known_command(&name) {
            self.add(
                N,
                C::ScriptFile,
                "runs a program file that IronClaw cannot see into",
                &ctx.snippet,
                ctx.line,
            );
            return;
        }
        self.program(&name, argv, ctx, depth + 1);
    }
}

/// What a command writes to stdout, for the next element of a pipeline.
pub(super) fn output(argv: &[Word], stdin: &Input) -> Input {
    let Some(first) = argv.first() else {
        return Input::Opaque;
    };
    let name = basename(&first.text);
    if is_downloader(name) {
        let text: Vec<&str> = argv.iter().map(|w| w.text.as_str()).collect();
        return Input::Download(text.join(" "));
    }
    if let Input::Download(source) = stdin {
        return Input::Download(source.clone());
    }
    let args = &argv[1..];
    match name {
        "echo" => {
            let words: Vec<&Word> = args
                .iter()
                .skip_while(|w| matches!(w.text.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                .collect();
            Input::Text {
                line: 0,
                code: words
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                dynamic: words.iter().any(|w| !w.is_literal()),
            }
        }
        "printf" => match args.split_first() {
            Some((format, rest)) if !format.text.contains('%') => Input::Text {
                line: 0,
                code: format.text.replace("\\n", "\n"),
                dynamic: !format.is_literal() || !rest.is_empty(),
            },
            Some((format, rest)) if matches!(format.text.as_str(), "%s" | "%s\\n" | "%b") => {
                Input::Text {
                    line: 0,
                    code: rest
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(""),
                    dynamic: rest.iter().any(|w| !w.is_literal()),
                }
            }
            _ => Input::Opaque,
        },
        "cat" => match args.iter().find(|w| !w.text.starts_with('-')) {
            Some(file) => Input::File(file.text.clone()),
            None => stdin.clone(),
        },
        _ => Input::Opaque,
    }
}

pub(super) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Quotes a word for re-parsing; dynamic words keep their source text so they stay dynamic.
pub(super) fn quote(word: &Word) -> String {
    if word.dynamic {
        word.text.clone()
    } else {
        format!("'{}'", word.text.replace('\'', r"'\''"))
    }
}
