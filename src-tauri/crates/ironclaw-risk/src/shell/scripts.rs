//! Small languages run by everyday tools: sed and awk scripts can write files and run commands,
//! so "read-only" holds only after a look inside the script. Other interpreters (perl, node, …)
//! are not parsed: their inline code is reported as dynamic.

use super::programs::{first_operand, has_flag};
use super::words::Word;
use super::{Ctx, Input, Walker};
use crate::{Category as C, RiskLevel};
use RiskLevel::{Destructive as D, Normal as N};

/// What a sed script does beyond printing.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct SedEffects {
    pub writes: bool,
    pub executes: bool,
}

/// A small scanner over sed's command syntax: enough to find `w`, `W` and `e` commands and the
/// `w`/`e` flags of `s`, which are the only ways a sed script writes or runs anything.
pub(super) fn sed_effects(script: &str) -> SedEffects {
    let chars: Vec<char> = script.chars().collect();
    let mut effects = SedEffects::default();
    let mut i = 0;
    let to_line_end = |i: &mut usize| {
        while *i < chars.len() && chars[*i] != '\n' {
            *i += 1;
        }
    };
    // Skips a delimited part starting after the delimiter; returns the index after the closing
    // delimiter.
    let part = |mut i: usize, delim: char| {
        while i < chars.len() && chars[i] != delim {
            i += if chars[i] == '\\' { 2 } else { 1 };
        }
        i + 1
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+' | '0'..='9' => i += 1,
            '/' => i = part(i + 1, '/'),
            '\\' => {
                let delim = chars.get(i + 1).copied().unwrap_or('/');
                i = part(i + 2, delim);
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(i + 1) else {
                    break;
                };
                i = part(part(i + 2, delim), delim);
                if c == 's' {
                    while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                        match chars[i] {
                            'w' | 'W' => {
                                effects.writes = true;
                                to_line_end(&mut i);
                            }
                            'e' => effects.executes = true,
                            _ => {}
                        }
                        i += 1;
                    }
                }
            }
            'w' | 'W' => {
                effects.writes = true;
                to_line_end(&mut i);
            }
            'e' => {
                effects.executes = true;
                to_line_end(&mut i);
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'b' | 't' | 'T' | ':' | 'q' | 'Q' | 'l' | 'L' => {
                to_line_end(&mut i)
            }
            _ => i += 1,
        }
    }
    effects
}

/// Rough look into an awk program: `system(...)` and pipes run commands, `print > file` writes.
fn awk_effects(program: &str) -> SedEffects {
    let executes = program.contains("system") || program.contains('|');
    let writes = program.match_indices("print").any(|(at, _)| {
        program[at..]
            .split([';', '}', '\n'])
            .next()
            .is_some_and(|statement| statement.contains('>'))
    });
    SedEffects { writes, executes }
}

