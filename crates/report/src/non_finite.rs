//! Numbers that may be NaN or infinite, in JSON.
//!
//! JSON has no NaN or infinity, and serde_json writes both as `null`, which then fails to read
//! back as an `f64`. Every `f64` of the report (metrics, series points) and of the harness's
//! progress lines goes through this module instead:
//!
//! - a finite number is a JSON number, as before;
//! - NaN is the string `"NaN"`, +∞ is `"inf"` and −∞ is `"-inf"`.
//!
//! Readers also accept `null` as NaN: schema 1 wrote every non-finite value that way, so a
//! report from an older harness still reads (with the sign of an infinity lost). Any other
//! string is an error that names it.

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The text written for NaN.
pub const NAN: &str = "NaN";
/// The text written for +∞.
pub const INF: &str = "inf";
/// The text written for −∞.
pub const NEG_INF: &str = "-inf";

/// One `f64` as the report writes it: a number when finite, else one of the three strings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number(pub f64);

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        if x.is_finite() {
            s.serialize_f64(x)
        } else if x.is_nan() {
            s.serialize_str(NAN)
        } else if x > 0.0 {
            s.serialize_str(INF)
        } else {
            s.serialize_str(NEG_INF)
        }
    }
}

/// What may stand for a number in the JSON: a number, one of the strings, or `null` (schema 1).
#[derive(Deserialize)]
#[serde(untagged)]
enum Raw {
    Number(f64),
    Text(String),
    Null(()),
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Number(x) => Ok(Number(x)),
            Raw::Null(()) => Ok(Number(f64::NAN)),
            Raw::Text(t) => parse(&t).map(Number).ok_or_else(|| {
                de::Error::custom(format!(
                    "`{}` is not a number (expected a number, \"{NAN}\", \"{INF}\" or \"{NEG_INF}\")",
                    t.escape_debug()
                ))
            }),
        }
    }
}

/// `"NaN"`, `"inf"`, `"-inf"` → the value; anything else → `None`.
pub fn parse(text: &str) -> Option<f64> {
    match text {
        NAN => Some(f64::NAN),
        INF => Some(f64::INFINITY),
        NEG_INF => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// `#[serde(with = "non_finite::number")]` for one `f64`.
pub mod number {
    use super::*;

    /// Writes the value as this module says (`#[serde(with = ...)]`).
    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        Number(*x).serialize(s)
    }

    /// Reads the value back: numbers, the three strings, and `null` as NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Number::deserialize(d).map(|n| n.0)
    }
}

/// `#[serde(with = "non_finite::option")]` for an `Option<f64>`: `None` is `null`, so `null`
/// reads back as `None` here (not as NaN).
pub mod option {
    use super::*;

    /// Writes the value as this module says (`#[serde(with = ...)]`).
    pub fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match x {
            Some(v) => Number(*v).serialize(s),
            None => s.serialize_none(),
        }
    }

    /// Reads the value back: numbers and the three strings; `null` is `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum NumOrText {
            Number(f64),
            Text(String),
        }
        match Option::<NumOrText>::deserialize(d)? {
            None => Ok(None),
            Some(NumOrText::Number(x)) => Ok(Some(x)),
            Some(NumOrText::Text(t)) => parse(&t).map(Some).ok_or_else(|| {
                de::Error::custom(format!("`{}` is not a number", t.escape_debug()))
            }),
        }
    }
}

/// `#[serde(with = "non_finite::map")]` for a `BTreeMap<String, f64>` (the metrics).
pub mod map {
    use super::*;

    /// Writes the value as this module says (`#[serde(with = ...)]`).
    pub fn serialize<S: Serializer>(m: &BTreeMap<String, f64>, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(m.len()))?;
        for (k, v) in m {
            map.serialize_entry(k, &Number(*v))?;
        }
        map.end()
    }

    /// Reads the value back: numbers, the three strings, and `null` as NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
        let raw = BTreeMap::<String, Number>::deserialize(d)?;
        Ok(raw.into_iter().map(|(k, v)| (k, v.0)).collect())
    }
}

/// `#[serde(with = "non_finite::points")]` for a `Vec<[f64; 2]>` (a series' points).
pub mod points {
    use super::*;

