//! The recording notification server and its private session bus.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironclaw_tests::agent::EVENT_GUARD;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;

pub const PATH: &str = "/org/freedesktop/Notifications";

#[derive(Debug, Clone)]
pub struct Notified {
    pub id: u32,
    pub summary: String,
    pub body: String,
    pub actions: Vec<String>,
}

#[derive(Default)]
pub struct Log {
    /// `Notify` calls received, answered or not.
    pub arrived: usize,
    pub notified: Vec<Notified>,
    pub closed: Vec<u32>,
}

pub struct Recorder {
    log: Arc<Mutex<Log>>,
    next_id: AtomicU32,
    /// `Notify` answers once it gets a permit: a held server keeps the caller waiting for the
    /// id, as a slow or busy notification daemon does.
    answer: Arc<tokio::sync::Semaphore>,
    /// Whether `CloseNotification` is answered with `NotificationClosed`, as most servers do.
    /// Off, a notification stays "clickable" after it was decided elsewhere: the stale case.
    signal_close: bool,
    /// Whether it advertises `body-markup`, as dunst, GNOME Shell and KDE do.
    reads_markup: bool,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Recorder {
    #[allow(clippy::too_many_arguments)]
    async fn notify(
        &self,
        _app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        self.log.lock().unwrap().arrived += 1;
        if let Ok(permit) = self.answer.acquire().await {
            permit.forget();
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        self.log.lock().unwrap().notified.push(Notified {
            id,
            summary,
            body,
            actions,
        });
        id
    }

    async fn close_notification(
        &self,
        id: u32,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> zbus::fdo::Result<()> {
        self.log.lock().unwrap().closed.push(id);
        if self.signal_close {
            Self::notification_closed(&emitter, id, 3).await?;
        }
        Ok(())
    }

    fn get_capabilities(&self) -> Vec<String> {
        let mut capabilities = vec!["actions".into(), "body".into()];
        if self.reads_markup {
            capabilities.push("body-markup".into());
        }
        capabilities
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "recorder".into(),
            "ironclaw-tests".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    #[zbus(signal)]
    async fn notification_closed(
        emitter: &SignalEmitter<'_>,
        id: u32,
        reason: u32,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn action_invoked(
        emitter: &SignalEmitter<'_>,
        id: u32,
        action_key: String,
    ) -> zbus::Result<()>;
}

/// A private session bus with the recording server on it. Killed on drop.
pub struct Bus {
    daemon: Child,
    server: zbus::Connection,
    pub log: Arc<Mutex<Log>>,
    answer: Arc<tokio::sync::Semaphore>,
}

impl Bus {
    pub async fn start(signal_close: bool) -> Self {
        Self::start_answering(signal_close, tokio::sync::Semaphore::MAX_PERMITS, false).await
    }

    /// A server that reads markup in bodies (see [`rendered_as_markup`]).
    pub async fn start_reading_markup() -> Self {
        Self::start_answering(true, tokio::sync::Semaphore::MAX_PERMITS, true).await
    }

    /// A server that answers no `Notify` until [`Bus::answer_one`].
    pub async fn start_holding(signal_close: bool) -> Self {
        Self::start_answering(signal_close, 0, false).await
    }

    async fn start_answering(signal_close: bool, permits: usize, reads_markup: bool) -> Self {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start dbus-daemon (Debian package `dbus`)");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().expect("stdout"))
            .read_line(&mut address)
            .expect("read the bus address");
        let address = address.trim().to_string();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        // This test is its own process (nextest), so the variable reaches only this core.
        std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &address);
        let log = Arc::new(Mutex::new(Log::default()));
        let answer = Arc::new(tokio::sync::Semaphore::new(permits));
        let recorder = Recorder {
            log: log.clone(),
            next_id: AtomicU32::new(7),
            answer: answer.clone(),
            signal_close,
            reads_markup,
        };
        let server = zbus::connection::Builder::address(address.as_str())
            .expect("bus address")
            .name("org.freedesktop.Notifications")
            .expect("name")
            .serve_at(PATH, recorder)
            .expect("serve")
            .build()
            .await
            .expect("own org.freedesktop.Notifications");
        Self {
            daemon,
            server,
            log,
            answer,
        }
    }

    /// Lets one held `Notify` be answered.
    pub fn answer_one(&self) {
        self.answer.add_permits(1);
    }

    /// Waits (with a guard) until `n` `Notify` calls have arrived, answered or not.
    pub async fn arrived(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + EVENT_GUARD;
        while self.log.lock().unwrap().arrived < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no Notify #{n} arrived within {EVENT_GUARD:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn notified(&self) -> Vec<Notified> {
        self.log.lock().unwrap().notified.clone()
    }

    pub fn closed_ids(&self) -> Vec<u32> {
        self.log.lock().unwrap().closed.clone()
    }

    /// Waits (with a guard) for the `n`th notification.
    pub async fn notification(&self, n: usize) -> Notified {
        let deadline = tokio::time::Instant::now() + EVENT_GUARD;
        loop {
            if let Some(found) = self.log.lock().unwrap().notified.get(n) {
                return found.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no notification #{n} within {EVENT_GUARD:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits (with a guard) until `CloseNotification` was called for `id`.
    pub async fn closed(&self, id: u32) {
        let deadline = tokio::time::Instant::now() + EVENT_GUARD;
        while !self.log.lock().unwrap().closed.contains(&id) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "notification {id} was never closed"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A click on one of the notification's buttons.
    pub async fn invoke(&self, id: u32, key: &str) {
        let iface = self
            .server
            .object_server()
            .interface::<_, Recorder>(PATH)
            .await
            .expect("the recorder interface");
        Recorder::action_invoked(iface.signal_emitter(), id, key.to_string())
            .await
            .expect("emit ActionInvoked");
    }
}

/// The text a server that reads markup shows for `body`: the freedesktop subset (and Pango's,
/// which dunst uses) is elements and entities, so tags draw nothing of their own (their
/// attributes can hide what they wrap: `<span alpha="1">`) and entities draw what they stand
/// for. Malformed markup is shown as it is, as dunst does.
pub fn rendered_as_markup(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some(c) = rest.chars().next() {
        if c == '<' {
            match rest.find('>') {
                Some(end) => {
                    rest = &rest[end + 1..];
                    continue;
                }
                None => return body.to_string(),
            }
        }
        if c == '&' {
            let entity = rest.find(';').map(|end| (&rest[1..end], end));
            let decoded = match entity {
                Some(("lt", _)) => Some('<'),
                Some(("gt", _)) => Some('>'),
                Some(("amp", _)) => Some('&'),
                Some(("quot", _)) => Some('"'),
                Some(("apos", _)) => Some('\''),
                Some((n, _)) if n.starts_with('#') => n[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            match (decoded, entity) {
                (Some(d), Some((_, end))) => {
                    out.push(d);
                    rest = &rest[end + 1..];
                    continue;
                }
                _ => return body.to_string(),
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
