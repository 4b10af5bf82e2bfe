//! Which cargo profile builds the harness: `--debug` / `--release` when given, else the one the
//! user's crate was last built with, so the first check reuses that build (candle and every other
//! dependency already compiled in the user's target dir) instead of compiling them again.
//!
//! Not for: building (`compile`).

use super::locate::UserCrate;
use std::path::Path;
use std::time::SystemTime;

/// Whether to build with the release profile.
pub fn release(debug: bool, release: bool, user: &UserCrate) -> bool {
    if debug || release {
        return release;
    }
    let built = |profile: &str| last_build(&user.target_dir.join(profile), &user.name);
    match (built("debug"), built("release")) {
        (Some(dev), Some(rel)) => rel > dev,
        (Some(_), None) => false,
        // Nothing built yet, or only release: release (candle is very slow unoptimised).
        _ => true,
    }
}

/// When the package `name` was last built into `profile_dir`: the newest of its fingerprint
/// folders (`.fingerprint/<name>-<hash>`), which cargo touches on every build of it.
fn last_build(profile_dir: &Path, name: &str) -> Option<SystemTime> {
    let prefix = format!("{name}-");
    std::fs::read_dir(profile_dir.join(".fingerprint"))
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix(&prefix))
                .is_some_and(|hash| hash.chars().all(|c| c.is_ascii_hexdigit()))
        })
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(target: &Path) -> UserCrate {
        UserCrate {
            name: "tinylm".into(),
            lib: "tinylm".into(),
            manifest_path: target.join("Cargo.toml"),
            workspace_root: target.to_path_buf(),
            target_dir: target.to_path_buf(),
            edition: "2021".into(),
            features: Vec::new(),
            diagnostics_key: "mldebug-diagnostics".into(),
            diagnostics_optional: false,
            has_diagnostics: false,
        }
    }

    #[test]
    fn the_last_built_profile_wins_and_flags_override_it() {
        let dir = tempfile::tempdir().unwrap();
        let u = user(dir.path());
        assert!(release(false, false, &u), "nothing built: release");
        let dev = dir.path().join("debug/.fingerprint/tinylm-0123abcd");
        std::fs::create_dir_all(&dev).unwrap();
        // Another package whose name starts the same is not this one.
        std::fs::create_dir_all(dir.path().join("release/.fingerprint/tinylm-extra-99")).unwrap();
        assert!(!release(false, false, &u), "a dev build is reused");
        assert!(release(false, true, &u));
        assert!(!release(true, false, &u));
    }
}
