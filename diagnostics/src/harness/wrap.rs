//! What a harness generated for a model *without* its own `DebugModel` impl calls: the user's
//! constructor and forward may return any `Result` whose error prints (candle's, anyhow's), and
//! a constructor may take a config read from a JSON file.

use serde::de::DeserializeOwned;
use std::fmt::Display;
use std::path::Path;

/// The user's `Result` as candle's, keeping the error's text.
pub fn model_result<T, E: Display>(r: Result<T, E>) -> candle_core::Result<T> {
    r.map_err(|e| candle_core::Error::Msg(e.to_string()))
}

/// A config value for the user's constructor, from a JSON file (its type is whatever the
/// constructor takes, so it must implement `serde::Deserialize`).
pub fn config_from_json<T: DeserializeOwned>(path: &str) -> candle_core::Result<T> {
    let text = std::fs::read_to_string(Path::new(path))
        .map_err(|e| candle_core::Error::Msg(format!("--config {path}: cannot read it: {e}")))?;
    serde_json::from_str(&text).map_err(|e| {
        candle_core::Error::Msg(format!(
            "--config {path}: line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Cfg {
        dim: usize,
    }

    #[test]
    fn configs_read_and_errors_name_the_file_and_place() {
        let dir = std::env::temp_dir().join(format!("mldebug-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.json");
        std::fs::write(&good, r#"{"dim": 8}"#).unwrap();
        let cfg: Cfg = config_from_json(good.to_str().unwrap()).unwrap();
        assert_eq!(cfg, Cfg { dim: 8 });
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{\n  \"dim\": \"x\"}").unwrap();
        let e = config_from_json::<Cfg>(bad.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.json: line 2"), "{e}");
        let e = model_result::<(), _>(Err("boom")).unwrap_err().to_string();
        assert!(e.contains("boom"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
