//! The harness folder under the user's target dir: its lock, and the files a run writes there.
//!
//! One folder per user manifest, shared by every run on that crate, so a run takes the folder's
//! lock before it writes anything there and holds it until it has read its report back: two
//! runs at once take turns instead of building and running each other's harness. Each run's
//! report file is its own besides ([`report_path`]).

use crate::render::output::note;
use crate::{Error, Result};
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

/// The lock file inside the harness folder.
const LOCK_FILE: &str = ".lock";

/// Take `dir`'s lock (creating `dir`), waiting for a run that holds it; the lock lasts as long
/// as the returned file. `what` names the crate in the note printed while waiting.
pub fn lock(dir: &Path, what: &str) -> Result<File> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::io(
            format_args!("{}: cannot create the harness folder", dir.display()),
            &e,
        )
    })?;
    let path = dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(path.display(), &e))?;
    let cannot = |e: std::io::Error| Error::io(format_args!("{}: cannot lock", path.display()), &e);
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(TryLockError::Error(e)) => return Err(cannot(e)),
        Err(TryLockError::WouldBlock) => {}
    }
    note(&format!(
        "waiting for another mldebug run on `{what}` to finish (it holds {})",
        path.display()
    ));
    file.lock().map_err(cannot)?;
    Ok(file)
}

/// A file of this run's own for the harness to write its report to: two runs never share one,
/// even when one outlives its lock (a harness whose CLI was killed finishes its step).
pub fn report_path(dir: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    dir.join(format!("report-{}-{nanos:09}.json", std::process::id()))
}

/// Write `contents` to `path` (atomically) unless it already holds exactly that: keeps the
/// mtime, so cargo sees nothing new. Returns whether it wrote.
pub fn write_if_changed(path: &Path, contents: &str) -> std::io::Result<bool> {
    if std::fs::read(path).ok().as_deref() == Some(contents.as_bytes()) {
        return Ok(false);
    }
    crate::atomic_file::write(path, contents.as_bytes())?;
    Ok(true)
}

/// Copy the workspace's `Cargo.lock`, so the harness resolves exactly the versions the user
/// builds with. Cargo adds the harness itself to the copy, so the copy is refreshed only when
/// the user's lockfile changed since the last run (tracked in `user.Cargo.lock`).
pub fn copy_lockfile(workspace_root: &Path, dir: &Path) -> std::io::Result<()> {
    let Ok(lock) = std::fs::read(workspace_root.join("Cargo.lock")) else {
        return Ok(());
    };
    let seen = dir.join("user.Cargo.lock");
    if std::fs::read(&seen).ok().as_deref() != Some(lock.as_slice())
        || !dir.join("Cargo.lock").exists()
    {
        crate::atomic_file::write(&dir.join("Cargo.lock"), &lock)?;
        crate::atomic_file::write(&seen, &lock)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_files_are_not_rewritten() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f");
        assert!(write_if_changed(&p, "a").unwrap());
        assert!(!write_if_changed(&p, "a").unwrap());
        assert!(write_if_changed(&p, "b").unwrap());
    }

    #[test]
    fn the_lock_is_exclusive_until_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("harness");
        let held = lock(&dir, "x").unwrap();
        let other = File::options()
            .write(true)
            .open(dir.join(LOCK_FILE))
            .unwrap();
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        drop(held);
        assert!(other.try_lock().is_ok());
    }

    #[test]
    fn every_run_gets_its_own_report_file() {
        let dir = Path::new("/h");
        let a = report_path(dir);
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert_ne!(a, report_path(dir));
        assert!(a.starts_with(dir));
    }
}
