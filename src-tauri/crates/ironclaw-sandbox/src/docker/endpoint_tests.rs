#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use super::*;

/// A fake machine: a docker config dir, a place for sockets, and no real sockets unless made.
struct Fixture {
    tmp: TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    fn config_dir(&self) -> PathBuf {
        self.tmp.path().join("dot-docker")
    }

    fn env(&self) -> EnvSnapshot {
        EnvSnapshot {
            docker_config_dir: Some(self.config_dir()),
            default_socket: self.tmp.path().join("var-run/docker.sock"),
            system_podman_socket: self.tmp.path().join("run/podman/podman.sock"),
            ..EnvSnapshot::default()
        }
    }

    fn touch(&self, path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }

    fn write_config(&self, json: &str) {
        fs::create_dir_all(self.config_dir()).unwrap();
        fs::write(self.config_dir().join("config.json"), json).unwrap();
    }

    fn write_context(&self, name: &str, meta_json: &str) {
        let path = context::meta_path(&self.config_dir(), name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, meta_json).unwrap();
    }

    fn write_context_tls(&self, name: &str, files: &[&str]) -> PathBuf {
        let dir = context::tls_dir(&self.config_dir(), name);
        fs::create_dir_all(&dir).unwrap();
        for f in files {
            fs::write(dir.join(f), "pem").unwrap();
        }
        dir
    }
}

fn meta(name: &str, host: &str, skip_tls_verify: bool) -> String {
    format!(
        r#"{{"Name":"{name}","Metadata":{{}},"Endpoints":{{"docker":{{"Host":"{host}","SkipTLSVerify":{skip_tls_verify}}}}}}}"#
    )
}

#[test]
fn context_dir_is_sha256_hex_of_the_name() {
    let path = context::meta_path(Path::new("/cfg"), "remote");
    assert_eq!(
        path,
        Path::new("/cfg/contexts/meta/b71199ebd070b36beab7317920c2c2f1d777df8d05e5527d8458fda57cb17a7a/meta.json")
    );
}

