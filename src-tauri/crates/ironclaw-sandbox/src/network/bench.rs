//! What the egress proxy costs, for `ironclaw bench`: a download and a series of fresh
//! connections to a server on a [`Lab`] network, once from a sandbox through relay and proxy,
//! once from a plain container on the same network with the sandbox's CPU quota. Both sides run
//! the same client script, so the difference is the proxy path. The two sides alternate, round after round, and the ratio
//! is the median of each round's ratio: on a shared machine, load that comes and goes then
//! weighs on both sides alike.

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::lab::{Lab, Server};
use super::AllowScope;
use crate::error::{Error, Result};
use crate::exec::ExecRequest;
use crate::policy::NetworkMode;
use crate::session::SessionName;
use crate::{Sandbox, SessionOptions};
use ironclaw_protocol::Language;

/// Proxied download throughput over direct, at least.
pub const THROUGHPUT_TARGET: f64 = 0.8;
/// Added time per new connection (request on a fresh connection), at most.
pub const ADDED_LATENCY_TARGET_MS: f64 = 2.0;

#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Size of the download.
    pub download_mib: u64,
    /// Rounds; each downloads once per side (the median counts).
    pub runs: u32,
    /// Fresh-connection requests per side (the median counts).
    pub requests: u32,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            download_mib: 100,
            runs: 5,
            requests: 50,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub download_mib: u64,
    pub direct_mib_s: f64,
    pub proxied_mib_s: f64,
    /// Median over rounds of `proxied / direct`; the target is [`THROUGHPUT_TARGET`].
    pub throughput_ratio: f64,
    /// Median time of one small request on a fresh connection.
    pub direct_request_ms: f64,
    pub proxied_request_ms: f64,
    /// `proxied - direct`; the target is [`ADDED_LATENCY_TARGET_MS`].
    pub added_latency_ms: f64,
    pub requests: u32,
    /// Every measurement behind the medians above, in round order.
    pub samples: BenchSamples,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct BenchSamples {
    pub direct_mib_s: Vec<f64>,
    pub proxied_mib_s: Vec<f64>,
    /// Each round's `proxied / direct`.
    pub ratios: Vec<f64>,
    pub direct_request_ms: Vec<f64>,
    pub proxied_request_ms: Vec<f64>,
}

#[derive(Deserialize, Default)]
struct Samples {
    mib_s: Vec<f64>,
    req_ms: Vec<f64>,
}

/// Runs the benchmark in `session` of `sandbox`, which it switches to allowlist mode (allowing
/// only the lab server). Meant for a throw-away data folder: afterwards remove the session and
/// call [`super::Egress::teardown`].
pub async fn run(
    sandbox: &Sandbox,
    session: &SessionName,
    options: &BenchOptions,
) -> Result<BenchReport> {
    let mut lab = Lab::create(sandbox.docker(), sandbox.instance(), &sandbox.image().tag).await?;
    // The direct client gets the CPU quota of the profile the sandbox runs with (the bench
    // runs with the default one): only the path should differ.
    lab.client_cpus = Some(sandbox.policy().profile(None)?.1.cpus);
    let measured = measure(sandbox, session, &mut lab, options).await;
    let removed = lab.remove().await;
    let report = measured?;
    removed?;
    Ok(report)
}

async fn measure(
    sandbox: &Sandbox,
    session: &SessionName,
    lab: &mut Lab,
    options: &BenchOptions,
) -> Result<BenchReport> {
    let server = lab.http_server("bench", 8000, options.download_mib).await?;
    let target = format!("{}:{}", server.ip, server.port);
    // A lab address is private: it must be listed itself (see the rebinding rule).
    sandbox
        .allow_host(session, &target, AllowScope::Session)
        .await?;
    sandbox.set_network(session, NetworkMode::Allowlist).await?;
    let rounds = options.runs.max(1);
    let script = client_script(&server, options.requests.max(1).div_ceil(rounds));
    let request = ExecRequest::new(Language::Python, script.clone());
    let (mut direct, mut proxied, mut ratios) = (Samples::default(), Samples::default(), vec![]);
    for _ in 0..rounds {
        let result = sandbox
            .exec(
                session,
                &SessionOptions::default(),
                &request,
                &mut |_| {},
                &CancellationToken::new(),
            )
            .await?;
        if result.exit_code != 0 {
            return Err(Error::Network(format!(
                "the proxied benchmark client failed: {}{}",
                result.stdout, result.stderr
            )));
        }
        let p = parse(&result.stdout)?;
        let d = parse(&lab.run_client(&script).await?)?;
        let (p_rate, d_rate) = (median(&p.mib_s), median(&d.mib_s));
        if d_rate > 0.0 {
            ratios.push(p_rate / d_rate);
        }
        direct.extend(d);
        proxied.extend(p);
    }
    let (d_rate, p_rate) = (median(&direct.mib_s), median(&proxied.mib_s));
    let (d_ms, p_ms) = (median(&direct.req_ms), median(&proxied.req_ms));
    Ok(BenchReport {
        download_mib: options.download_mib,
        direct_mib_s: d_rate,
        proxied_mib_s: p_rate,
        throughput_ratio: median(&ratios),
        direct_request_ms: d_ms,
        proxied_request_ms: p_ms,
        added_latency_ms: p_ms - d_ms,
        requests: options.requests,
        samples: BenchSamples {
            direct_mib_s: direct.mib_s,
            proxied_mib_s: proxied.mib_s,
            ratios,
            direct_request_ms: direct.req_ms,
            proxied_request_ms: proxied.req_ms,
        },
    })
}

impl Samples {
    fn extend(&mut self, other: Samples) {
        self.mib_s.extend(other.mib_s);
        self.req_ms.extend(other.req_ms);
    }
}

fn parse(stdout: &str) -> Result<Samples> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_default();
    serde_json::from_str(line)
        .map_err(|e| Error::Network(format!("unexpected benchmark output ({e}): {stdout}")))
}

fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Raw sockets rather than urllib or curl: the client's own overhead would otherwise dwarf the
/// milliseconds being measured. Uses the proxy when the environment names one.
fn client_script(server: &Server, requests: u32) -> String {
    format!(
        r#"
import json, os, socket, time, urllib.parse
IP, PORT = "{ip}", {port}
proxy = os.environ.get("http_proxy")

def get(path):
    if proxy:
        u = urllib.parse.urlsplit(proxy)
        addr, target = (u.hostname, u.port), "http://%s:%d%s" % (IP, PORT, path)
    else:
        addr, target = (IP, PORT), path
    s = socket.create_connection(addr)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n" % (target, IP, PORT)).encode())
    buf, total = bytearray(1 << 20), 0
    while True:
        n = s.recv_into(buf)
        if not n:
            break
        total += n
    s.close()
    return total

get("/index.html")
rates, lat = [], []
t = time.perf_counter()
n = get("/blob")
rates.append(n / (time.perf_counter() - t) / 1048576)
for _ in range({requests}):
    t = time.perf_counter()
    get("/index.html")
    lat.append((time.perf_counter() - t) * 1000)
print(json.dumps({{"mib_s": rates, "req_ms": lat}}))
"#,
        ip = server.ip,
        port = server.port,
        requests = requests,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_ignores_order_and_non_numbers() {
        assert_eq!(median(&[3.0, 1.0, f64::NAN, 2.0]), 2.0);
        assert_eq!(median(&[]), 0.0);
    }
}
