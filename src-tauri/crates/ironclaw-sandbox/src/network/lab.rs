//! A private test network with servers on it, for `ironclaw bench` and the end-to-end tests of
//! allowlist mode: an internal Docker network this code creates (so no traffic can leave the
//! machine), HTTP and HTTPS servers made from the sandbox image, and one-shot client containers
//! for "direct" measurements. Everything carries the instance label and `ironclaw.role=lab`.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use bollard::models::{ContainerCreateBody, HostConfig, NetworkCreateRequest};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, LogsOptionsBuilder,
};
use bollard::Docker;
use futures_util::StreamExt;
use tracing::Instrument;

use super::engine::{container_ip, LABEL_ROLE};
use crate::container::{LABEL_INSTANCE, LABEL_VERSION};
use crate::error::{is_not_found, Error, Result};

const ROLE_LAB: &str = "lab";

/// A server in the lab: where the host side (the proxy) reaches it.
#[derive(Debug, Clone)]
pub struct Server {
    pub ip: Ipv4Addr,
    pub port: u16,
}

pub struct Lab {
    docker: Docker,
    instance: String,
    image: String,
    pub network: String,
    containers: Vec<String>,
    /// CPU quota for client containers (in CPUs), so a "direct" client can run under the same
    /// limit as the sandbox it is compared with.
    pub client_cpus: Option<f64>,
}

impl Lab {
    /// Creates the lab network `ironclaw-lab-<instance>-<n>` (internal: no way out).
    pub async fn create(docker: &Docker, instance: &str, image_tag: &str) -> Result<Lab> {
        let name = format!("ironclaw-lab-{instance}-{}", rand::random::<u32>());
        let request = NetworkCreateRequest {
            name: name.clone(),
            driver: Some("bridge".into()),
            internal: Some(true),
            labels: Some(labels(instance)),
            ..Default::default()
        };
        docker
            .create_network(request)
            .instrument(tracing::info_span!("docker.lab_network", %name))
            .await
            .map_err(|e| Error::docker("creating the lab network", e))?;
        Ok(Lab {
            docker: docker.clone(),
            instance: instance.to_string(),
            image: image_tag.to_string(),
            network: name,
            containers: Vec::new(),
            client_cpus: None,
        })
    }

    /// A plain HTTP server on `port`: `/index.html` says `hello from <tag>`, `/blob` is
    /// `blob_mib` MiB of zeros.
    pub async fn http_server(&mut self, tag: &str, port: u16, blob_mib: u64) -> Result<Server> {
        let script = format!(
            "mkdir -p /tmp/www && cd /tmp/www && echo 'hello from {tag}' > index.html && \
             head -c {blob_mib}M /dev/zero > blob && exec python3 -m http.server {port} --bind 0.0.0.0"
        );
        self.server(&script, port).await
    }

    /// A package mirror on `port`: a PEP 503 index at `/simple/` with one pure-Python wheel,
    /// `tinycalc` 1.0 (`tinycalc.mean`, `tinycalc.median`), for pip through the allowlist; and
    /// `/data/sales.csv`, a small dataset to download.
    pub async fn package_mirror(&mut self, port: u16) -> Result<Server> {
        let script = format!(
            "mkdir -p /tmp/www/simple/tinycalc /tmp/www/data && cd /tmp/www && python3 -c '{MIRROR}' \
             && exec python3 -m http.server {port} --bind 0.0.0.0"
        );
        self.server(&script, port).await
    }

