//! A saved report read back: the owned view of `stallscope.report.v1` that
//! `diff` and `check --baseline` compare. It holds only the fields they use;
//! unknown fields are ignored, so newer reports of the same schema still read.
//! A live [`Report`] goes through the same view ([`SavedReport::of`]), so a
//! recording and its saved JSON compare the same.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::report::{Report, SCHEMA};

#[derive(Debug, thiserror::Error)]
pub enum SavedError {
    // The cause is in the message only (see `KinetoError::Io`).
    #[error("{path}: cannot read: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: not a stallscope report: {why}")]
    Invalid { path: String, why: String },
    #[error(
        "{path}: a report of several ranks ({SCHEMA}.multi); compare one rank's \
         report or trace at a time"
    )]
    Multi { path: String },
    #[error("{path}: report schema {found:?} is not {SCHEMA:?}, the one this stallscope reads")]
    Schema { path: String, found: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedReport {
    pub schema: String,
    pub source: String,
    pub name: String,
    #[serde(default)]
    pub command: String,
    pub wall_ns: i64,
    pub steps: SavedSteps,
    pub devices: Vec<SavedDevice>,
    pub findings: Vec<SavedFinding>,
    #[serde(default)]
    pub minor: Vec<SavedFinding>,
    #[serde(default)]
    pub combined: Option<SavedCombined>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSteps {
    pub count: usize,
    pub mean_ns: i64,
    pub median_ns: i64,
    pub p90_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedDevice {
    pub id: String,
    #[serde(default)]
    pub name: String,
    pub idle_ns: i64,
    pub idle_by_cause_ns: BTreeMap<String, i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedFinding {
    pub cause: String,
    pub sub_cause: String,
    pub share_pct: f64,
    /// Over the whole window, as in the report.
    pub est_saving_ns: i64,
    /// The predicted mean step once fixed.
    pub est_step_ns_after: i64,
    #[serde(default)]
    pub fix: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedCombined {
    pub est_step_ns_after: i64,
    pub est_saving_ns: i64,
}

impl SavedFinding {
    /// "data/cpu", or "data" without a sub-cause.
    pub fn label(&self) -> String {
        if self.sub_cause.is_empty() {
            self.cause.clone()
        } else {
            format!("{}/{}", self.cause, self.sub_cause)
        }
    }
}

/// Whether the start of a file (a few KiB are enough) is a saved report's:
/// a JSON object naming a stallscope report schema. Reports are written with
/// `schema` first; Kineto traces never hold that name.
pub fn looks_like_report(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    text.trim_start().starts_with('{')
        && text.contains("\"schema\"")
        && text.contains("\"stallscope.report.")
}

impl SavedReport {
    /// The view of a report built in this process.
    pub fn of(r: &Report) -> SavedReport {
        let v = serde_json::to_value(r).expect("a report always serializes");
        serde_json::from_value(v).expect("a report always has the saved fields")
    }

    /// Parses a saved report; `path` names the file in errors.
    pub fn parse(bytes: &[u8], path: &str) -> Result<SavedReport, SavedError> {
        let v: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| SavedError::Invalid {
                path: path.into(),
                why: format!("not JSON ({e})"),
            })?;
        let schema = match v.get("schema") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(SavedError::Invalid {
                    path: path.into(),
                    why: "its \"schema\" is not a string".into(),
                });
            }
            None => {
                return Err(SavedError::Invalid {
                    path: path.into(),
                    why: "no \"schema\" field".into(),
                });
            }
        };
        if schema == format!("{SCHEMA}.multi") {
            return Err(SavedError::Multi { path: path.into() });
        }
        if schema != SCHEMA {
            return Err(SavedError::Schema {
                path: path.into(),
                found: schema,
            });
        }
        serde_json::from_value(v).map_err(|e| SavedError::Invalid {
            path: path.into(),
            why: e.to_string(),
        })
    }

    pub fn read(path: &Path) -> Result<SavedReport, SavedError> {
        let bytes = std::fs::read(path).map_err(|e| SavedError::Io {
            path: path.display().to_string(),
            err: e,
        })?;
        SavedReport::parse(&bytes, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal() -> serde_json::Value {
        serde_json::json!({
            "schema": "stallscope.report.v1",
            "source": "native",
            "name": "run1",
            "wall_ns": 1000,
            "steps": {"count": 2, "mean_ns": 500, "median_ns": 500, "p90_ns": 500,
                      "source": "nvtx"},
            "devices": [{"id": "0", "idle_ns": 100, "idle_by_cause_ns": {"data": 100}}],
            "findings": [],
            "future_field": [1, 2, 3]
        })
    }

    #[test]
    fn reads_a_minimal_report_and_ignores_unknown_fields() {
        let bytes = serde_json::to_vec(&minimal()).unwrap();
        let r = SavedReport::parse(&bytes, "a.json").unwrap();
        assert_eq!(r.steps.mean_ns, 500);
        assert_eq!(r.devices[0].idle_by_cause_ns["data"], 100);
        assert!(r.combined.is_none() && r.minor.is_empty());
        assert!(looks_like_report(&bytes));
    }

    #[test]
    fn errors_name_the_file_and_the_reason() {
        let mut v = minimal();
        v.as_object_mut().unwrap().remove("steps");
        let e = SavedReport::parse(&serde_json::to_vec(&v).unwrap(), "b.json").unwrap_err();
        let s = e.to_string();
        assert!(
            s.starts_with("b.json: ") && s.contains("missing field `steps`"),
            "{s}"
        );

        v = minimal();
        v["schema"] = "stallscope.report.v9".into();
        let s = SavedReport::parse(&serde_json::to_vec(&v).unwrap(), "c.json")
            .unwrap_err()
            .to_string();
        assert!(
            s.contains("c.json") && s.contains("stallscope.report.v9"),
            "{s}"
        );

        v["schema"] = "stallscope.report.v1.multi".into();
        let s = SavedReport::parse(&serde_json::to_vec(&v).unwrap(), "d.json")
            .unwrap_err()
            .to_string();
        assert!(s.contains("d.json") && s.contains("several ranks"), "{s}");

        let s = SavedReport::parse(b"{\"traceEvents\": [", "e.json")
            .unwrap_err()
            .to_string();
        assert!(
            s.starts_with("e.json: not a stallscope report: not JSON"),
            "{s}"
        );
    }

    #[test]
    fn a_kineto_trace_does_not_look_like_a_report() {
        assert!(!looks_like_report(
            br#"{"schemaVersion": 1, "traceEvents": [{"name": "ProfilerStep#1"}]}"#
        ));
        assert!(!looks_like_report(b"SSTR\x00\x01"));
    }
}
