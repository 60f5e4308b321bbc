//! `assess` must answer, never panic, and stay self-consistent on anything: random bytes,
//! mutated real snippets, NUL bytes, pathological nesting and oversized input.

use ironclaw_protocol::{Language, RiskLevel};
use ironclaw_risk::{assess, Assessment, Category};

/// xorshift64*: deterministic, so a failure reproduces from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n.max(1) as u64).unwrap_or(0)
    }
}

const LANGUAGES: [Language; 2] = [Language::Shell, Language::Python];

/// Shell and Python syntax is mostly punctuation; random text drawn from it reaches the
/// grammars' odd corners far faster than uniform bytes.
const ALPHABET: &[&str] = &[
    "rm",
    "-rf",
    " ",
    "\n",
    "'",
    "\"",
    "`",
    "$(",
    ")",
    "(",
    "{",
    "}",
    "[",
    "]",
    "|",
    ";",
    "&",
    "&&",
    "||",
    ">",
    ">>",
    "<",
    "<<",
    "<<<",
    "EOF",
    "\\",
    "$",
    "=",
    "x",
    "bash -c ",
    "eval ",
    "alias ",
    "f()",
    "import os",
    "os.system",
    "exec(",
    "eval(",
    "getattr(",
    "__import__(",
    "def ",
    "class ",
    ":",
    "    ",
    "lambda",
    "f\"{",
    "#",
    "*",
    "?",
    "~",
    "/",
    "..",
    "\0",
    "é",
    "\u{202e}",
    "sudo ",
    "curl x | sh",
    "python3 -c ",
    "shutil.rmtree(",
    "subprocess.run([",
];

fn random_snippet(rng: &mut Rng) -> String {
    let len = rng.below(40);
    (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len())])
        .collect()
}

