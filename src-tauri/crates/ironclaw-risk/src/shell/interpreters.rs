//! Shells and interpreters: the code they run comes from `-c`, a heredoc, a pipe or a file, and
//! is re-parsed (shell, Python) or reported as dynamic (perl, node, ...).

use super::commands::basename;
use super::words::Word;
use super::{Ctx, Input, Walker};
use crate::{Category as C, RiskLevel};
use RiskLevel::{Destructive as D, Normal as N};

pub(super) fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash"
            | "dash"
            | "zsh"
            | "ksh"
            | "mksh"
            | "ash"
            | "fish"
            | "rbash"
            | "posh"
            | "yash"
            | "tcsh"
            | "csh"
    )
}

pub(super) fn is_python(name: &str) -> bool {
    name.starts_with("python") || name.starts_with("pypy") || name == "ipython"
}

pub(super) fn is_other_interpreter(name: &str) -> bool {
    matches!(
        name,
        "perl"
            | "ruby"
            | "node"
            | "nodejs"
            | "php"
            | "lua"
            | "Rscript"
            | "julia"
            | "deno"
            | "bun"
            | "tclsh"
            | "osascript"
            | "pwsh"
            | "powershell"
            | "awk"
            | "gawk"
            | "mawk"
            | "nawk"
            | "sed"
            | "irb"
    )
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Lang {
    Shell,
    Python,
}

impl Walker<'_> {
    pub(super) fn shell(&mut self, name: &str, args: &[Word], ctx: &Ctx) {
        let (mut command_mode, mut stdin_mode) = (false, false);
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let a = arg.text.as_str();
            if a == "--" {
                i += 1;
                break;
            }
            if a.starts_with("--") {
                i += if matches!(a, "--rcfile" | "--init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
                if a.starts_with('-') {
                    command_mode |= a.contains('c');
                    stdin_mode |= a.contains('s');
                }
                i += if a.ends_with('o') || a.ends_with('O') {
                    2
                } else {
                    1
                };
                continue;
            }
            break;
        }
        let operands = args.get(i..).unwrap_or_default();
        if command_mode {
            let via = format!("inside {name} -c");
            self.code_argument(operands.first(), ctx, Lang::Shell, &via);
        } else if operands.is_empty() || stdin_mode {
            self.stdin_code(name, Lang::Shell, ctx);
        } else {
            self.script_file(operands.first(), ctx);
        }
    }

    pub(super) fn python(&mut self, name: &str, args: &[Word], ctx: &Ctx) {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let a = arg.text.as_str();
            match a {
                "-c" => {
                    return self.code_argument(
                        args.get(i + 1),
                        ctx,
                        Lang::Python,
                        "inside python -c",
                    )
                }
                "-m" => return self.python_module(args.get(i + 1), args, ctx),
                "-" => break,
                "-V" | "--version" | "-h" | "--help" => return,
                "-W" | "-X" => i += 2,
                _ if a.starts_with("-c") => {
                    let code = Word {
                        text: a[2..].to_owned(),
                        ..arg.clone()
                    };
                    return self.code_argument(Some(&code), ctx, Lang::Python, "inside python -c");
                }
                _ if a.starts_with('-') => i += 1,
                _ => return self.script_file(Some(arg), ctx),
            }
        }
        self.stdin_code(name, Lang::Python, ctx);
    }

    fn python_module(&mut self, module: Option<&Word>, args: &[Word], ctx: &Ctx) {
        let module = module.map(|m| m.text.as_str()).unwrap_or_default();
        match module {
            "pip" => {
                let sub = args.iter().skip_while(|w| w.text != "pip").nth(1);
                if !sub.is_some_and(|s| super::tools::is_package_query(&s.text)) {
                    self.effect(N, C::Install, "installs or builds packages", ctx);
                }
            }
            "json.tool" | "site" | "sysconfig" | "platform" | "tokenize" | "dis" | "pydoc" => {}
            "http.server" | "smtpd" | "ftplib" => {
                self.effect(N, C::Network, "serves or fetches over the network", ctx)
            }
            "venv" | "virtualenv" | "compileall" | "py_compile" | "zipapp" => {
                self.effect(N, C::Write, "creates or changes files", ctx)
            }
            _ => self.effect(
                N,
                C::Unrecognized,
                &format!("runs Python module `{module}`, which IronClaw does not recognise"),
                ctx,
            ),
        }
    }

    pub(super) fn script_file(&mut self, file: Option<&Word>, ctx: &Ctx) {
        if file.is_some_and(|f| f.dynamic) && !ctx.substituted.is_empty() && !ctx.download_in_args {
            return self.substituted_code(Lang::Shell, ctx);
        }
        if ctx.download_in_args && file.is_some_and(|f| f.dynamic) {
            self.effect(
                D,
                C::RemoteCode,
                "runs code downloaded from the network",
                ctx,
            );
        } else {
            self.effect(
                N,
                C::ScriptFile,
                "runs a script file that IronClaw cannot see into",
                ctx,
            );
        }
    }

    /// Judges code given as an argument (`bash -c CODE`, `eval`, `python -c CODE`).
    pub(super) fn code_argument(&mut self, code: Option<&Word>, ctx: &Ctx, lang: Lang, via: &str) {
        let Some(code) = code else {
            return;
        };
        if ctx.download_in_args && code.dynamic {
            self.effect(
                D,
                C::RemoteCode,
                "runs code downloaded from the network",
                ctx,
            );
        }
        if !code.is_literal() {
            self.effect(
                N,
                C::DynamicCode,
                "runs code that is only known at run time",
                ctx,
            );
            if code.dynamic {
                return self.substituted_code(lang, ctx);
            }
        }
        self.nested_code(lang, &code.text, ctx.line, via);
    }

    /// Analyses what argument substitutions print, as the code an interpreter will run.
    pub(super) fn substituted_code(&mut self, lang: Lang, ctx: &Ctx) {
        for code in ctx.substituted.clone() {
            self.nested_code(lang, &code, ctx.line, "printed by a substitution");
        }
    }

    /// Judges code an interpreter reads from stdin.
    pub(super) fn stdin_code(&mut self, name: &str, lang: Lang, ctx: &Ctx) {
        match &ctx.input {
            Input::Nothing => self.effect(
                N,
                C::DynamicCode,
                &format!("starts an interactive {name}, whose input IronClaw cannot see"),
                ctx,
            ),
            Input::Text {
                code,
                dynamic,
                line,
            } => {
                if *dynamic {
                    self.effect(
                        N,
                        C::DynamicCode,
                        "feeds code built at run time to an interpreter",
                        ctx,
                    );
                }
                let code = code.clone();
                let at = if *line > 0 { *line } else { ctx.line };
                self.nested_code(lang, &code, at, &format!("fed to {name}"));
            }
            Input::Download(source) => {
                let chain = format!("{source} | … {}", ctx.snippet);
                self.add(
                    D,
                    C::RemoteCode,
                    &format!("runs code downloaded from the network in {name}"),
                    &chain,
                    ctx.line,
                );
            }
            Input::File(path) => {
                let path = basename(path).to_owned();
                self.effect(
                    N,
                    C::ScriptFile,
                    &format!("runs script file {path} in {name}"),
                    ctx,
                )
            }
            Input::Opaque => self.effect(
                N,
                C::DynamicCode,
                &format!("runs code piped into {name}, which IronClaw cannot see"),
                ctx,
            ),
        }
    }

    fn nested_code(&mut self, lang: Lang, code: &str, line: usize, via: &str) {
        match lang {
            Lang::Shell => self.nested_shell(code, line, via),
            Lang::Python => self.nested_python(code, line, via),
        }
    }
}
