//! Programs whose risk depends on their arguments: wrappers that run another command, shells and
//! interpreters that run code, and the shell builtins that change how later words are read.

use super::commands::{quote, simple, Simple};
use super::interpreters::{is_other_interpreter, is_python, is_shell, Lang};
use super::words::Word;
use super::{Ctx, Walker};
use crate::paths::place;
use crate::{Category as C, RiskLevel};
use RiskLevel::{Destructive as D, Normal as N};

/// A wrapper runs its operand as a command: options taking a value, and how many positional
/// operands come before the command (`timeout 5 cmd`).
fn wrapper(name: &str) -> Option<(&'static [&'static str], usize)> {
    Some(match name {
        "nohup" | "setsid" | "builtin" | "unbuffer" | "caffeinate" | "exec" | "command" => {
            (&["-a"], 0)
        }
        "nice" => (&["-n", "--adjustment"], 0),
        "timeout" => (&["-s", "--signal", "-k", "--kill-after"], 1),
        "stdbuf" => (&["-i", "-o", "-e", "--input", "--output", "--error"], 0),
        "time" => (&["-f", "--format", "-o", "--output"], 0),
        "ionice" => (&["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"], 0),
        "taskset" | "chrt" | "flock" => (&["-w", "-E", "--timeout"], 1),
        "xvfb-run" => (&["-n", "-s", "-f", "-e", "-p"], 0),
        "sudo" | "runuser" => (
            &[
                "-u", "-g", "-p", "-C", "-h", "-D", "-R", "-T", "-U", "--user", "--group",
                "--prompt", "--chdir", "-G",
            ],
            0,
        ),
        "doas" => (&["-u", "-C"], 0),
        "pkexec" => (&["--user"], 0),
        "chroot" => (&["--userspec", "--groups"], 1),
        "nsenter" | "unshare" => (&["-t", "--target", "-S", "-G"], 0),
        _ => return None,
    })
}

fn is_privileged_wrapper(name: &str) -> bool {
    matches!(
        name,
        "sudo" | "doas" | "pkexec" | "runuser" | "chroot" | "nsenter" | "unshare"
    )
}

/// Names `program` handles beyond the plain table.
pub(super) fn is_special(name: &str) -> bool {
    wrapper(name).is_some()
        || is_shell(name)
        || is_python(name)
        || is_other_interpreter(name)
        || super::tools::is_tool(name)
        || matches!(
            name,
            "env"
                | "xargs"
                | "watch"
                | "parallel"
                | "busybox"
                | "su"
                | "eval"
                | "source"
                | "."
                | "trap"
                | "alias"
                | "cd"
                | "pushd"
                | "read"
                | "mapfile"
                | "readarray"
                | "getopts"
                | "kill"
                | "pkill"
                | "killall"
        )
}

/// Index of the first operand after options; `with_value` lists options that consume the next
/// word.
pub(super) fn first_operand(args: &[Word], with_value: &[&str]) -> usize {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let a = arg.text.as_str();
        if a == "--" {
            return i + 1;
        }
        if !(a.starts_with('-') && a.len() > 1) {
            return i;
        }
        i += if with_value.contains(&a) { 2 } else { 1 };
    }
    i
}

/// True when a short option cluster (`-rf`) contains `flag`, or a long option equals `long`.
pub(super) fn has_flag(args: &[Word], flag: char, long: &str) -> bool {
    args.iter().take_while(|a| a.text != "--").any(|a| {
        let t = a.text.as_str();
        t == long || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(flag))
    })
}

