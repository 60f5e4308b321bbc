//! What the proxy decides with and what it remembers: the allowlist (configured, "always",
//! per session, "once"), which sandbox address belongs to which session, the hosts each
//! session reached or was refused, and where the running execution hears of each refusal.
//!
//! Everything is behind plain mutexes held for microseconds: the proxy asks once per new
//! connection, never per byte.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::mpsc;

use crate::allowlist::{is_public, Host, HostPattern, Rule};

/// Hosts one execution reached and was refused, as `host:port`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetworkActivity {
    pub allowed: Vec<String>,
    pub denied: Vec<String>,
}

/// How long a user's "allow" lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AllowScope {
    /// Until the end of the session's next execution (or the current one, if one is running
    /// and the grant came after it started: then the following one).
    Once,
    /// For as long as this IronClaw process serves the session.
    Session,
    /// Written to `<config dir>/network.yaml`: every session, from now on.
    Always,
}

/// A host the proxy refused while an execution ran, told to that execution once, as it
/// happens ([`crate::exec::ExecEvent::NetworkBlocked`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// `host:port` as requested.
    pub target: String,
    /// Why it was refused, in words.
    pub reason: String,
    /// The user already answered "deny" for this host in this session: don't ask again.
    pub user_denied: bool,
}

/// How the proxy turns names into addresses.
#[derive(Debug, Clone, Default)]
pub enum Resolver {
    /// The host's resolver (`getaddrinfo`): what users get.
    #[default]
    System,
    /// Only these names exist; everything else fails to resolve. For tests, so that nothing
    /// touches real DNS.
    Fixed(Arc<HashMap<String, Vec<IpAddr>>>),
}

impl Resolver {
    pub fn fixed(entries: impl IntoIterator<Item = (String, Vec<IpAddr>)>) -> Self {
        Resolver::Fixed(Arc::new(entries.into_iter().collect()))
    }

    pub(crate) async fn resolve(&self, name: &str, port: u16) -> std::io::Result<Vec<IpAddr>> {
        match self {
            Resolver::System => Ok(tokio::net::lookup_host((name, port))
                .await?
                .map(|a| a.ip())
                .collect()),
            Resolver::Fixed(map) => map
                .get(name)
                .cloned()
                .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such host")),
        }
    }
}

/// A name Docker resolved for us stays trusted this long; after that we ask again, because the
/// address may have gone to another container.
const PEER_TTL: Duration = Duration::from_secs(5);

#[derive(Default)]
struct SessionState {
    grants: Vec<(Rule, Option<u64>)>,
    user_denied: BTreeSet<String>,
    epoch: u64,
    allowed: BTreeSet<String>,
    denied: BTreeSet<String>,
    /// The running execution's ear: each new refusal goes here while it runs.
    refusals: Option<mpsc::UnboundedSender<Refusal>>,
}

