//! The recovery screen's commands: what is damaged, the two ways out, and the start-up notices
//! for the banner. Until a way out succeeds only `Recovery` is managed, so every other command
//! fails with Tauri's "state not managed" instead of touching a history that is not open.

use ironclaw_desktop::startup::StartupState;
use ironclaw_desktop::{
    CommandError, Desktop, DesktopError, ErrorKind, Recovery, RecoveryOutcome, StartupNotice,
};
use tauri::{AppHandle, Manager, State};

use super::Res;

/// Whether the history is damaged (then only the recovery commands work until one succeeds).
#[tauri::command]
pub fn startup_state(app: AppHandle) -> StartupState {
    let waiting = app.try_state::<Desktop>().is_none();
    StartupState {
        history_damage: app
            .try_state::<Recovery>()
            .filter(|_| waiting)
            .map(|r| r.damage().clone()),
    }
}

/// Runs one way out off the UI thread (it reads and writes the whole history), then puts the
/// new `Desktop` in place so the app continues without a restart.
async fn replace(
    app: AppHandle,
    way_out: fn(&Recovery) -> Result<(Desktop, RecoveryOutcome), DesktopError>,
) -> Res<RecoveryOutcome> {
    if app.try_state::<Desktop>().is_some() {
        return Err(CommandError::new(
            ErrorKind::InvalidInput,
            "the history is already open; nothing to recover",
        ));
    }
    let handle = app.clone();
    let (desktop, outcome) = tauri::async_runtime::spawn_blocking(move || {
        let recovery = handle.try_state::<Recovery>().ok_or_else(|| {
            CommandError::new(
                ErrorKind::InvalidInput,
                "the history is not damaged; nothing to recover",
            )
        })?;
        way_out(&recovery).map_err(CommandError::from)
    })
    .await
    .map_err(|e| {
        CommandError::new(
            ErrorKind::Internal,
            format!("the recovery stopped unexpectedly: {e}"),
        )
    })??;
    app.manage(desktop);
    Ok(outcome)
}

#[tauri::command]
pub async fn start_fresh_history(app: AppHandle) -> Res<RecoveryOutcome> {
    replace(app, Recovery::start_fresh).await
}

#[tauri::command]
pub async fn recover_history(app: AppHandle) -> Res<RecoveryOutcome> {
    replace(app, Recovery::recover).await
}

/// What was found wrong at start that the app has not shown yet; each notice comes once.
#[tauri::command]
pub fn startup_notices(desktop: State<'_, Desktop>) -> Res<Vec<StartupNotice>> {
    Ok(desktop.take_notices()?)
}