    /// An HTTPS server on `port` with a fresh self-signed certificate for `cn`; `/index.html`
    /// says `hello from <tag>`.
    pub async fn tls_server(&mut self, tag: &str, cn: &str, port: u16) -> Result<Server> {
        let script = format!(
            "mkdir -p /tmp/www && cd /tmp/www && echo 'hello from {tag}' > index.html && \
             openssl req -x509 -newkey rsa:2048 -nodes -subj /CN={cn} -keyout /tmp/k.pem \
             -out /tmp/c.pem -days 1 2>/dev/null && exec python3 -c '\
import http.server, ssl\n\
s = http.server.ThreadingHTTPServer((\"0.0.0.0\", {port}), http.server.SimpleHTTPRequestHandler)\n\
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
c.load_cert_chain(\"/tmp/c.pem\", \"/tmp/k.pem\")\n\
s.socket = c.wrap_socket(s.socket, server_side=True)\n\
s.serve_forever()'"
        );
        self.server(&script, port).await
    }

    async fn server(&mut self, script: &str, port: u16) -> Result<Server> {
        let id = self
            .start(vec!["sh".into(), "-c".into(), script.into()], None)
            .await?;
        let ip = match container_ip(&self.docker, &id, &self.network).await? {
            Some(std::net::IpAddr::V4(ip)) => ip,
            _ => return Err(Error::Network("the lab server got no IPv4 address".into())),
        };
        // Ready when it accepts connections (from the host, as the proxy will connect).
        let deadline = Instant::now() + Duration::from_secs(60);
        while tokio::net::TcpStream::connect(SocketAddr::from((ip, port)))
            .await
            .is_err()
        {
            if Instant::now() > deadline {
                return Err(Error::Network(format!(
                    "the lab server {ip}:{port} never came up"
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(Server { ip, port })
    }

    /// Runs `python3 -c script` in a fresh container on the lab network (not a sandbox, not
    /// behind the proxy) and returns its stdout.
    pub async fn run_client(&mut self, script: &str) -> Result<String> {
        let id = self
            .start(
                vec!["python3".into(), "-c".into(), script.into()],
                self.client_cpus,
            )
            .await?;
        let mut wait = self.docker.wait_container(&id, None);
        while let Some(item) = wait.next().await {
            match item {
                Ok(_) => {}
                Err(bollard::errors::Error::DockerContainerWaitError { code, .. }) => {
                    let out = self.output(&id).await;
                    return Err(Error::Network(format!(
                        "the lab client failed ({code}): {out}"
                    )));
                }
                Err(e) => return Err(Error::docker("waiting for the lab client", e)),
            }
        }
        Ok(self.output(&id).await)
    }

    async fn output(&self, id: &str) -> String {
        let options = LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .build();
        let mut logs = self.docker.logs(id, Some(options));
        let mut out = Vec::new();
        while let Some(Ok(chunk)) = logs.next().await {
            out.extend_from_slice(&chunk.into_bytes());
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    async fn start(&mut self, cmd: Vec<String>, cpus: Option<f64>) -> Result<String> {
        let name = format!("ironclaw-lab-{}-{}", self.instance, rand::random::<u32>());
        let body = ContainerCreateBody {
            image: Some(self.image.clone()),
            user: Some("65534:65534".into()),
            cmd: Some(cmd),
            labels: Some(labels(&self.instance)),
            host_config: Some(HostConfig {
                network_mode: Some(self.network.clone()),
                cap_drop: Some(vec!["ALL".into()]),
                security_opt: Some(vec!["no-new-privileges:true".into()]),
                tmpfs: Some(HashMap::from([("/tmp".into(), "size=256m".into())])),
                readonly_rootfs: Some(true),
                nano_cpus: cpus.map(|c| (c * 1e9) as i64),
                ..Default::default()
            }),
            ..Default::default()
        };
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let id = self
            .docker
            .create_container(Some(options), body)
            .await
            .map_err(|e| Error::docker("creating a lab container", e))?
            .id;
        self.containers.push(id.clone());
        crate::container::start(&self.docker, &id).await?;
        Ok(id)
    }

    /// Removes the lab's containers and network.
    pub async fn remove(self) -> Result<()> {
        for id in &self.containers {
            crate::container::remove(&self.docker, id).await?;
        }
        match self.docker.remove_network(&self.network).await {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(Error::docker("removing the lab network", e)),
        }
    }
}

fn labels(instance: &str) -> HashMap<String, String> {
    HashMap::from([
        (LABEL_INSTANCE.to_string(), instance.to_string()),
        (LABEL_ROLE.to_string(), ROLE_LAB.to_string()),
        (LABEL_VERSION.to_string(), crate::VERSION.to_string()),
    ])
}

/// Removes every lab container and network of `instance` (after a run that could not clean up
/// itself, e.g. one interrupted mid-way).
pub async fn remove_all(docker: &Docker, instance: &str) -> Result<()> {
    let options = ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&super::engine::role_filter(instance, ROLE_LAB))
        .build();
    let found = docker
        .list_containers(Some(options))
        .await
        .map_err(|e| Error::docker("listing lab containers", e))?;
    for id in found.into_iter().filter_map(|c| c.id) {
        crate::container::remove(docker, &id).await?;
    }
    super::engine::remove_networks_with_role(docker, instance, ROLE_LAB).await
}

/// Builds the package mirror's files (see [`Lab::package_mirror`]); no single quotes (it is
/// passed to `python3 -c '…'`).
const MIRROR: &str = r#"
import base64, hashlib, zipfile
name = "tinycalc-1.0-py3-none-any.whl"
files = {
    "tinycalc/__init__.py": "def mean(xs):\n    xs = list(xs)\n    return sum(xs) / len(xs)\n\ndef median(xs):\n    s = sorted(xs)\n    n = len(s)\n    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n",
    "tinycalc-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinycalc\nVersion: 1.0\n",
    "tinycalc-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: lab\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def digest(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
record = "".join("%s,%s,%d\n" % (p, digest(c.encode()), len(c)) for p, c in files.items())
record += "tinycalc-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile("simple/tinycalc/" + name, "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
    z.writestr("tinycalc-1.0.dist-info/RECORD", record)
sha = hashlib.sha256(open("simple/tinycalc/" + name, "rb").read()).hexdigest()
open("simple/index.html", "w").write("<html><body><a href=\"tinycalc/\">tinycalc</a></body></html>\n")
open("simple/tinycalc/index.html", "w").write("<html><body><a href=\"%s#sha256=%s\">%s</a></body></html>\n" % (name, sha, name))
rows = ["region,month,units,price"]
for i, region in enumerate(["north", "south", "east", "west"]):
    for m in range(1, 13):
        rows.append("%s,2025-%02d,%d,%.2f" % (region, m, 10 + (i * 7 + m * 3) % 40, 4.5 + i))
open("data/sales.csv", "w").write("\n".join(rows) + "\n")
"#;
