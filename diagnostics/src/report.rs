//! The report schema: what a check returns and what `--json` prints.
//!
//! Stable: tools outside this project read it. Change it only by adding fields, and bump
//! [`SCHEMA_VERSION`] for anything else.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

pub const SCHEMA_VERSION: u32 = 1;

/// A check's stable id, as typed on the command line (`mldebug check <id>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckId {
    InitLoss,
    Overfit,
    GradFlow,
    NanTrace,
    LabelMask,
    BatchLeak,
    ClassBalance,
}

impl CheckId {
    /// Every check, in the order `all` runs them (cheapest and most basic first).
    pub const ALL: [CheckId; 7] = [
        CheckId::InitLoss,
        CheckId::ClassBalance,
        CheckId::LabelMask,
        CheckId::GradFlow,
        CheckId::NanTrace,
        CheckId::BatchLeak,
        CheckId::Overfit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::InitLoss => "init-loss",
            CheckId::Overfit => "overfit",
            CheckId::GradFlow => "grad-flow",
            CheckId::NanTrace => "nan-trace",
            CheckId::LabelMask => "label-mask",
            CheckId::BatchLeak => "batch-leak",
            CheckId::ClassBalance => "class-balance",
        }
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CheckId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        CheckId::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                let ids: Vec<&str> = CheckId::ALL.iter().map(|c| c.as_str()).collect();
                format!("unknown check `{s}`; the checks are: {}, all", ids.join(", "))
            })
    }
}

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pass,
    Warn,
    Fail,
    /// The check cannot judge this model (the reason is in the summary); never a pass.
    Skipped,
    /// The check could not run: the model errored or panicked.
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skipped => "skipped",
            Status::Error => "error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one check found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub check: CheckId,
    pub status: Status,
    /// One line a person reads.
    pub summary: String,
    /// The numbers behind the verdict. Non-finite values are written as the strings
    /// `"NaN"`, `"inf"` and `"-inf"` (JSON has no such numbers).
    #[serde(with = "finite_or_string")]
    pub metrics: BTreeMap<String, f64>,
    /// Further lines: per-parameter rows, the frames before a NaN, ...
    pub details: Vec<String>,
    /// The catalog entry that explains this finding (`mldebug show <entry>`).
    pub entry: String,
    /// The command to run next.
    pub next: String,
}

/// The result of `run_checks`: the `--json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub model: String,
    pub device: String,
    pub seed: u64,
    pub checks: Vec<Finding>,
}

impl Report {
    /// The worst status over all checks (`Pass` when there are none).
    pub fn worst(&self) -> Status {
        let rank = |s: Status| match s {
            Status::Pass => 0,
            Status::Skipped => 1,
            Status::Warn => 2,
            Status::Fail => 3,
            Status::Error => 4,
        };
        self.checks
            .iter()
            .map(|f| f.status)
            .max_by_key(|s| rank(*s))
            .unwrap_or(Status::Pass)
    }
}

mod finite_or_string {
    use serde::de::{self, Deserializer, MapAccess, Visitor};
    use serde::ser::{SerializeMap, Serializer};
    use std::collections::BTreeMap;
    use std::fmt;

    pub fn serialize<S: Serializer>(m: &BTreeMap<String, f64>, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(m.len()))?;
        for (k, v) in m {
            if v.is_finite() {
                map.serialize_entry(k, v)?;
            } else if v.is_nan() {
                map.serialize_entry(k, "NaN")?;
            } else if *v > 0.0 {
                map.serialize_entry(k, "inf")?;
            } else {
                map.serialize_entry(k, "-inf")?;
            }
        }
        map.end()
    }

    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Num {
        F(f64),
        S(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BTreeMap<String, f64>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of metric names to numbers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = a.next_entry::<String, Num>()? {
                    let v = match v {
                        Num::F(x) => x,
                        Num::S(s) => match s.as_str() {
                            "NaN" => f64::NAN,
                            "inf" => f64::INFINITY,
                            "-inf" => f64::NEG_INFINITY,
                            other => {
                                return Err(de::Error::custom(format!(
                                    "metric `{k}`: `{other}` is not a number"
                                )))
                            }
                        },
                    };
                    out.insert(k, v);
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}
