//! Which checkpoint-record run each execution is, what it changed, and whether it is undone.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension};

use super::History;
use crate::error::Result;
use ironclaw_protocol::{ConversationId, ExecutionId, FileChange};

/// One execution's checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunCheckpoint {
    pub run_id: String,
    pub changes: Vec<FileChange>,
    pub undone: bool,
}

impl History {
    /// Records the checkpoint of a finished run.
    pub fn record_run_checkpoint(
        &self,
        execution: ExecutionId,
        run_id: &str,
        changes: &[FileChange],
    ) -> Result<()> {
        let json = serde_json::to_string(changes)?;
        self.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO run_checkpoints (execution_id, run_id, changes, undone)
                 VALUES (?1, ?2, ?3, 0)",
                params![execution, run_id, json],
            )?;
            Ok(())
        })
    }

    pub fn run_checkpoint(&self, execution: ExecutionId) -> Result<Option<RunCheckpoint>> {
        self.read(|tx| {
            Ok(tx
                .query_row(
                    "SELECT run_id, changes, undone FROM run_checkpoints WHERE execution_id = ?1",
                    [execution],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, bool>(2)?,
                        ))
                    },
                )
                .optional()?
                .map(|(run_id, changes, undone)| RunCheckpoint {
                    run_id,
                    changes: serde_json::from_str(&changes).unwrap_or_default(),
                    undone,
                }))
        })
    }

    /// Every run's checkpoint in a conversation.
    pub fn run_checkpoints(
        &self,
        conversation: ConversationId,
    ) -> Result<HashMap<ExecutionId, RunCheckpoint>> {
        self.read(|tx| {
            let mut query = tx.prepare(
                "SELECT c.execution_id, c.run_id, c.changes, c.undone FROM run_checkpoints c
                 JOIN executions x ON x.id = c.execution_id WHERE x.conversation_id = ?1",
            )?;
            let rows = query.query_map([conversation], |r| {
                Ok((
                    r.get::<_, ExecutionId>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, bool>(3)?,
                ))
            })?;
            let mut out = HashMap::new();
            for row in rows {
                let (id, run_id, changes, undone) = row?;
                out.insert(
                    id,
                    RunCheckpoint {
                        run_id,
                        changes: serde_json::from_str(&changes).unwrap_or_default(),
                        undone,
                    },
                );
            }
            Ok(out)
        })
    }

    /// The execution a checkpoint-record run id belongs to, in this conversation.
    pub fn execution_of_run(
        &self,
        conversation: ConversationId,
        run_id: &str,
    ) -> Result<Option<ExecutionId>> {
        self.read(|tx| {
            Ok(tx
                .query_row(
                    "SELECT c.execution_id FROM run_checkpoints c
                     JOIN executions x ON x.id = c.execution_id
                     WHERE x.conversation_id = ?1 AND c.run_id = ?2",
                    params![conversation, run_id],
                    |r| r.get(0),
                )
                .optional()?)
        })
    }

    pub fn set_run_undone(&self, execution: ExecutionId, undone: bool) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE run_checkpoints SET undone = ?2 WHERE execution_id = ?1",
                params![execution, undone],
            )?;
            Ok(())
        })
    }
}
