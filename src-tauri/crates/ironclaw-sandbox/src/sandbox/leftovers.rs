//! What a session's interpreters carry from earlier runs, asked for before anything runs: a
//! process that attaches afresh (the app or CLI restarted) must warn about an altered
//! interpreter at its first approval, not learn it from that run's report.

use std::time::Duration;

use tracing::Instrument;

use super::Sandbox;
use crate::container::{self, State};
use crate::error::Result;
use crate::exec::connection::{Connection, HeldInside};
use crate::policy::Runtime;
use crate::protocol::Leftovers;
use crate::session::SessionName;

/// A running supervisor answers within milliseconds; the question comes before an approval is
/// shown, so a frozen container must not hold that up for long.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

impl Sandbox {
    /// Never starts or creates a container: one that is not running, or that the next run
    /// will replace (another image or confinement), has no earlier runs' state, so the answer
    /// is empty.
    pub async fn leftovers(&self, name: &SessionName) -> Result<Leftovers> {
        let span = tracing::info_span!("sandbox.leftovers", session = %name);
        async {
            let Some(found) = self.container_of(name).await? else {
                return Ok(Leftovers::new());
            };
            if found.state != State::Running
                || found.image_hash != self.image.hash
                || found.confinement != container::confinement_of(found.runtime)
            {
                return Ok(Leftovers::new());
            }
            let slot = self.slot(name).await;
            let warm = slot.lock().await;
            match (&warm.container_id, &warm.conn) {
                (Some(id), Some(conn)) if *id == found.id && !conn.is_closed() => {
                    conn.ping(ANSWER_TIMEOUT).await
                }
                // A connection of our own just for the question; the next run attaches its own.
                _ => {
                    Connection::attach(&self.docker, &found.id)
                        .await?
                        .ping(ANSWER_TIMEOUT)
                        .await
                }
            }
        }
        .instrument(span)
        .await
    }

    /// Under gVisor: which workspace files a process in the sandbox holds open for writing,
    /// asked from inside (`image/write_holds.py`). `None` under runc, or when no supervisor of
    /// the current confinement runs: then the host's own answer stands.
    pub(super) async fn held_inside(&self, name: &SessionName) -> Result<Option<HeldInside>> {
        let span = tracing::info_span!("sandbox.held_inside", session = %name);
        async {
            let Some(found) = self.container_of(name).await? else {
                return Ok(None);
            };
            if found.runtime != Runtime::Runsc
                || found.state != State::Running
                || found.image_hash != self.image.hash
                || found.confinement != container::confinement_of(found.runtime)
            {
                return Ok(None);
            }
            let slot = self.slot(name).await;
            let warm = slot.lock().await;
            let held = match (&warm.container_id, &warm.conn) {
                (Some(id), Some(conn)) if *id == found.id && !conn.is_closed() => {
                    conn.held(ANSWER_TIMEOUT).await?
                }
                _ => {
                    Connection::attach(&self.docker, &found.id)
                        .await?
                        .held(ANSWER_TIMEOUT)
                        .await?
                }
            };
            Ok(Some(held))
        }
        .instrument(span)
        .await
    }
}
