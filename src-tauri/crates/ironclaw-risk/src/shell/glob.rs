//! Shell wildcards in command position (`/???/?m`), matched against suspicious program names.

/// Shell wildcard matching (`*`, `?`, `[...]`) of a whole name, in O(pattern × name) with the
/// usual single-star backtracking, so hostile patterns cannot make it exponential.
pub(super) fn glob_match(pattern: &str, name: &str) -> bool {
    enum Token {
        Star,
        Any,
        Set(bool, Vec<(char, char)>),
        Lit(char),
    }
    impl Token {
        fn matches(&self, c: char) -> bool {
            match self {
                Token::Star | Token::Any => true,
                Token::Set(negated, ranges) => {
                    ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != *negated
                }
                Token::Lit(l) => *l == c,
            }
        }
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => tokens.push(Token::Star),
            '?' => tokens.push(Token::Any),
            '[' => {
                let body_start = i + 1;
                let negated = matches!(chars.get(body_start), Some('!' | '^'));
                let from = body_start + usize::from(negated);
                let close = chars
                    .iter()
                    .enumerate()
                    .skip(from + 1)
                    .find(|(_, c)| **c == ']')
                    .map(|(j, _)| j);
                match close {
                    Some(close) => {
                        let set = &chars[from..close];
                        let mut ranges = Vec::new();
                        let mut j = 0;
                        while j < set.len() {
                            if j + 2 < set.len() && set[j + 1] == '-' {
                                ranges.push((set[j], set[j + 2]));
                                j += 3;
                            } else {
                                ranges.push((set[j], set[j]));
                                j += 1;
                            }
                        }
                        tokens.push(Token::Set(negated, ranges));
                        i = close;
                    }
                    None => tokens.push(Token::Lit('[')),
                }
            }
            c => tokens.push(Token::Lit(c)),
        }
        i += 1;
    }
    let name: Vec<char> = name.chars().collect();
    let (mut t, mut n) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while n < name.len() {
        match tokens.get(t) {
            Some(Token::Star) => {
                backtrack = Some((t, n));
                t += 1;
            }
            Some(token) if token.matches(name[n]) => {
                t += 1;
                n += 1;
            }
            _ => match backtrack {
                Some((star, at)) => {
                    t = star + 1;
                    n = at + 1;
                    backtrack = Some((star, at + 1));
                }
                None => return false,
            },
        }
    }
    tokens[t.min(tokens.len())..]
        .iter()
        .all(|token| matches!(token, Token::Star))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_like_the_shell() {
        assert!(glob_match("?m", "rm"));
        assert!(glob_match("r[a-z]", "rm"));
        assert!(glob_match("*", "rm"));
        assert!(!glob_match("r[!m]", "rm"));
        assert!(!glob_match("??", "rmdir"));
    }
}
