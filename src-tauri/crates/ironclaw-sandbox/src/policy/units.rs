//! The value formats of the policy file: sizes (`512m`), durations (`1h30m`), CPU shares and
//! counts. Each has a parser and a serde type that rejects bad input (including values below
//! its minimum) with a message spelling out the accepted format, so the loader's errors come
//! out of serde with the field path attached.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::Deserialize;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// Fractional digits beyond this are ignored (keeps the arithmetic inside `u128`).
const MAX_FRACTION_DIGITS: usize = 18;

/// Parses a size: a number with an optional unit `b`, `k`, `m`, `g` or `t` (powers of 1024,
/// case-insensitive, optionally followed by `b` or `ib`: `512m`, `2GB`, `1.5g`, `64KiB`).
/// A plain integer is a number of bytes. Fractions are allowed with a unit (`1.5g`) and
/// rounded down to whole bytes. `None` if the text is not a size or overflows `u64`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(digits_end);
    let multiplier = match unit.trim_start().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => TIB,
        _ => return None,
    };
    if multiplier == 1 && number.contains('.') {
        return None; // "1.5" bytes: almost certainly a missing unit
    }
    let value = scale(number, u128::from(multiplier))?;
    u64::try_from(value).ok()
}

/// Parses a duration: one or more number+unit pairs with units `ms`, `s`, `m`, `h` and `d`
/// (`30s`, `5m`, `1h30m`, `1h 30m`, `1.5h`). A plain integer is a number of seconds.
/// `None` if the text is not a duration or overflows.
pub fn parse_duration(s: &str) -> Option<Duration> {
    const NANOS_PER_SEC: u128 = 1_000_000_000;
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<u64>().ok().map(Duration::from_secs);
    }
    let mut rest = s;
    let mut total: u128 = 0;
    let mut parts = 0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        let unit_end = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let unit_nanos: u128 = match unit.to_ascii_lowercase().as_str() {
            "ms" => 1_000_000,
            "s" => NANOS_PER_SEC,
            "m" => 60 * NANOS_PER_SEC,
            "h" => 3_600 * NANOS_PER_SEC,
            "d" => 86_400 * NANOS_PER_SEC,
            _ => return None,
        };
        total = total.checked_add(scale(number, unit_nanos)?)?;
        parts += 1;
        rest = after.trim_start();
    }
    if parts == 0 {
        return None;
    }
    let secs = u64::try_from(total / NANOS_PER_SEC).ok()?;
    let nanos = u32::try_from(total % NANOS_PER_SEC).ok()?;
    Some(Duration::new(secs, nanos))
}

/// `number` (digits, optionally `.digits`) times `unit`, rounded down; `None` if malformed.
fn scale(number: &str, unit: u128) -> Option<u128> {
    let (whole, fraction) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || !all_digits(whole)
        || !all_digits(fraction)
        || (number.contains('.') && fraction.is_empty())
    {
        return None;
    }
    let mut value = whole.parse::<u128>().ok()?.checked_mul(unit)?;
    let fraction = &fraction[..fraction.len().min(MAX_FRACTION_DIGITS)];
    if !fraction.is_empty() {
        let numerator = fraction.parse::<u128>().ok()?;
        let denominator = 10u128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
        value = value.checked_add(numerator.checked_mul(unit)? / denominator)?;
    }
    Some(value)
}

/// `16777216` → `16m`: the shortest exact spelling, for messages.
pub(super) fn format_size(bytes: u64) -> String {
    for (unit, name) in [(TIB, "t"), (GIB, "g"), (MIB, "m"), (KIB, "k")] {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes} bytes")
}

const SIZE_FORMAT: &str = "like 512m, 2g or 1.5g (a number with an optional unit b, k, m, g or t, \
                           powers of 1024; a plain integer is bytes)";
const DURATION_FORMAT: &str = "like 30s, 5m or 1h30m (number+unit pairs, units ms, s, m, h or d; \
                               a plain integer is seconds)";

/// A size in bytes of at least `MIN` (`MIN <= 1` means "greater than 0").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Size<const MIN: u64>(pub u64);

impl<const MIN: u64> Size<MIN> {
    fn describe(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if MIN <= 1 {
            write!(f, "a size greater than 0, {SIZE_FORMAT}")
        } else {
            write!(f, "a size of at least {}, {SIZE_FORMAT}", format_size(MIN))
        }
    }

    fn check<E: de::Error>(bytes: u64, shown: Unexpected<'_>) -> Result<Self, E> {
        if bytes >= MIN.max(1) {
            Ok(Self(bytes))
        } else {
            Err(E::invalid_value(shown, &Expecting(Self::describe)))
        }
    }
}

