//! Writing a whole file or nothing: the bytes go to a temporary file beside the destination,
//! are flushed to disk, and the temporary is renamed over the destination. A full disk, a
//! crash or a kill leaves the old file (or no file), never a truncated one; on any error the
//! temporary is removed.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name used for `path`: hidden, beside it, marked with this process's id so
/// concurrent writers never share one.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Write `bytes` to `path` atomically (see the module docs).
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_whole_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("plot.svg");
        std::fs::write(&p, "old").unwrap();
        write(&p, b"new contents").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new contents");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_removes_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("plot.svg");
        std::fs::write(&p, "old").unwrap();
        // The rename cannot replace a non-empty directory: the write fails after the
        // temporary was made.
        let target = dir.path().join("dir.svg");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), "").unwrap();
        assert!(write(&target, b"new").is_err());
        assert!(!temp_path(&target).exists());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
    }
}
