//! Everyday tools whose effect hides in their options: git, find, sed, awk, cp/mv and friends,
//! downloaders and package managers.

use super::programs::{first_operand, has_flag};
use super::words::Word;
use super::{Ctx, Walker};
use crate::paths::place;
use crate::{Category as C, RiskLevel};
use RiskLevel::{Destructive as D, Normal as N};

pub(super) fn is_tool(name: &str) -> bool {
    matches!(
        name,
        "git"
            | "find"
            | "cp"
            | "mv"
            | "ln"
            | "install"
            | "rsync"
            | "tar"
            | "unzip"
            | "tee"
            | "sort"
            | "uniq"
            | "curl"
            | "wget"
            | "pip"
            | "pip3"
            | "npm"
            | "apt"
            | "apt-get"
            | "uv"
            | "conda"
            | "mount"
            | "hostname"
            | "umask"
            | "tree"
    )
}

/// Package-manager subcommands that only look.
pub(super) fn is_package_query(sub: &str) -> bool {
    matches!(
        sub,
        "list"
            | "show"
            | "freeze"
            | "check"
            | "search"
            | "view"
            | "info"
            | "policy"
            | "ls"
            | "outdated"
            | "help"
            | "--version"
            | "-V"
            | "--help"
            | "config"
            | "cache"
    )
}