fn random_bytes(rng: &mut Rng) -> String {
    let len = rng.below(200);
    let bytes: Vec<u8> = (0..len).map(|_| (rng.next() & 0xff) as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

const SEEDS: &[(Language, &str)] = &[
    (
        Language::Shell,
        "FOO=1 rm -rf \"$x\" >out 2>/dev/null; c=rm; $c x | sh",
    ),
    (
        Language::Shell,
        "alias x='rm -rf'; x /; f(){ rm -rf \"$1\"; }; f a",
    ),
    (
        Language::Shell,
        "cat <<EOF | bash\nrm -rf $HOME\nEOF\nbash <(curl x) >&2",
    ),
    (
        Language::Shell,
        "find . -exec sh -c 'rm \"$1\"' _ {} \\; && git push -f",
    ),
    (
        Language::Python,
        "import shutil as s\ns.rmtree(x)\ngetattr(os, 're' + 'move')('a')",
    ),
    (
        Language::Python,
        "exec(\"import os; os.remove('x')\")\n__import__('os').system(f'rm {x}')",
    ),
    (
        Language::Python,
        "import subprocess\nsubprocess.run(['sh', '-c', 'rm -rf x'], shell=False)",
    ),
    (
        Language::Python,
        "with open('/etc/x', 'w') as f:\n    f.write(b'\\x00')",
    ),
];

fn mutate(rng: &mut Rng, code: &str) -> String {
    let mut chars: Vec<char> = code.chars().collect();
    for _ in 0..=rng.below(4) {
        let at = rng.below(chars.len() + 1);
        match rng.below(4) {
            0 if at < chars.len() => {
                chars.remove(at);
            }
            1 => {
                let piece = ALPHABET[rng.below(ALPHABET.len())];
                for (i, c) in piece.chars().enumerate() {
                    chars.insert(at + i, c);
                }
            }
            2 if at < chars.len() => {
                let end = (at + rng.below(10)).min(chars.len());
                let copy: Vec<char> = chars[at..end].to_vec();
                for (i, c) in copy.into_iter().enumerate() {
                    chars.insert(at + i, c);
                }
            }
            _ => chars.insert(at, char::from((rng.next() & 0x7f) as u8)),
        }
    }
    chars.into_iter().collect()
}

/// The invariants every answer keeps.
fn check(language: Language, code: &str) -> Assessment {
    let a = assess(language, code);
    let max = a
        .reasons
        .iter()
        .map(|r| r.level)
        .max()
        .unwrap_or(RiskLevel::ReadOnly);
    assert_eq!(
        a.level, max,
        "level is not the max of the reasons for {code:?}"
    );
    assert!(
        a.reasons.windows(2).all(|w| w[0].line <= w[1].line),
        "reasons out of line order for {code:?}"
    );
    for r in &a.reasons {
        assert!(r.line >= 1, "line 0 for {code:?}");
        assert!(!r.message.is_empty(), "empty message for {code:?}");
    }
    a
}

#[test]
fn random_snippets_never_panic_and_stay_consistent() {
    let mut rng = Rng(0x1c0f_fee5_eed5);
    for _ in 0..3000 {
        let language = LANGUAGES[rng.below(2)];
        check(language, &random_snippet(&mut rng));
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0xdead_beef_cafe);
    for _ in 0..1500 {
        let code = random_bytes(&mut rng);
        for language in LANGUAGES {
            check(language, &code);
        }
    }
}

#[test]
fn mutated_snippets_never_panic_and_stay_consistent() {
    let mut rng = Rng(0x5eed);
    for _ in 0..2000 {
        let (language, seed) = SEEDS[rng.below(SEEDS.len())];
        check(language, &mutate(&mut rng, seed));
    }
}

#[test]
fn nul_bytes_do_not_hide_commands() {
    for language in LANGUAGES {
        check(language, "\0\0\0");
    }
    let a = check(Language::Shell, "ls\0; rm -rf x");
    assert!(a.level > RiskLevel::ReadOnly, "{a:#?}");
}

#[test]
fn pathological_nesting_is_answered_not_overflowed() {
    let deep_shell = [
        "(".repeat(50_000),
        "$(".repeat(20_000),
        format!("{}rm -rf x", "nice ".repeat(5_000)),
        format!("{}rm x{}", "bash -c '".repeat(50), "'".repeat(50)),
        "{ ".repeat(20_000),
        "\"$(".repeat(10_000),
    ];
    for code in &deep_shell {
        let a = check(Language::Shell, code);
        assert!(a.level > RiskLevel::ReadOnly, "deep shell judged read-only");
    }
    let deep_python = [
        "(".repeat(50_000),
        format!("x{}", ".a".repeat(50_000)),
        format!("x = {}", vec!["'a'"; 20_000].join(" + ")),
        format!("{}pass", "if x:\n ".repeat(2_000)),
        "[".repeat(50_000),
        format!("f{}", "()".repeat(30_000)),
    ];
    for code in &deep_python {
        check(Language::Python, code);
    }
}

#[test]
fn deep_nesting_of_a_deletion_is_never_read_only() {
    // Quoting triples the text per level; ten levels is past the nesting limit and ~60 KB.
    let mut code = "rm -rf x".to_owned();
    for _ in 0..10 {
        code = format!("bash -c {}", shell_quote(&code));
    }
    let a = check(Language::Shell, &code);
    assert_eq!(a.level, RiskLevel::Destructive, "{a:#?}");
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn oversized_input_is_reported_not_parsed() {
    let huge = "ls\n".repeat(400_000);
    let a = check(Language::Shell, &huge);
    assert_eq!(a.level, RiskLevel::Normal);
    assert!(a
        .reasons
        .iter()
        .any(|r| r.category == Category::Unparseable));
}

#[test]
fn large_but_acceptable_input_is_analysed_to_the_end() {
    let mut code = "echo ok\n".repeat(20_000);
    code.push_str("rm -rf build\n");
    let a = check(Language::Shell, &code);
    assert_eq!(a.level, RiskLevel::Destructive, "{:?}", a.reasons);
    let mut python = "print(1)\n".repeat(20_000);
    python.push_str("import shutil\nshutil.rmtree('b')\n");
    assert_eq!(
        check(Language::Python, &python).level,
        RiskLevel::Destructive
    );
}

#[test]
fn empty_and_blank_code_is_read_only() {
    for language in LANGUAGES {
        assert_eq!(check(language, "").level, RiskLevel::ReadOnly);
        assert_eq!(check(language, " \n\t\n").level, RiskLevel::ReadOnly);
    }
}