impl Walker<'_> {
    pub(super) fn effect(&mut self, level: RiskLevel, category: C, action: &str, ctx: &Ctx) {
        self.add(level, category, action, &ctx.snippet, ctx.line);
    }

    pub(super) fn program(&mut self, name: &str, argv: &[Word], ctx: &Ctx, depth: usize) {
        let args = argv.get(1..).unwrap_or_default();
        // `rm --help`, `git --version`: a known program asked only to describe itself.
        if let [only] = args {
            if matches!(only.text.as_str(), "--help" | "--version")
                && only.is_literal()
                && super::commands::is_known_command(name)
            {
                return;
            }
        }
        if let Some((with_value, skip)) = wrapper(name) {
            if is_privileged_wrapper(name) {
                self.effect(
                    D,
                    C::PrivilegeEscalation,
                    &format!("runs as another user or with more privileges ({name})"),
                    ctx,
                );
            }
            if name == "command" && (has_flag(args, 'v', "-v") || has_flag(args, 'V', "-V")) {
                return;
            }
            let start = first_operand(args, with_value) + skip;
            if let Some(rest) = args.get(start..).filter(|r| !r.is_empty()) {
                self.run(rest, ctx, depth);
            } else if is_privileged_wrapper(name)
                && (has_flag(args, 's', "--shell") || has_flag(args, 'i', "--login"))
            {
                self.effect(N, C::DynamicCode, "starts an interactive shell", ctx);
            }
            return;
        }
        if is_shell(name) {
            return self.shell(name, args, ctx);
        }
        if is_python(name) {
            return self.python(name, args, ctx);
        }
        if is_other_interpreter(name) || super::tools::is_tool(name) {
            return self.tool(name, args, ctx, depth);
        }
        match name {
            "env" => self.env(args, ctx, depth),
            "xargs" => {
                let start = first_operand(
                    args,
                    &[
                        "-n",
                        "-L",
                        "-I",
                        "-P",
                        "-s",
                        "-d",
                        "-E",
                        "-a",
                        "--max-args",
                        "--arg-file",
                    ],
                );
                if let Some(rest) = args.get(start..).filter(|r| !r.is_empty()) {
                    let mut command = rest.to_vec();
                    command.push(Word {
                        dynamic: true,
                        ..Word::literal("<stdin>")
                    });
                    self.run(&command, ctx, depth);
                }
            }
            "watch" | "parallel" => {
                let start = first_operand(args, &["-n", "--interval", "-j", "--jobs"]);
                let rest = args.get(start..).unwrap_or_default();
                let code: Vec<String> = rest
                    .iter()
                    .take_while(|w| w.text != ":::")
                    .map(|w| w.text.clone())
                    .collect();
                self.nested_shell(&code.join(" "), ctx.line, &format!("run by {name}"));
            }
            "busybox" => self.run(args, ctx, depth),
            "su" => {
                self.effect(D, C::PrivilegeEscalation, "runs as another user (su)", ctx);
                let code = args
                    .iter()
                    .position(|w| w.text == "-c" || w.text == "--command")
                    .and_then(|i| args.get(i + 1));
                self.code_argument(code, ctx, Lang::Shell, "inside su -c");
            }
            "eval" => {
                let code = Word {
                    text: args
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    dynamic: args.iter().any(|w| w.dynamic),
                    from_var: args.iter().any(|w| w.from_var),
                    ..Word::default()
                };
                self.code_argument(Some(&code), ctx, Lang::Shell, "inside eval");
            }
            "source" | "." => {
                if ctx.download_in_args {
                    self.effect(
                        D,
                        C::RemoteCode,
                        "runs code downloaded from the network",
                        ctx,
                    );
                } else if !ctx.substituted.is_empty() {
                    self.substituted_code(Lang::Shell, ctx);
                } else {
                    self.effect(N, C::ScriptFile, "runs a script file in this shell", ctx);
                }
            }
            "trap" => {
                if let Some(code) = args.first().filter(|w| !w.text.starts_with('-')) {
                    self.code_argument(Some(code), ctx, Lang::Shell, "run by trap");
                }
            }
            "alias" => self.alias(args, ctx),
            "cd" | "pushd" => self.change_directory(args),
            "read" | "mapfile" | "readarray" | "getopts" => {
                for word in args.iter().filter(|w| !w.text.starts_with('-')) {
                    self.state.assign(&word.text, None);
                }
            }
            // Compressors without file operands, or with -c, only stream stdin to stdout.
            "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd"
                if args.iter().all(|a| a.text.starts_with('-'))
                    || has_flag(args, 'c', "--stdout") => {}
            "kill"
                if args
                    .iter()
                    .any(|w| matches!(w.text.as_str(), "-l" | "-L" | "-0")) => {}
            _ => match simple(name) {
                Some(Simple::ReadOnly) => self.read_only_options(name, args, ctx),
                Some(Simple::Effect(level, category, action)) => {
                    self.effect(level, category, action, ctx);
                    let verb = match category {
                        C::Delete => Some("deletes"),
                        C::Permissions => Some("changes permissions"),
                        C::Overwrite => Some("writes"),
                        C::Write if matches!(name, "mkdir" | "touch" | "mkfifo" | "mknod") => {
                            Some("writes")
                        }
                        _ => None,
                    };
                    if let Some(verb) = verb {
                        self.operands_outside(args, verb, ctx);
                    }
                }
                None => self.effect(
                    N,
                    C::Unrecognized,
                    &format!("runs `{name}`, which IronClaw does not recognise"),
                    ctx,
                ),
            },
        }
    }

    /// A read-only program is read-only only with the options known to just read: anything
    /// else (a write, a helper program, a config, or an option IronClaw does not know) is not.
    pub(super) fn read_only_options(&mut self, name: &str, args: &[Word], ctx: &Ctx) {
        if let Some(option) = super::options::first_unknown(name, args) {
            if option == super::options::XXD_OUTPUT {
                self.effect(D, C::Overwrite, "replaces the contents of a file", ctx);
                return;
            }
            self.effect(
                N,
                C::Unrecognized,
                &format!(
                    "uses `{option}`, which IronClaw does not know to be read-only for `{name}` \
                     (it could write files or run programs)"
                ),
                ctx,
            );
        }
    }

    /// Reports operands that are literal paths outside the workspace.
    pub(super) fn operands_outside(&mut self, args: &[Word], verb: &str, ctx: &Ctx) {
        let mut options_done = false;
        for arg in args {
            if arg.text == "--" {
                options_done = true;
                continue;
            }
            if !options_done && arg.text.starts_with('-') {
                continue;
            }
            let where_to = place(&arg.text, self.state.cwd.as_deref());
            self.outside(&where_to, verb, &ctx.snippet, ctx.line);
        }
    }

    fn env(&mut self, args: &[Word], ctx: &Ctx, depth: usize) {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let a = arg.text.as_str();
            if a == "-S" || a == "--split-string" {
                let code: Vec<String> = args[i + 1..].iter().map(quote).collect();
                let joined = args.get(i + 1).map(|w| w.text.clone()).unwrap_or_default()
                    + " "
                    + &code.get(1..).unwrap_or_default().join(" ");
                self.nested_shell(&joined, ctx.line, "inside env -S");
                return;
            }
            if matches!(a, "-u" | "--unset" | "-C" | "--chdir") {
                i += 2;
            } else if a.starts_with('-') {
                i += 1;
            } else if let Some((name, _)) = a.split_once('=') {
                if super::commands::is_sensitive_variable(name) {
                    self.effect(
                        N,
                        C::Environment,
                        &format!("changes {name}, which decides what the command loads or runs"),
                        ctx,
                    );
                }
                i += 1;
            } else {
                break;
            }
        }
        if let Some(rest) = args.get(i..).filter(|r| !r.is_empty()) {
            self.run(rest, ctx, depth);
        }
    }

    fn alias(&mut self, args: &[Word], ctx: &Ctx) {
        for arg in args {
            let Some((name, value)) = arg.text.split_once('=') else {
                continue;
            };
            if super::commands::is_known_command(name) {
                self.effect(
                    N,
                    C::Environment,
                    &format!("redefines `{name}` as an alias for the rest of the session"),
                    ctx,
                );
            }
            if !arg.is_literal() {
                self.effect(N, C::DynamicCode, "defines an alias built at run time", ctx);
            }
            // Judged at definition: the session persists, so a later step may use it.
            self.nested_shell(value, ctx.line, &format!("in alias {name}"));
            self.state.aliases.insert(name.to_owned(), value.to_owned());
        }
    }

    fn change_directory(&mut self, args: &[Word]) {
        let target = args
            .iter()
            .find(|w| !w.text.starts_with('-') || w.text == "-");
        self.state.cwd = match target {
            None => None,
            Some(word) if !word.is_literal() || word.text == "-" => Some("$unknown".into()),
            Some(word) => match place(&word.text, self.state.cwd.as_deref()) {
                crate::paths::Place::Workspace => Some(format!(
                    "/workspace/{}",
                    word.text.trim_start_matches("/workspace")
                ))
                .filter(|_| word.text.starts_with('/'))
                .or(self.state.cwd.clone()),
                crate::paths::Place::Outside(path) => Some(path),
                crate::paths::Place::Temp => Some("/tmp".into()),
                _ => Some("$unknown".into()),
            },
        };
    }
}
