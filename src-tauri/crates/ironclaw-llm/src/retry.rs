//! When and how long to wait before sending a request again.

use std::time::{Duration, SystemTime};

use rand::Rng;
use reqwest::header::HeaderMap;

/// Retries of retryable errors that happen before a stream produced its first event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first one included; 1 disables retries.
    pub max_attempts: u32,
    /// Wait before the second attempt; it doubles for each further one.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// The sum of all waits. A `Retry-After` that would exceed it ends the retries at once, so
    /// the person sees "rate-limited" instead of a silent minute-long pause.
    pub max_total_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_total_wait: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The wait after `failed_attempts` failures: exponential backoff with "equal jitter" (a
    /// random point in the upper half, so clients that failed together spread out yet never
    /// hammer back immediately), and never shorter than what the server asked for.
    pub(crate) fn delay(&self, failed_attempts: u32, retry_after: Option<Duration>) -> Duration {
        let exponent = failed_attempts.saturating_sub(1).min(16);
        let backoff = self
            .initial_backoff
            .saturating_mul(1 << exponent)
            .min(self.max_backoff);
        let half = backoff / 2;
        let jitter_nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        let jittered = half + Duration::from_nanos(rand::rng().random_range(0..=jitter_nanos));
        jittered.max(retry_after.unwrap_or_default())
    }
}

/// Reads `retry-after-ms` (OpenAI), then `Retry-After` as seconds or an HTTP date.
pub(crate) fn parse_retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return seconds(ms / 1000.0);
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return seconds(secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or_default())
}

fn seconds(secs: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(secs).ok()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use reqwest::header::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn retry_after_in_seconds_is_read() {
        let now = SystemTime::now();
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "7")]), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after(
                &headers(&[("retry-after-ms", "250"), ("retry-after", "7")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "-1")]), now),
            None
        );
        assert_eq!(parse_retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn retry_after_as_http_date_counts_from_now() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").ok();
        let later = headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:30 GMT")]);
        let past = headers(&[("retry-after", "Wed, 21 Oct 2015 07:27:00 GMT")]);
        let now = now.unwrap_or(SystemTime::UNIX_EPOCH);
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(parse_retry_after(&past, now), Some(Duration::ZERO));
    }

    #[test]
    fn backoff_doubles_within_its_jitter_band_and_stops_at_the_cap() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
            max_total_wait: Duration::from_secs(10),
        };
        for _ in 0..50 {
            let first = policy.delay(1, None);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let second = policy.delay(2, None);
            assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
            let capped = policy.delay(9, None);
            assert!(capped >= Duration::from_millis(175) && capped <= Duration::from_millis(350));
        }
    }

    #[test]
    fn delay_is_never_shorter_than_retry_after() {
        let policy = RetryPolicy::default();
        let wait = Duration::from_secs(3);
        assert!(policy.delay(1, Some(wait)) >= wait);
    }
}