pub(crate) struct State {
    base: RwLock<Vec<Rule>>,
    /// Sessions that reach only their own grants, never the shared list (tool servers, each
    /// with the hosts its configuration names).
    exclusive: Mutex<std::collections::HashSet<String>>,
    sessions: Mutex<HashMap<String, SessionState>>,
    peers: Mutex<HashMap<IpAddr, (String, Option<Instant>)>>,
    resolver: RwLock<Resolver>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these cannot leave the data half-updated in a way that
    // matters more than losing the proxy would.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    pub fn new(base: Vec<Rule>) -> Self {
        Self {
            base: RwLock::new(base),
            exclusive: Mutex::default(),
            sessions: Mutex::default(),
            peers: Mutex::default(),
            resolver: RwLock::default(),
        }
    }

    pub fn set_base(&self, rules: Vec<Rule>) {
        *self.base.write().unwrap_or_else(|e| e.into_inner()) = rules;
    }

    pub fn add_base(&self, rule: Rule) {
        let mut base = self.base.write().unwrap_or_else(|e| e.into_inner());
        if !base.contains(&rule) {
            base.push(rule);
        }
    }

    pub fn base(&self) -> Vec<Rule> {
        self.base.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn set_resolver(&self, resolver: Resolver) {
        *self.resolver.write().unwrap_or_else(|e| e.into_inner()) = resolver;
    }

    pub fn resolver(&self) -> Resolver {
        self.resolver
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether any rule visible to `session` admits `host:port`.
    pub fn admits(&self, session: &str, host: &Host, port: u16) -> bool {
        self.any_rule(session, |r| r.matches(host, port))
    }

    /// The first resolved address the session may not reach: a non-public one that is not
    /// itself on the list.
    pub fn forbidden_address(&self, session: &str, addrs: &[IpAddr], port: u16) -> Option<IpAddr> {
        addrs
            .iter()
            .copied()
            .find(|ip| !is_public(*ip) && !self.any_rule(session, |r| r.names_address(*ip, port)))
    }

    fn any_rule(&self, session: &str, test: impl Fn(&Rule) -> bool) -> bool {
        let exclusive = lock(&self.exclusive).contains(session);
        if !exclusive
            && self
                .base
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(&test)
        {
            return true;
        }
        lock(&self.sessions)
            .get(session)
            .is_some_and(|s| s.grants.iter().any(|(r, _)| test(r)))
    }

    pub fn grant(&self, session: &str, rule: Rule, once: bool) {
        let mut sessions = lock(&self.sessions);
        let s = sessions.entry(session.to_string()).or_default();
        let epoch = once.then_some(s.epoch);
        s.user_denied.retain(|h| !rule.matches_text(h));
        s.grants.push((rule, epoch));
    }

    /// `host` may carry a port (as in [`NetworkActivity::denied`]); the answer covers the host.
    pub fn deny(&self, session: &str, host: &str) {
        let key = match host.parse::<Rule>().map(|r| r.host) {
            Ok(HostPattern::Exact(name)) => name,
            Ok(HostPattern::Ip(ip)) => Host::Ip(ip).to_string(),
            Ok(HostPattern::Suffix(_)) | Err(_) => host.to_ascii_lowercase(),
        };
        lock(&self.sessions)
            .entry(session.to_string())
            .or_default()
            .user_denied
            .insert(key);
    }

    /// Starts an execution's bookkeeping; returns its epoch for [`State::end_exec`] and the
    /// channel its refusals arrive on, each host once. The proxy records before it answers, so
    /// after `end_exec` every refusal of the execution is in the channel.
    pub fn begin_exec(&self, session: &str) -> (u64, mpsc::UnboundedReceiver<Refusal>) {
        let mut sessions = lock(&self.sessions);
        let s = sessions.entry(session.to_string()).or_default();
        s.epoch += 1;
        s.allowed.clear();
        s.denied.clear();
        let (tx, rx) = mpsc::unbounded_channel();
        s.refusals = Some(tx);
        (s.epoch, rx)
    }

    /// What the execution reached; "once" grants made before it started expire now.
    pub fn end_exec(&self, session: &str, epoch: u64) -> NetworkActivity {
        let mut sessions = lock(&self.sessions);
        let s = sessions.entry(session.to_string()).or_default();
        s.grants
            .retain(|(_, once)| once.is_none_or(|granted| granted >= epoch));
        s.refusals = None;
        NetworkActivity {
            allowed: std::mem::take(&mut s.allowed).into_iter().collect(),
            denied: std::mem::take(&mut s.denied).into_iter().collect(),
        }
    }

    /// `session` reaches exactly `rules` from now on: not the shared list, not what it was
    /// granted before.
    pub fn own_list(&self, session: &str, rules: Vec<Rule>) {
        lock(&self.exclusive).insert(session.to_string());
        let mut sessions = lock(&self.sessions);
        let s = sessions.entry(session.to_string()).or_default();
        s.grants = rules.into_iter().map(|r| (r, None)).collect();
    }

    pub fn forget_session(&self, session: &str) {
        lock(&self.exclusive).remove(session);
        lock(&self.sessions).remove(session);
        lock(&self.peers).retain(|_, (s, _)| s != session);
    }

    pub fn record(&self, session: &str, host: &Host, port: u16, denial: Option<String>) {
        let target = format!("{host}:{port}");
        match &denial {
            None => tracing::info!(session, %target, "network: allowed"),
            Some(reason) => tracing::info!(session, %target, reason, "network: denied"),
        }
        let mut sessions = lock(&self.sessions);
        let s = sessions.entry(session.to_string()).or_default();
        let Some(reason) = denial else {
            s.allowed.insert(target);
            return;
        };
        if !s.denied.insert(target.clone()) {
            return;
        }
        let refusal = Refusal {
            target,
            reason,
            user_denied: s.user_denied.contains(&host.to_string()),
        };
        // No execution running (a process a run left behind, say): the log line is all.
        if let Some(tx) = &s.refusals {
            let _ = tx.send(refusal);
        }
    }

    pub fn register_peer(&self, ip: IpAddr, session: &str) {
        lock(&self.peers).insert(ip, (session.to_string(), None));
    }

    pub fn remember_peer(&self, ip: IpAddr, session: &str) {
        let expires = Instant::now() + PEER_TTL;
        lock(&self.peers).insert(ip, (session.to_string(), Some(expires)));
    }

    pub fn peer(&self, ip: IpAddr) -> Option<String> {
        let peers = lock(&self.peers);
        match peers.get(&ip) {
            Some((s, None)) => Some(s.clone()),
            Some((s, Some(until))) if *until > Instant::now() => Some(s.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn host(s: &str) -> Host {
        Host::parse(s).unwrap()
    }

    #[test]
    fn session_grants_stay_with_their_session() {
        let state = State::new(vec!["base.example.internal".parse().unwrap()]);
        state.grant("a", "extra.example.internal".parse().unwrap(), false);
        assert!(state.admits("a", &host("extra.example.internal"), 443));
        assert!(!state.admits("b", &host("extra.example.internal"), 443));
        assert!(state.admits("b", &host("base.example.internal"), 443));
    }

    #[test]
    fn once_grants_last_through_the_next_execution() {
        let state = State::new(vec![]);
        let h = host("once.example.internal");
        let (e1, _) = state.begin_exec("s");
        // Granted while execution 1 runs (it was denied there): good for execution 2.
        state.grant("s", "once.example.internal".parse().unwrap(), true);
        state.end_exec("s", e1);
        assert!(state.admits("s", &h, 443));
        let (e2, _) = state.begin_exec("s");
        assert!(state.admits("s", &h, 443));
        state.end_exec("s", e2);
        assert!(!state.admits("s", &h, 443));
    }

    #[test]
    fn activity_is_per_execution() {
        let state = State::new(vec![]);
        let (e, _) = state.begin_exec("s");
        state.record("s", &host("a.example.internal"), 443, None);
        state.record(
            "s",
            &host("b.example.internal"),
            80,
            Some("not listed".into()),
        );
        state.record(
            "s",
            &host("b.example.internal"),
            80,
            Some("not listed".into()),
        );
        let act = state.end_exec("s", e);
        assert_eq!(act.allowed, vec!["a.example.internal:443"]);
        assert_eq!(act.denied, vec!["b.example.internal:80"]);
        let (e, _) = state.begin_exec("s");
        assert_eq!(state.end_exec("s", e), NetworkActivity::default());
    }

    #[test]
    fn private_addresses_need_their_own_rule() {
        let state = State::new(vec!["web.example.internal:8000".parse().unwrap()]);
        let private: IpAddr = "172.20.0.5".parse().unwrap();
        assert_eq!(
            state.forbidden_address("s", &[private], 8000),
            Some(private)
        );
        state.set_base(vec![
            "web.example.internal:8000".parse().unwrap(),
            "172.20.0.5:8000".parse().unwrap(),
        ]);
        assert_eq!(state.forbidden_address("s", &[private], 8000), None);
        let public: IpAddr = "1.2.3.4".parse().unwrap();
        assert_eq!(state.forbidden_address("s", &[public], 8000), None);
    }

    #[test]
    fn the_running_execution_hears_each_refusal_once_and_only_its_own_session() {
        let state = State::new(vec![]);
        let (epoch, mut rx) = state.begin_exec("s");
        let (_, mut other) = state.begin_exec("t");
        state.deny("s", "nope.example.internal:443");
        for _ in 0..3 {
            state.record(
                "s",
                &host("nope.example.internal"),
                443,
                Some("not listed".into()),
            );
        }
        state.record("s", &host("fresh.example.internal"), 80, Some("x".into()));
        state.record("s", &host("ok.example.internal"), 443, None);
        let activity = state.end_exec("s", epoch);
        let mut heard = Vec::new();
        while let Ok(r) = rx.try_recv() {
            heard.push(r);
        }
        assert_eq!(
            heard,
            [
                Refusal {
                    target: "nope.example.internal:443".into(),
                    reason: "not listed".into(),
                    user_denied: true,
                },
                Refusal {
                    target: "fresh.example.internal:80".into(),
                    reason: "x".into(),
                    user_denied: false,
                },
            ]
        );
        assert_eq!(activity.denied.len(), 2);
        assert!(other.try_recv().is_err(), "another session heard nothing");
        // After the execution, nothing is listening and nothing is queued.
        state.record("s", &host("late.example.internal"), 80, Some("x".into()));
        assert!(rx.try_recv().is_err());
    }
}