impl<'de, const MIN: u64> Deserialize<'de> for Size<MIN> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<const MIN: u64>;
        impl<const MIN: u64> Visitor<'_> for V<MIN> {
            type Value = Size<MIN>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                Size::<MIN>::describe(f)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Size::check(v, Unexpected::Unsigned(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match parse_size(v) {
                    Some(bytes) => Size::check(bytes, Unexpected::Str(v)),
                    None => Err(E::invalid_value(Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(V::<MIN>)
    }
}

/// A duration of at least `MIN_SECS` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Dur<const MIN_SECS: u64>(pub Duration);

impl<const MIN_SECS: u64> Dur<MIN_SECS> {
    fn describe(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a duration of at least {MIN_SECS}s, {DURATION_FORMAT}")
    }

    fn check<E: de::Error>(d: Duration, shown: Unexpected<'_>) -> Result<Self, E> {
        if d >= Duration::from_secs(MIN_SECS) {
            Ok(Self(d))
        } else {
            Err(E::invalid_value(shown, &Expecting(Self::describe)))
        }
    }
}

impl<'de, const MIN_SECS: u64> Deserialize<'de> for Dur<MIN_SECS> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<const MIN_SECS: u64>;
        impl<const MIN_SECS: u64> Visitor<'_> for V<MIN_SECS> {
            type Value = Dur<MIN_SECS>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                Dur::<MIN_SECS>::describe(f)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Dur::check(Duration::from_secs(v), Unexpected::Unsigned(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match parse_duration(v) {
                    Some(d) => Dur::check(d, Unexpected::Str(v)),
                    None => Err(E::invalid_value(Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(V::<MIN_SECS>)
    }
}

/// A whole number of at least `MIN`, at most `i64::MAX` (Docker takes some counts as `i64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Count<const MIN: u64>(pub u64);

impl<const MIN: u64> Count<MIN> {
    /// The value as Docker's `i64`; lossless because deserialization caps it at `i64::MAX`.
    pub fn as_i64(self) -> i64 {
        i64::try_from(self.0).unwrap_or(i64::MAX)
    }
}

impl<'de, const MIN: u64> Deserialize<'de> for Count<MIN> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<const MIN: u64>;
        impl<const MIN: u64> Visitor<'_> for V<MIN> {
            type Value = Count<MIN>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a whole number of at least {MIN}")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                if v >= MIN && i64::try_from(v).is_ok() {
                    Ok(Count(v))
                } else {
                    Err(E::invalid_value(Unexpected::Unsigned(v), &self))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(V::<MIN>)
    }
}

/// A CPU share: a finite number of at least 0.01 (Docker's smallest `--cpus`; anything smaller
/// would round to 0 nano-CPUs, which Docker reads as "unlimited").
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Cpus(pub f64);

pub(super) const MIN_CPUS: f64 = 0.01;

impl<'de> Deserialize<'de> for Cpus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Cpus;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a number of CPUs of at least {MIN_CPUS}, like 0.5 or 2")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                if v.is_finite() && v >= MIN_CPUS {
                    Ok(Cpus(v))
                } else {
                    Err(E::invalid_value(Unexpected::Float(v), &self))
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                if v >= 1 {
                    Ok(Cpus(v as f64))
                } else {
                    Err(E::invalid_value(Unexpected::Unsigned(v), &self))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Adapts a describing function to serde's `Expected`.
struct Expecting(fn(&mut fmt::Formatter<'_>) -> fmt::Result);

impl de::Expected for Expecting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.0)(f)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn parse_size_accepts_units_fractions_and_plain_bytes() {
        let cases = [
            ("512", Some(512)),
            ("0", Some(0)),
            ("1b", Some(1)),
            ("64k", Some(64 * KIB)),
            ("512m", Some(512 * MIB)),
            ("512M", Some(512 * MIB)),
            ("2g", Some(2 * GIB)),
            ("2GB", Some(2 * GIB)),
            ("2GiB", Some(2 * GIB)),
            ("1.5g", Some(3 * GIB / 2)),
            ("0.5k", Some(512)),
            ("1t", Some(TIB)),
            (" 16m ", Some(16 * MIB)),
            ("16 m", Some(16 * MIB)),
        ];
        let got: Vec<_> = cases.iter().map(|(s, _)| (*s, parse_size(s))).collect();
        assert_eq!(got, cases.to_vec());
    }

    #[test]
    fn parse_size_rejects_garbage_negative_fractional_bytes_and_overflow() {
        for bad in [
            "",
            "m",
            "12xb",
            "-1m",
            "1.5",
            "1.",
            ".5g",
            "1..5g",
            "1e3",
            "1g2",
            "16777216t",
            "99999999999999999999",
        ] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parse_duration_accepts_compound_fractional_and_plain_seconds() {
        let cases = [
            ("30", Some(Duration::from_secs(30))),
            ("30s", Some(Duration::from_secs(30))),
            ("5m", Some(Duration::from_secs(300))),
            ("1h30m", Some(Duration::from_secs(5400))),
            ("1h 30m", Some(Duration::from_secs(5400))),
            ("1.5h", Some(Duration::from_secs(5400))),
            ("2d", Some(Duration::from_secs(172_800))),
            ("1s500ms", Some(Duration::from_millis(1500))),
            ("0s", Some(Duration::ZERO)),
            ("10S", Some(Duration::from_secs(10))),
        ];
        let got: Vec<_> = cases.iter().map(|(s, _)| (*s, parse_duration(s))).collect();
        assert_eq!(got, cases.to_vec());
    }

    #[test]
    fn parse_duration_rejects_garbage_missing_units_and_overflow() {
        for bad in [
            "",
            "s",
            "5x",
            "5 minutes",
            "1h30",
            "-5s",
            "1.5",
            "h1",
            "99999999999999999999999d",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn format_size_picks_the_largest_exact_unit() {
        let got: Vec<_> = [16 * MIB, GIB, 3 * GIB / 2, 1536, 100]
            .into_iter()
            .map(format_size)
            .collect();
        assert_eq!(
            got,
            ["16m", "1g", "1536m", "1536 bytes", "100 bytes"]
                .map(String::from)
                .to_vec()
        );
    }
}
