//! git: which subcommands and flags discard work or rewrite history.

use super::programs::has_flag;
use super::words::Word;
use super::{Ctx, Walker};
use crate::{Category as C, RiskLevel};
use RiskLevel::{Destructive as D, Normal as N};

impl Walker<'_> {
    pub(super) fn git(&mut self, args: &[Word], ctx: &Ctx) {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            match arg.text.as_str() {
                "-C" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
                "-c" => {
                    self.effect(
                        N,
                        C::DynamicCode,
                        "overrides git settings, which can run programs",
                        ctx,
                    );
                    i += 2;
                }
                a if a.starts_with("-c") || a.starts_with("--config-env") => {
                    // `-ccore.pager=...`: one word, same effect.
                    self.effect(
                        N,
                        C::DynamicCode,
                        "overrides git settings, which can run programs",
                        ctx,
                    );
                    i += 1;
                }
                a if a.starts_with('-') => {
                    if !(super::git_options::git_global_is_safe(a) && arg.is_literal()) {
                        self.effect(
                            N,
                            C::Unrecognized,
                            &format!(
                                "uses the git option `{a}`, which IronClaw does not know to be \
                                 read-only (it could run programs or write files)"
                            ),
                            ctx,
                        );
                    }
                    i += 1;
                }
                _ => break,
            }
        }
        let Some(sub) = args.get(i) else {
            return;
        };
        let rest = args.get(i + 1..).unwrap_or_default();
        let has = |options: &[&str]| rest.iter().any(|a| options.contains(&a.text.as_str()));
        let history =
            |walker: &mut Self, action: &str| walker.effect(D, C::GitHistory, action, ctx);
        let operands: Vec<&Word> = rest.iter().filter(|a| !a.text.starts_with('-')).collect();
        match sub.text.as_str() {
            "status" | "log" | "diff" | "show" | "blame" | "grep" | "ls-files" | "ls-tree"
            | "rev-parse" | "rev-list" | "describe" | "shortlog" | "cat-file" | "whatchanged"
            | "help" | "version" | "count-objects" | "for-each-ref" | "name-rev" | "merge-base"
            | "show-ref" | "check-ignore" | "var" | "show-branch" => {
                if let Some(option) = super::git_options::git_first_unknown(rest) {
                    let output = option.starts_with("--output");
                    self.effect(
                        if output { D } else { N },
                        if output {
                            C::Overwrite
                        } else {
                            C::Unrecognized
                        },
                        &if output {
                            format!("writes its output to a file (`git {} {option}`)", sub.text)
                        } else {
                            format!(
                                "uses `{option}`, which IronClaw does not know to be read-only \
                                 for `git {}` (it could run programs or write files)",
                                sub.text
                            )
                        },
                        ctx,
                    );
                }
            }
            "reflog" if has(&["expire", "delete"]) => history(self, "destroys the reflog"),
            "reflog" => {}
            "reset" if has(&["--hard", "--merge", "--keep"]) => {
                history(self, "discards uncommitted changes")
            }
            "clean" if !(has(&["-n", "--dry-run"])) => history(self, "deletes untracked files"),
            "clean" => {}
            "checkout"
                if has(&["--", ".", "-f", "--force", "-p", "--patch"]) || operands.len() >= 2 =>
            {
                history(self, "discards uncommitted changes")
            }
            "restore" if !has(&["--staged", "-S"]) || has(&["--worktree", "-W"]) => {
                history(self, "discards uncommitted changes")
            }
            "switch" if has(&["-f", "--force", "--discard-changes", "-C", "--force-create"]) => {
                history(self, "discards uncommitted changes")
            }
            "branch" if has(&["-D", "-f", "--force"]) || has_flag(rest, 'D', "") => {
                history(self, "deletes or moves a branch even if unmerged")
            }
            "branch" if operands.is_empty() && !has(&["-d", "--delete", "-m", "-M"]) => {}
            "tag" if has(&["-d", "--delete", "-f", "--force"]) => {
                history(self, "deletes or moves a tag")
            }
            "tag" if operands.is_empty() => {}
            "stash" if has(&["drop", "clear"]) => history(self, "discards stashed changes"),
            "stash" if has(&["list", "show"]) => {}
            "push"
                if has(&["-f", "--force", "--mirror", "--delete", "-d", "--prune"])
                    || rest.iter().any(|a| {
                        a.text.starts_with("--force")
                            || (a.text.starts_with('+') || a.text.starts_with(':'))
                    }) =>
            {
                history(self, "rewrites or deletes remote history")
            }
            "filter-branch" | "filter-repo" => history(self, "rewrites history"),
            "gc" | "prune"
                if rest
                    .iter()
                    .any(|a| a.text.starts_with("--prune=now") || a.text == "--expire=now") =>
            {
                history(self, "permanently deletes unreachable commits")
            }
            "update-ref" if has(&["-d"]) => history(self, "deletes a reference"),
            "rm" => self.effect(D, C::Delete, "deletes files from the work tree", ctx),
            "mv" if has(&["-f", "--force"]) => {
                self.effect(D, C::Overwrite, "moves files over existing ones", ctx)
            }
            "remote" | "config"
                if operands.len() <= 1
                    || has(&[
                        "-v",
                        "--list",
                        "-l",
                        "--get",
                        "--get-all",
                        "show",
                        "get-url",
                    ]) => {}
            "push" | "pull" | "fetch" | "clone" | "ls-remote" | "submodule" => {
                self.effect(N, C::Network, "uses the network", ctx)
            }
            "commit" | "add" | "merge" | "init" | "apply" | "am" | "cherry-pick" | "revert"
            | "notes" | "mv" | "worktree" | "bisect" | "sparse-checkout" | "rebase" | "stash"
            | "branch" | "tag" | "checkout" | "switch" | "restore" | "reset" | "gc" | "prune"
            | "remote" | "config" | "update-ref" => {
                self.effect(N, C::Write, "changes the repository", ctx)
            }
            other => self.effect(
                N,
                C::Unrecognized,
                &format!("runs `git {other}`, which IronClaw does not recognise"),
                ctx,
            ),
        }
    }
}