impl Walker<'_> {
    pub(super) fn sed(&mut self, args: &[Word], ctx: &Ctx) {
        let in_place = args
            .iter()
            .any(|a| a.text.starts_with("--in-place") || (a.text.starts_with("-i")))
            || has_flag(args, 'i', "--in-place");
        let mut scripts: Vec<&Word> = Vec::new();
        let mut script_file = false;
        for (i, a) in args.iter().enumerate() {
            match a.text.as_str() {
                "-e" | "--expression" => scripts.extend(args.get(i + 1)),
                "-f" | "--file" => script_file = true,
                t if t.starts_with("--expression=") => scripts.push(a),
                _ => {}
            }
        }
        if scripts.is_empty() && !script_file {
            let start = first_operand(args, &["-l", "--line-length", "-s"]);
            scripts.extend(args.get(start));
        }
        let mut effects = SedEffects::default();
        for script in &scripts {
            if !script.is_literal() {
                effects.executes = true;
            }
            let found = sed_effects(script.text.trim_start_matches("--expression="));
            effects.writes |= found.writes;
            effects.executes |= found.executes;
        }
        if in_place {
            self.effect(N, C::Write, "edits files in place", ctx);
            self.operands_outside(args, "edits files", ctx);
        }
        self.script_effects(effects, script_file, "sed", ctx);
    }

    pub(super) fn awk(&mut self, args: &[Word], ctx: &Ctx) {
        let script_file = args.iter().any(|a| a.text == "-f" || a.text == "--file");
        if args
            .windows(2)
            .any(|w| w[0].text == "-i" && w[1].text == "inplace")
        {
            self.effect(N, C::Write, "edits files in place", ctx);
        }
        let mut effects = SedEffects::default();
        if !script_file {
            let start = first_operand(args, &["-F", "-v", "-i", "--field-separator", "--assign"]);
            if let Some(program) = args.get(start) {
                effects = awk_effects(&program.text);
                effects.executes |= !program.is_literal();
            }
        }
        self.script_effects(effects, script_file, "awk", ctx);
    }

    fn script_effects(&mut self, effects: SedEffects, script_file: bool, tool: &str, ctx: &Ctx) {
        if script_file {
            self.effect(
                N,
                C::ScriptFile,
                &format!("runs a {tool} script file IronClaw cannot see into"),
                ctx,
            );
        }
        if effects.writes {
            self.effect(N, C::Write, &format!("{tool} script writes files"), ctx);
        }
        if effects.executes {
            self.effect(
                N,
                C::DynamicCode,
                &format!("{tool} script can run shell commands"),
                ctx,
            );
        }
    }

    /// perl, node, ruby, …: inline code is not parsed, so it is dynamic; stdin and files too.
    pub(super) fn other_interpreter(&mut self, name: &str, args: &[Word], ctx: &Ctx) {
        let inline = args.iter().any(|a| {
            matches!(
                a.text.as_str(),
                "-e" | "-E" | "--eval" | "-r" | "-p" | "--print" | "-c"
            ) || (a.text.starts_with("-e") && name == "perl")
        });
        if name == "perl" && has_flag(args, 'i', "") {
            self.effect(N, C::Write, "edits files in place", ctx);
        }
        if inline {
            self.effect(
                N,
                C::DynamicCode,
                &format!("runs inline {name} code, which IronClaw does not analyse"),
                ctx,
            );
            if ctx.download_in_args {
                self.effect(
                    D,
                    C::RemoteCode,
                    "runs code downloaded from the network",
                    ctx,
                );
            }
        } else if args.iter().any(|a| !a.text.starts_with('-')) {
            let file = args.iter().find(|a| !a.text.starts_with('-'));
            self.script_file(file, ctx);
        } else {
            match ctx.input {
                Input::Download(_) => self.effect(
                    D,
                    C::RemoteCode,
                    &format!("runs code downloaded from the network in {name}"),
                    ctx,
                ),
                _ => self.effect(
                    N,
                    C::DynamicCode,
                    &format!("runs {name} code from its input, which IronClaw cannot see"),
                    ctx,
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_substitutions_only_print() {
        assert_eq!(sed_effects("s/hello/bye/g"), SedEffects::default());
        assert_eq!(sed_effects("/^#/d;1,5p"), SedEffects::default());
    }

    #[test]
    fn write_and_execute_commands_and_flags_are_found() {
        assert!(sed_effects("s/a/b/w out.txt").writes);
        assert!(sed_effects("1e rm -rf /").executes);
        assert!(sed_effects("s/x/date/e").executes);
        assert!(sed_effects("/x/w log").writes);
    }

    #[test]
    fn awk_print_redirects_and_system_calls_are_found() {
        assert!(awk_effects(r#"{ print $1 > "out" }"#).writes);
        assert!(!awk_effects(r#"$3 > 10 { print $1 }"#).writes);
        assert!(awk_effects(r#"BEGIN { system("rm -rf /") }"#).executes);
    }
}
