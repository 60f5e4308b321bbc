//! A deterministic stand-in for a year of chat history: prose, questions, code and tool output,
//! with word frequencies following a Zipf-like curve (a few words everywhere, most words rare),
//! as in real text. Same seed, same history, so runs compare.

use std::collections::HashSet;

use ironclaw_store::MessageRole;

/// splitmix64: tiny, fast, and good enough for picking words.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A rank in `0..n` with probability about proportional to 1/(rank+1) (Zipf, s = 1), by
    /// inverting the continuous 1/x distribution.
    pub fn zipf(&mut self, n: usize) -> usize {
        let rank = (n as f64).powf(self.unit()) - 1.0;
        (rank.max(0.0) as usize).min(n.saturating_sub(1))
    }
}

/// Real words first, in rough order of frequency in chats about code; generated words fill
/// the long tail.
const COMMON: &str = "\
the to and a of is in it you that for this i on with can be file not as what do if have \
are from but python how code run my an or error all so we will data there use at by one \
list line function get like output it's just value then make when which print here need \
should more new test would each want now using install package script first also import \
return string number name only workspace some time directory folder these json csv result \
could check because two work way shell command read write into see table about than other \
image version does without again after path column row sort count total sum average date \
year files lines words parse format convert download upload server request response http \
api key config settings option flag argument variable class method object array dict \
dictionary index loop range type int float bool none true false exception traceback module \
pip venv pandas numpy matplotlib plot chart graph memory cpu process thread timeout limit \
size bytes log logs debug warning fix bug issue change update delete remove create add \
copy move rename search find match regex pattern replace split join merge filter map \
reduce group report summary analysis model train predict score accuracy dataset sample \
random seed docker container sandbox git commit branch diff patch build compile deploy \
release backup archive zip tar extract compress encode decode utf ascii unicode emoji \
email address phone invoice customer order price amount currency budget expense income \
monthly weekly daily schedule calendar meeting notes todo project task deadline priority \
status";

const SYLLABLES: &str =
    "ka lo mi ne ru sa ti vo ze pa qui bel dor fen gar hul jen kor lum mar nix ost pri tav";

pub struct Corpus {
    words: Vec<String>,
}

