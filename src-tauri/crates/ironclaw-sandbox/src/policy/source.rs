//! Reading the policy files, deep-merging them, and blaming the right file for an error.

use std::path::Path;

use serde_yaml_ng::{Mapping, Value};

use super::{list, TOP_FIELDS};
use crate::error::{Error, Result};

/// Parses one file into a mapping (an empty file is an empty mapping), resolving `<<` merge keys.
pub(super) fn read_document(text: &str, path: &Path) -> Result<Value> {
    ironclaw_protocol::config_limits::check_yaml_limits(text).map_err(|message| Error::Config {
        file: path.to_path_buf(),
        field: "(file)".into(),
        message,
    })?;
    let syntax_error = |e: serde_yaml_ng::Error| {
        let mut message = e.to_string();
        if let Some(at) = e.location().filter(|_| !message.contains(" line ")) {
            message.push_str(&format!(" at line {} column {}", at.line(), at.column()));
        }
        Error::Config {
            file: path.to_path_buf(),
            field: "(YAML syntax)".into(),
            message,
        }
    };
    let mut value: Value = serde_yaml_ng::from_str(text).map_err(syntax_error)?;
    value.apply_merge().map_err(syntax_error)?;
    match value {
        Value::Mapping(_) => Ok(value),
        Value::Null => Ok(Value::Mapping(Mapping::new())),
        _ => Err(Error::Config {
            file: path.to_path_buf(),
            field: "(top level)".into(),
            message: format!("expected a mapping with the keys {}", list(TOP_FIELDS)),
        }),
    }
}

/// Deep merge: mappings merge key by key, anything else in `over` replaces `base`. An empty
/// (null) value over a mapping is an empty section (`profiles:` with everything commented out)
/// and changes nothing.
pub(super) fn merge(base: &mut Value, over: Value) {
    if let Value::Mapping(base_map) = base {
        match over {
            Value::Mapping(over_map) => {
                for (key, value) in over_map {
                    match base_map.get_mut(&key) {
                        Some(slot) => merge(slot, value),
                        None => {
                            base_map.insert(key, value);
                        }
                    }
                }
                return;
            }
            Value::Null => return,
            other => {
                *base = other;
                return;
            }
        }
    }
    *base = over;
}

/// Which file supplied which value: the user file if it has the path, else the defaults.
pub(super) struct Origins<'a> {
    pub defaults: &'a Path,
    pub user: Option<(&'a Value, &'a Path)>,
}

impl Origins<'_> {
    pub fn error(&self, field: &[String], message: String) -> Error {
        let file = match self.user {
            Some((value, path)) if !field.is_empty() && has_path(value, field) => path,
            _ => self.defaults,
        };
        Error::Config {
            file: file.to_path_buf(),
            field: if field.is_empty() {
                "(top level)".into()
            } else {
                field.join(".")
            },
            message,
        }
    }
}

pub(super) fn segment_name(segment: &serde_path_to_error::Segment) -> String {
    use serde_path_to_error::Segment;
    match segment {
        Segment::Seq { index } => index.to_string(),
        Segment::Map { key } => key.clone(),
        Segment::Enum { variant } => variant.clone(),
        Segment::Unknown => "?".into(),
    }
}

/// Whether `value` has the (dotted) path; an unknown segment (`?`) counts if its parent exists.
fn has_path(value: &Value, field: &[String]) -> bool {
    let mut current = value;
    for key in field {
        if key == "?" {
            return true;
        }
        let next = match current {
            Value::Mapping(map) => map
                .iter()
                .find(|(k, _)| key_matches(k, key))
                .map(|(_, v)| v),
            Value::Sequence(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(v) => current = v,
            None => return false,
        }
    }
    true
}

fn key_matches(key: &Value, wanted: &str) -> bool {
    match key {
        Value::String(s) => s == wanted,
        Value::Number(n) => n.to_string() == wanted,
        Value::Bool(b) => b.to_string() == wanted,
        _ => false,
    }
}