    /// Writes the value as this module says (`#[serde(with = ...)]`).
    pub fn serialize<S: Serializer>(points: &[[f64; 2]], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(points.len()))?;
        for [x, y] in points {
            seq.serialize_element(&[Number(*x), Number(*y)])?;
        }
        seq.end()
    }

    /// Reads the value back: numbers, the three strings, and `null` as NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<[f64; 2]>, D::Error> {
        let raw = Vec::<[Number; 2]>::deserialize(d)?;
        Ok(raw.into_iter().map(|[x, y]| [x.0, y.0]).collect())
    }
}

/// `#[serde(with = "non_finite::list")]` for a `Vec<f64>` (a loss curve).
pub mod list {
    use super::*;

    /// Writes the value as this module says (`#[serde(with = ...)]`).
    pub fn serialize<S: Serializer>(xs: &[f64], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(xs.len()))?;
        for x in xs {
            seq.serialize_element(&Number(*x))?;
        }
        seq.end()
    }

    /// Reads the value back: numbers, the three strings, and `null` as NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        let raw = Vec::<Number>::deserialize(d)?;
        Ok(raw.into_iter().map(|x| x.0).collect())
    }
}

/// `#[serde(with = "non_finite::named")]` for a `Vec<(String, f64)>`, written as
/// `[["name", 1.5], ...]`.
pub mod named {
    use super::*;

    /// Writes the value as this module says (`#[serde(with = ...)]`).
    pub fn serialize<S: Serializer>(xs: &[(String, f64)], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(xs.len()))?;
        for (name, x) in xs {
            seq.serialize_element(&(name, Number(*x)))?;
        }
        seq.end()
    }

    /// Reads the value back: numbers, the three strings, and `null` as NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, f64)>, D::Error> {
        let raw = Vec::<(String, Number)>::deserialize(d)?;
        Ok(raw.into_iter().map(|(n, x)| (n, x.0)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Doc {
        #[serde(with = "super::number")]
        one: f64,
        #[serde(with = "super::option")]
        maybe: Option<f64>,
        #[serde(with = "super::map")]
        metrics: BTreeMap<String, f64>,
        #[serde(with = "super::points")]
        points: Vec<[f64; 2]>,
    }

    /// Equal, with NaN equal to NaN.
    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn every_kind_of_value_round_trips() {
        let values = [
            0.0,
            -0.0,
            1.5,
            -2.5e-3,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for v in values {
            let doc = Doc {
                one: v,
                maybe: Some(v),
                metrics: [("m".to_string(), v)].into_iter().collect(),
                points: vec![[v, v]],
            };
            let text = serde_json::to_string(&doc).unwrap();
            let back: Doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            assert!(same(back.one, v), "{v} -> {text} -> {}", back.one);
            assert!(same(back.maybe.unwrap(), v), "{text}");
            assert!(same(back.metrics["m"], v), "{text}");
            assert!(
                same(back.points[0][0], v) && same(back.points[0][1], v),
                "{text}"
            );
        }
    }

    #[test]
    fn finite_numbers_stay_numbers_and_the_others_are_named() {
        let doc = Doc {
            one: f64::NAN,
            maybe: Some(f64::NEG_INFINITY),
            metrics: [("a".to_string(), 2.5), ("b".to_string(), f64::INFINITY)]
                .into_iter()
                .collect(),
            points: vec![[0.0, 1.0], [1.0, f64::NAN]],
        };
        let v: serde_json::Value = serde_json::to_value(&doc).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "one": "NaN", "maybe": "-inf",
                "metrics": {"a": 2.5, "b": "inf"},
                "points": [[0.0, 1.0], [1.0, "NaN"]]
            })
        );
        let none = Doc {
            maybe: None,
            ..serde_json::from_value(v).unwrap()
        };
        let text = serde_json::to_string(&none).unwrap();
        assert!(text.contains("\"maybe\":null"), "{text}");
        assert_eq!(
            serde_json::from_str::<Doc>(&text).unwrap().maybe,
            None,
            "null is None for an optional number"
        );
    }

    #[test]
    fn schema_1_nulls_read_as_nan_and_other_strings_are_errors() {
        let old = r#"{"one": null, "maybe": 1.0, "metrics": {"a": null}, "points": [[0, null]]}"#;
        let doc: Doc = serde_json::from_str(old).unwrap();
        assert!(doc.one.is_nan() && doc.metrics["a"].is_nan() && doc.points[0][1].is_nan());
        let bad = r#"{"one": "Infinity", "maybe": null, "metrics": {}, "points": []}"#;
        let e = serde_json::from_str::<Doc>(bad).unwrap_err().to_string();
        assert!(e.contains("`Infinity` is not a number"), "{e}");
    }
}