impl Corpus {
    /// A vocabulary of `size` distinct words (at least the common ones).
    pub fn new(size: usize) -> Self {
        let mut seen: HashSet<String> = HashSet::with_capacity(size);
        let mut words: Vec<String> = Vec::with_capacity(size);
        for w in COMMON.split_whitespace() {
            if seen.insert(w.to_string()) {
                words.push(w.to_string());
            }
        }
        let common = words.len();
        let syllables: Vec<&str> = SYLLABLES.split_whitespace().collect();
        let base = syllables.len();
        let mut i = 0usize;
        while words.len() < size {
            // 2, then 3, then 4 syllables: every index spells a different word.
            let (mut n, length) = if i < base.pow(2) {
                (i, 2)
            } else if i < base.pow(2) + base.pow(3) {
                (i - base.pow(2), 3)
            } else {
                (i - base.pow(2) - base.pow(3), 4)
            };
            let mut w = String::new();
            for _ in 0..length {
                w.push_str(syllables[n % base]);
                n /= base;
            }
            if seen.insert(w.clone()) {
                words.push(w);
            }
            i += 1;
        }
        // Generated words get their frequency rank from a fixed shuffle, so the rare ones are
        // not all of one shape.
        let mut rng = Rng::new(0x5EED_5EED);
        let tail = &mut words[common.min(size)..];
        for k in (1..tail.len()).rev() {
            tail.swap(k, rng.below(k + 1));
        }
        Self { words }
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// The word of frequency rank `rank` (0 = most frequent).
    pub fn at(&self, rank: usize) -> &str {
        self.words
            .get(rank.min(self.words.len().saturating_sub(1)))
            .map(String::as_str)
            .unwrap_or("the")
    }

    /// A word drawn by frequency.
    pub fn word(&self, rng: &mut Rng) -> &str {
        self.at(rng.zipf(self.words.len()))
    }

    fn sentence(&self, rng: &mut Rng, min: usize, max: usize, out: &mut String) {
        let n = min + rng.below(max - min + 1);
        for k in 0..n {
            if k > 0 {
                out.push(' ');
            }
            let w = self.word(rng);
            if k == 0 {
                let mut chars = w.chars();
                if let Some(c) = chars.next() {
                    out.extend(c.to_uppercase());
                    out.push_str(chars.as_str());
                }
            } else {
                out.push_str(w);
            }
        }
    }

    fn ident(&self, rng: &mut Rng) -> String {
        if rng.chance(0.5) {
            format!("{}_{}", self.word(rng), self.word(rng))
        } else {
            self.word(rng).to_string()
        }
    }

    /// One message: who wrote it and its text.
    pub fn message(&self, rng: &mut Rng) -> (MessageRole, String) {
        let mut text = String::with_capacity(400);
        match rng.below(10) {
            0..=2 => {
                self.sentence(rng, 5, 20, &mut text);
                if rng.chance(0.3) {
                    text.push_str(&format!(
                        " in /workspace/{}/{}.csv",
                        self.word(rng),
                        self.ident(rng)
                    ));
                }
                text.push('?');
                (MessageRole::User, text)
            }
            3..=6 => {
                for s in 0..1 + rng.below(3) {
                    if s > 0 {
                        text.push(' ');
                    }
                    self.sentence(rng, 8, 20, &mut text);
                    text.push('.');
                }
                if rng.chance(0.45) {
                    text.push_str("\n\n");
                    text.push_str(&self.code(rng));
                }
                (MessageRole::Assistant, text)
            }
            _ => {
                let failed = rng.chance(0.2);
                text.push_str("This run was approved automatically by the session's policy.\n");
                text.push_str(if failed {
                    "Exit code: 1\nstderr:\n"
                } else {
                    "Exit code: 0\nstdout:\n"
                });
                if failed {
                    text.push_str(&format!(
                        "Traceback (most recent call last):\n  File \"<stdin>\", line {}, in <module>\nNameError: name '{}' is not defined\n",
                        1 + rng.below(40),
                        self.ident(rng)
                    ));
                } else {
                    for _ in 0..1 + rng.below(6) {
                        text.push_str(&format!(
                            "{} {} {}\n",
                            self.ident(rng),
                            rng.below(10_000),
                            self.word(rng)
                        ));
                    }
                }
                (MessageRole::Tool, text)
            }
        }
    }

    fn code(&self, rng: &mut Rng) -> String {
        if rng.chance(0.7) {
            format!(
                "```python\nimport {m}\n\ndef {f}({a}, {b}={n}):\n    {c} = {m}.{g}(\"{s}\")\n    for {d} in {a}:\n        print({d}, {c}[{k}])\n    return {c}\n```",
                m = self.word(rng),
                f = self.ident(rng),
                a = self.word(rng),
                b = self.word(rng),
                n = rng.below(100),
                c = self.ident(rng),
                g = self.word(rng),
                s = self.word(rng),
                d = self.word(rng),
                k = rng.below(10),
            )
        } else {
            format!(
                "```bash\ncd /workspace/{} && ls -la | grep {} > {}.txt\nwc -l {}.txt\n```",
                self.word(rng),
                self.word(rng),
                self.ident(rng),
                self.ident(rng),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabulary_is_distinct_and_deterministic() {
        let a = Corpus::new(5_000);
        let b = Corpus::new(5_000);
        assert_eq!(a.len(), 5_000);
        assert_eq!(a.words, b.words);
        let distinct: HashSet<&String> = a.words.iter().collect();
        assert_eq!(distinct.len(), a.len());
    }

    #[test]
    fn frequent_words_come_up_far_more_often_than_rare_ones() {
        let mut rng = Rng::new(1);
        let n = 20_000;
        let draws: Vec<usize> = (0..100_000).map(|_| rng.zipf(n)).collect();
        let head = draws.iter().filter(|r| **r < 10).count();
        let tail = draws.iter().filter(|r| **r >= n - 10).count();
        assert!(head > 100 * tail.max(1), "head {head}, tail {tail}");
        assert!(draws.iter().all(|r| *r < n));
    }

    #[test]
    fn messages_look_like_a_chat_with_code() {
        let corpus = Corpus::new(2_000);
        let mut rng = Rng::new(7);
        let messages: Vec<(MessageRole, String)> =
            (0..300).map(|_| corpus.message(&mut rng)).collect();
        assert!(messages.iter().any(|(_, t)| t.contains("```python")));
        assert!(messages.iter().any(|(r, _)| *r == MessageRole::Tool));
        assert!(messages.iter().any(|(r, _)| *r == MessageRole::User));
        assert!(messages.iter().all(|(_, t)| !t.is_empty()));
    }
}