#[test]
fn docker_host_beats_context_beats_default() {
    let fx = Fixture::new();
    fx.touch(&fx.env().default_socket);
    fx.write_context("remote", &meta("remote", "unix:///ctx/docker.sock", false));
    fx.write_config(r#"{"auths":{},"currentContext":"remote"}"#);

    let mut env = fx.env();
    env.docker_host = Some("unix:///from/env.sock".into());
    env.docker_context = Some("remote".into());
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(ep.kind, EndpointKind::Unix("/from/env.sock".into()));
    assert_eq!(ep.source, EndpointSource::DockerHost);
    assert_eq!(ep.host, "unix:///from/env.sock");

    env.docker_host = None;
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(ep.kind, EndpointKind::Unix("/ctx/docker.sock".into()));
    assert_eq!(ep.source, EndpointSource::Context("remote".into()));

    // Without DOCKER_CONTEXT the config's currentContext still applies...
    env.docker_context = None;
    assert_eq!(
        resolve_endpoint(&env).unwrap().source,
        EndpointSource::Context("remote".into())
    );

    // ...and DOCKER_CONTEXT=default overrides it back to the default socket.
    env.docker_context = Some("default".into());
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(ep.source, EndpointSource::Default);
    assert_eq!(ep.kind, EndpointKind::Unix(fx.env().default_socket));
}

#[test]
fn empty_docker_host_counts_as_unset() {
    let fx = Fixture::new();
    fx.touch(&fx.env().default_socket);
    let env = EnvSnapshot {
        docker_host: Some("  ".into()),
        ..fx.env()
    };
    assert_eq!(
        resolve_endpoint(&env).unwrap().source,
        EndpointSource::Default
    );
}

#[test]
fn context_with_tls_material() {
    let fx = Fixture::new();
    fx.write_context("remote", &meta("remote", "tcp://10.0.0.5:2376", false));
    let dir = fx.write_context_tls("remote", &["ca.pem", "cert.pem", "key.pem"]);
    let env = EnvSnapshot {
        docker_context: Some("remote".into()),
        ..fx.env()
    };
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(ep.host, "tcp://10.0.0.5:2376");
    assert_eq!(
        ep.kind,
        EndpointKind::Tcp {
            addr: "10.0.0.5:2376".into(),
            tls: Some(TlsFiles {
                ca: dir.join("ca.pem"),
                cert: dir.join("cert.pem"),
                key: dir.join("key.pem"),
            }),
        }
    );
}

#[test]
fn context_without_tls_dir_is_plain_tcp_with_default_port() {
    let fx = Fixture::new();
    fx.write_context("lan", &meta("lan", "tcp://build-box", false));
    let env = EnvSnapshot {
        docker_context: Some("lan".into()),
        ..fx.env()
    };
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(
        ep.kind,
        EndpointKind::Tcp {
            addr: "build-box:2375".into(),
            tls: None
        }
    );
}

#[test]
fn context_tls_problems_are_context_errors() {
    let fx = Fixture::new();
    fx.write_context("half", &meta("half", "tcp://h:2376", false));
    fx.write_context_tls("half", &["ca.pem"]);
    fx.write_context("insecure", &meta("insecure", "tcp://h:2376", true));
    for (name, needle) in [("half", "key.pem"), ("insecure", "SkipTLSVerify")] {
        let env = EnvSnapshot {
            docker_context: Some(name.into()),
            ..fx.env()
        };
        match resolve_endpoint(&env) {
            Err(Error::DockerContext { context, reason }) => {
                assert_eq!(context, name);
                assert!(reason.contains(needle), "{reason}");
            }
            other => panic!("expected a DockerContext error for {name}, got {other:?}"),
        }
    }
}

#[test]
fn unknown_context_is_named_in_the_error() {
    let fx = Fixture::new();
    fx.write_config(r#"{"currentContext":"colima"}"#);
    let err = resolve_endpoint(&fx.env()).unwrap_err();
    match &err {
        Error::DockerContext { context, reason } => {
            assert_eq!(context, "colima");
            assert!(reason.contains("docker context ls"), "{reason}");
        }
        other => panic!("expected DockerContext, got {other:?}"),
    }
    assert!(err.to_string().contains("\"colima\""), "{err}");
}

#[test]
fn malformed_meta_json_says_where() {
    let fx = Fixture::new();
    fx.write_context(
        "broken",
        r#"{"Name":"broken","Endpoints":{"docker":{"Host":42}}}"#,
    );
    let env = EnvSnapshot {
        docker_context: Some("broken".into()),
        ..fx.env()
    };
    match resolve_endpoint(&env) {
        Err(Error::DockerContext { context, reason }) => {
            assert_eq!(context, "broken");
            assert!(reason.contains("meta.json is malformed"), "{reason}");
            assert!(reason.contains("Endpoints.docker.Host"), "{reason}");
        }
        other => panic!("expected DockerContext, got {other:?}"),
    }

    fx.write_context("nodocker", r#"{"Name":"nodocker","Endpoints":{}}"#);
    let env = EnvSnapshot {
        docker_context: Some("nodocker".into()),
        ..fx.env()
    };
    let err = resolve_endpoint(&env).unwrap_err();
    assert!(err.to_string().contains("no docker endpoint"), "{err}");
}

#[test]
fn malformed_config_json_is_ignored_like_the_cli_does() {
    let fx = Fixture::new();
    fx.touch(&fx.env().default_socket);
    fx.write_config("{not json");
    assert_eq!(
        resolve_endpoint(&fx.env()).unwrap().source,
        EndpointSource::Default
    );
}

#[test]
fn podman_sockets_only_when_the_docker_socket_is_missing() {
    let fx = Fixture::new();
    let xdg = fx.tmp.path().join("xdg");
    let rootless = xdg.join("podman/podman.sock");
    let env = EnvSnapshot {
        xdg_runtime_dir: Some(xdg),
        ..fx.env()
    };

    // Nothing at all: the default socket, so connecting can explain what is missing.
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(
        (ep.kind, ep.source),
        (
            EndpointKind::Unix(env.default_socket.clone()),
            EndpointSource::Default
        )
    );

    fx.touch(&env.system_podman_socket);
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(
        (ep.kind, ep.source),
        (
            EndpointKind::Unix(env.system_podman_socket.clone()),
            EndpointSource::Podman
        )
    );

    fx.touch(&rootless);
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(
        (ep.kind, ep.source),
        (EndpointKind::Unix(rootless), EndpointSource::Podman)
    );

    fx.touch(&env.default_socket);
    assert_eq!(
        resolve_endpoint(&env).unwrap().source,
        EndpointSource::Default
    );
}

#[test]
fn tcp_with_tls_verify_picks_cert_files() {
    let fx = Fixture::new();
    let certs = fx.tmp.path().join("certs");
    for f in ["ca.pem", "cert.pem", "key.pem"] {
        fx.touch(&certs.join(f));
    }
    let env = EnvSnapshot {
        docker_host: Some("tcp://192.168.1.20".into()),
        docker_tls_verify: true,
        docker_cert_path: Some(certs.clone()),
        ..fx.env()
    };
    let ep = resolve_endpoint(&env).unwrap();
    assert_eq!(
        ep.kind,
        EndpointKind::Tcp {
            addr: "192.168.1.20:2376".into(),
            tls: Some(TlsFiles::in_dir(&certs)),
        }
    );

    // Without DOCKER_CERT_PATH the docker config dir is where the CLI looks, so do we.
    for f in ["ca.pem", "cert.pem", "key.pem"] {
        fx.touch(&fx.config_dir().join(f));
    }
    let env = EnvSnapshot {
        docker_cert_path: None,
        ..env
    };
    let EndpointKind::Tcp { tls, .. } = resolve_endpoint(&env).unwrap().kind else {
        panic!("expected tcp")
    };
    assert_eq!(tls, Some(TlsFiles::in_dir(&fx.config_dir())));
}

#[test]
fn tcp_tls_with_missing_cert_names_the_file() {
    let fx = Fixture::new();
    let certs = fx.tmp.path().join("certs");
    fx.touch(&certs.join("ca.pem"));
    fx.touch(&certs.join("cert.pem"));
    let env = EnvSnapshot {
        docker_host: Some("tcp://h:2376".into()),
        docker_tls_verify: true,
        docker_cert_path: Some(certs),
        ..fx.env()
    };
    match resolve_endpoint(&env) {
        Err(Error::DockerUnreachable { endpoint, reason }) => {
            assert_eq!(endpoint, "tcp://h:2376");
            assert!(reason.contains("key.pem is missing"), "{reason}");
        }
        other => panic!("expected DockerUnreachable, got {other:?}"),
    }
}

#[test]
fn plain_tcp_keeps_explicit_port() {
    let env = EnvSnapshot {
        docker_host: Some("tcp://127.0.0.1:2375/".into()),
        ..Fixture::new().env()
    };
    assert_eq!(
        resolve_endpoint(&env).unwrap().kind,
        EndpointKind::Tcp {
            addr: "127.0.0.1:2375".into(),
            tls: None
        }
    );
}

#[test]
fn ssh_is_refused_with_a_way_forward() {
    let fx = Fixture::new();
    fx.write_context("ssh-box", &meta("ssh-box", "ssh://me@box", false));
    let via_env = EnvSnapshot {
        docker_host: Some("ssh://me@box".into()),
        ..fx.env()
    };
    let via_context = EnvSnapshot {
        docker_context: Some("ssh-box".into()),
        ..fx.env()
    };
    for env in [via_env, via_context] {
        match resolve_endpoint(&env) {
            Err(Error::DockerUnreachable { endpoint, reason }) => {
                assert_eq!(endpoint, "ssh://me@box");
                assert!(reason.contains("not supported yet"), "{reason}");
                assert!(reason.contains("docker context"), "{reason}");
            }
            other => panic!("expected DockerUnreachable, got {other:?}"),
        }
    }
}

#[test]
fn host_parsing() {
    let tcp = |host: &str, port: Option<u16>| ParsedHost::Tcp {
        host: host.into(),
        port,
        https: false,
    };
    assert_eq!(
        parse_host("unix:///run/docker.sock"),
        Ok(ParsedHost::Unix("/run/docker.sock".into()))
    );
    assert_eq!(
        parse_host("/run/docker.sock"),
        Ok(ParsedHost::Unix("/run/docker.sock".into()))
    );
    assert_eq!(parse_host("tcp://[::1]:2375"), Ok(tcp("[::1]", Some(2375))));
    assert_eq!(parse_host("tcp://[::1]"), Ok(tcp("[::1]", None)));
    assert_eq!(parse_host("tcp://:2375"), Ok(tcp("127.0.0.1", Some(2375))));
    assert_eq!(parse_host("ssh://x"), Err(HostError::Ssh));
    for bad in [
        "unix://",
        "tcp://h:port",
        "tcp://h:2375/v1",
        "npipe:////./pipe/docker",
        "docker.sock",
    ] {
        assert!(
            matches!(parse_host(bad), Err(HostError::Invalid(_))),
            "{bad}"
        );
    }
}