impl Walker<'_> {
    pub(super) fn tool(&mut self, name: &str, args: &[Word], ctx: &Ctx, depth: usize) {
        match name {
            "git" => self.git(args, ctx),
            "find" => self.find(args, ctx, depth),
            "sed" => self.sed(args, ctx),
            "awk" | "gawk" | "mawk" | "nawk" => self.awk(args, ctx),
            "cp" | "mv" | "install" => self.copy(name, args, ctx),
            "ln" => {
                if has_flag(args, 'f', "--force") {
                    self.effect(D, C::Overwrite, "replaces existing files with links", ctx);
                } else {
                    self.effect(N, C::Write, "creates links", ctx);
                }
                self.last_operand_outside(args, ctx);
            }
            "rsync" => {
                if args
                    .iter()
                    .any(|a| a.text.starts_with("--delete") || a.text == "--remove-source-files")
                {
                    self.effect(D, C::Delete, "deletes files while syncing", ctx);
                } else if args.iter().any(|a| a.text == "--ignore-existing") {
                    self.effect(N, C::Write, "copies files (never over existing ones)", ctx);
                } else {
                    self.effect(
                        D,
                        C::Overwrite,
                        "copies files and may replace existing ones",
                        ctx,
                    );
                }
                self.last_operand_outside(args, ctx);
            }
            "tar" => self.tar(args, ctx),
            "unzip" => {
                if has_flag(args, 'l', "--list") || has_flag(args, 't', "") {
                } else if has_flag(args, 'o', "") {
                    self.effect(D, C::Overwrite, "extracts files over existing ones", ctx);
                } else {
                    self.effect(N, C::Write, "extracts files", ctx);
                }
            }
            "tee" => self.output_files(name, args, ctx),
            "sort" | "uniq" | "tree" => {
                self.output_files(name, args, ctx);
                // Their outputs were judged above; any other option must be known to only read.
                let rest: Vec<Word> = args
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| {
                        let output = |w: &Word| w.text == "-o" || w.text == "--output";
                        !(output(a)
                            || a.text.starts_with("--output=")
                            || (*i > 0 && output(&args[i - 1])))
                    })
                    .map(|(_, a)| a.clone())
                    .collect();
                let rest = if name == "uniq" {
                    // uniq's second operand is its output file, already judged.
                    let first = first_operand(&rest, &["-f", "-s", "-w"]);
                    let mut rest = rest;
                    if rest.len() > first + 1 {
                        rest.remove(first + 1);
                    }
                    rest
                } else {
                    rest
                };
                self.read_only_options(name, &rest, ctx);
            }
            "curl" | "wget" => self.download(name, args, ctx),
            "pip" | "pip3" | "npm" | "apt" | "apt-get" | "uv" | "conda" => {
                let sub = args.iter().find(|a| !a.text.starts_with('-'));
                if !sub.is_some_and(|s| is_package_query(&s.text)) {
                    self.effect(N, C::Install, "installs or changes packages", ctx);
                }
            }
            "mount" | "hostname" | "umask" if args.iter().all(|a| a.text.starts_with('-')) => {}
            "mount" => self.effect(D, C::Disk, "mounts a file system", ctx),
            "hostname" | "umask" => {
                self.effect(N, C::Environment, "changes system or session settings", ctx)
            }
            _ => self.other_interpreter(name, args, ctx),
        }
    }

    fn last_operand_outside(&mut self, args: &[Word], ctx: &Ctx) {
        if let Some(last) = args.iter().rev().find(|a| !a.text.starts_with('-')) {
            let where_to = place(&last.text, self.state.cwd.as_deref());
            self.outside(&where_to, "writes", &ctx.snippet, ctx.line);
        }
    }

    fn find(&mut self, args: &[Word], ctx: &Ctx, depth: usize) {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            i += 1;
            match arg.text.as_str() {
                "-delete" => self.effect(D, C::Delete, "deletes the files it finds", ctx),
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    let command: Vec<Word> = args[i..]
                        .iter()
                        .take_while(|w| w.text != ";" && w.text != "+")
                        .map(|w| {
                            if w.text.contains("{}") {
                                Word {
                                    dynamic: true,
                                    ..w.clone()
                                }
                            } else {
                                w.clone()
                            }
                        })
                        .collect();
                    i += command.len() + 1;
                    self.run(&command, ctx, depth);
                }
                "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                    self.effect(N, C::Write, "writes its results to a file", ctx);
                    if let Some(file) = args.get(i) {
                        let where_to = place(&file.text, self.state.cwd.as_deref());
                        self.outside(&where_to, "writes", &ctx.snippet, ctx.line);
                    }
                }
                _ => {}
            }
        }
    }

    fn copy(&mut self, name: &str, args: &[Word], ctx: &Ctx) {
        let no_clobber = args.iter().any(|a| {
            matches!(
                a.text.as_str(),
                "--no-clobber" | "--update=none" | "--update=none-fail"
            )
        }) || has_flag(args, 'n', "--no-clobber");
        let verb = if name == "mv" { "moves" } else { "copies" };
        if no_clobber && name != "install" {
            self.effect(
                N,
                C::Write,
                &format!("{verb} files (never over existing ones)"),
                ctx,
            );
        } else {
            self.effect(
                D,
                C::Overwrite,
                &format!("{verb} files and may replace existing ones"),
                ctx,
            );
            // `cp SOURCE DEST` onto a name that is not there yet replaces nothing; more
            // operands, a target-directory option or a name built at run time are not known.
            let operands: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
            let plain = args
                .iter()
                .filter(|a| a.text.starts_with('-'))
                .all(|a| matches!(a.text.as_str(), "-p" | "-v" | "-a" | "-r" | "-R" | "--"));
            let exact = match operands.as_slice() {
                [_, dest] if plain && name != "install" && !dest.dynamic && !dest.glob => {
                    crate::paths::workspace_relative(&dest.text, self.state.cwd.as_deref())
                }
                _ => None,
            };
            self.out.replaces(exact);
        }
        if name == "mv" {
            self.operands_outside(args, "moves files", ctx);
        } else {
            self.last_operand_outside(args, ctx);
        }
    }

    fn tar(&mut self, args: &[Word], ctx: &Ctx) {
        let mode = args.first().map(|a| a.text.as_str()).unwrap_or_default();
        let cluster =
            |c: char| (!mode.starts_with("--") && mode.contains(c)) || has_flag(args, c, "");
        if args.iter().any(|a| a.text == "--remove-files") {
            self.effect(D, C::Delete, "deletes files after archiving them", ctx);
        }
        if args.iter().any(|a| {
            a.text.starts_with("--to-command")
                || a.text.starts_with("--checkpoint-action")
                || a.text.starts_with("--use-compress-program")
                || a.text == "-I"
        }) {
            self.effect(N, C::DynamicCode, "makes tar run another program", ctx);
        }
        if cluster('x')
            || args
                .iter()
                .any(|a| a.text == "--extract" || a.text == "--get")
        {
            self.effect(
                N,
                C::Write,
                "extracts files (may replace files of the same name)",
                ctx,
            );
        } else if cluster('t') || args.iter().any(|a| a.text == "--list") {
        } else {
            self.effect(N, C::Write, "writes an archive", ctx);
        }
    }

    /// `tee FILE`, `sort -o FILE`, `uniq IN OUT`, `tree -o FILE`.
    fn output_files(&mut self, name: &str, args: &[Word], ctx: &Ctx) {
        let files: Vec<&Word> = match name {
            "tee" => args.iter().filter(|a| !a.text.starts_with('-')).collect(),
            "uniq" => args
                .get(first_operand(args, &["-f", "-s", "-w"])..)
                .unwrap_or_default()
                .iter()
                .skip(1)
                .take(1)
                .collect(),
            _ => args
                .windows(2)
                .filter(|w| w[0].text == "-o" || w[0].text == "--output")
                .map(|w| &w[1])
                .chain(args.iter().filter(|a| a.text.starts_with("--output=")))
                .collect(),
        };
        let appends = name == "tee" && has_flag(args, 'a', "--append");
        for file in files {
            let path = file.text.trim_start_matches("--output=");
            let where_to = place(path, self.state.cwd.as_deref());
            if where_to.is_discard() {
                continue;
            }
            if appends {
                self.effect(N, C::Write, "appends to a file", ctx);
            } else {
                self.effect(D, C::Overwrite, "replaces the contents of a file", ctx);
            }
            self.outside(&where_to, "writes", &ctx.snippet, ctx.line);
        }
    }

    fn download(&mut self, name: &str, args: &[Word], ctx: &Ctx) {
        self.effect(N, C::Network, "uses the network", ctx);
        let to_stdout = |a: &Word| {
            matches!(
                a.text.as_str(),
                "-" | "-O-" | "-qO-" | "-qO" | "--output-document=-"
            )
        };
        let output = args.iter().enumerate().find_map(|(i, a)| {
            let t = a.text.as_str();
            if matches!(t, "-o" | "-O" | "--output" | "--output-document") && name == "curl"
                || t == "-O"
            {
                Some(args.get(i + 1).map(|w| w.text.clone()).unwrap_or_default())
            } else {
                t.strip_prefix("--output=")
                    .or_else(|| t.strip_prefix("--output-document="))
                    .map(str::to_owned)
            }
        });
        let writes = match name {
            "curl" => output.is_some() || has_flag(args, 'O', "--remote-name"),
            _ => {
                !(args.iter().any(to_stdout)
                    || output.as_deref() == Some("-")
                    || args.iter().any(|a| a.text == "--spider"))
            }
        };
        if writes {
            self.effect(N, C::Write, "saves downloaded files", ctx);
            if let Some(path) = output {
                let where_to = place(&path, self.state.cwd.as_deref());
                self.outside(&where_to, "writes", &ctx.snippet, ctx.line);
            }
        }
    }
}
