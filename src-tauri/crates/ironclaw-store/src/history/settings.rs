//! Small app settings stored as JSON beside the history, so they share its durability.

use rusqlite::{params, OptionalExtension};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::History;
use crate::error::Result;
use crate::time::Timestamp;

impl History {
    /// The setting stored under `key`, or `None` if it was never set.
    pub fn get_setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let raw: Option<String> = self.read(|tx| {
            Ok(tx
                .query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                    r.get(0)
                })
                .optional()?)
        })?;
        raw.map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(Into::into)
    }

    /// Stores `value` under `key`, replacing any earlier value.
    pub fn set_setting<T: Serialize + ?Sized>(&self, key: &str, value: &T) -> Result<()> {
        let json = serde_json::to_string(value)?;
        self.write(|tx| {
            tx.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                params![key, json, Timestamp::now()],
            )?;
            Ok(())
        })
    }

    /// Removes the setting; `true` if there was one.
    pub fn delete_setting(&self, key: &str) -> Result<bool> {
        self.write(|tx| Ok(tx.execute("DELETE FROM settings WHERE key = ?1", [key])? > 0))
    }
}
