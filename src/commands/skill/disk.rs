//! The skill folder on disk, touched only where it is safe: paths of the skill's own layout
//! (`SKILL.md`, `PLAYBOOK.md`, `refs/<name>.md`, `evidence/<name>.yaml`, `torch/<name>.py`, the
//! manifest), looked at
//! without following a symbolic link, read only when they are regular files, and written through a
//! temporary file beside them that never outlives the install.

use crate::catalog::limits::MAX_FILE_BYTES;
use crate::{Error, Result};
use std::fs::OpenOptions;
use std::io::{ErrorKind, Read, Write};
use std::path::{Component, Path, PathBuf};

/// What is at a path of the skill folder.
#[derive(Debug)]
pub enum OnDisk {
    Missing,
    /// A regular file of at most `MAX_FILE_BYTES`, and its bytes.
    File(Vec<u8>),
    /// Something mldebug will not read: a symbolic link, a folder, a device, a pipe, a huge file.
    Other(&'static str),
}

/// Why `rel` cannot name a file of the skill's layout; `None` when it can. The layout is
/// `SKILL.md`, `PLAYBOOK.md`, `refs/<name>.md`, `evidence/<name>.yaml`, `torch/<name>.py` (the
/// files the skill tells an agent to copy) and the manifest, each name plain (no `..`, no root,
/// no drive, no empty or control characters).
pub fn layout_error(rel: &str, manifest: &str) -> Option<&'static str> {
    if rel.is_empty() {
        return Some("is empty");
    }
    if rel.contains(|c: char| c.is_control() || c == '\\') {
        return Some("holds a control character or a backslash");
    }
    let path = Path::new(rel);
    if path.has_root() || rel.starts_with('/') {
        return Some("is an absolute path");
    }
    let mut names = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => names.push(n.to_str().unwrap_or_default()),
            Component::ParentDir => return Some("climbs out of the skill folder with `..`"),
            _ => return Some("is not a plain relative path"),
        }
    }
    if rel.split('/').any(|part| part.is_empty() || part == ".") {
        return Some("is not a plain relative path");
    }
    let ok = match names.as_slice() {
        [top] => [
            crate::catalog::SKILL_FILE,
            crate::catalog::PLAYBOOK_FILE,
            manifest,
        ]
        .contains(top),
        [folder, name] if *folder == "torch" => name.ends_with(".py"),
        [folder, name] => crate::catalog::FOLDERS
            .iter()
            .any(|(f, ext)| f == folder && name.ends_with(&format!(".{ext}"))),
        _ => false,
    };
    (!ok).then_some(
        "is not a file of the skill (SKILL.md, PLAYBOOK.md, refs/*.md, refs/*.tsv, evidence/*.yaml, torch/*.py)",
    )
}

/// What is at `dir/rel`, found without following a symbolic link anywhere below `dir`. `Err`
/// when a folder on the way is a symbolic link or not a folder: nothing there may be touched.
pub fn inspect(dir: &Path, rel: &str) -> Result<OnDisk> {
    let mut path = dir.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(OnDisk::Missing),
            Err(e) => return Err(Error::input(&path, "inspecting", e)),
        };
        let last = i + 1 == parts.len();
        let kind = meta.file_type();
        if !last {
            if kind.is_symlink() || !kind.is_dir() {
                let what = if kind.is_symlink() {
                    "a symbolic link"
                } else {
                    "not a folder"
                };
                return Err(Error::usage(format!(
                    "{}: is {what}; mldebug writes only real folders and files inside the skill folder, so nothing was written",
                    path.display()
                )));
            }
            continue;
        }
        return Ok(if kind.is_symlink() {
            OnDisk::Other("a symbolic link")
        } else if kind.is_dir() {
            OnDisk::Other("a folder")
        } else if !kind.is_file() {
            OnDisk::Other("not a regular file")
        } else if meta.len() > MAX_FILE_BYTES {
            OnDisk::Other("a file larger than 16 MiB")
        } else {
            let mut bytes = Vec::new();
            std::fs::File::open(&path)
                .and_then(|f| f.take(MAX_FILE_BYTES).read_to_end(&mut bytes))
                .map_err(|e| Error::input(&path, "reading", e))?;
            OnDisk::File(bytes)
        });
    }
    Ok(OnDisk::Missing)
}

/// The temporary name beside `path` that [`write_atomic`] writes first: `.NAME.tmp-PID`.
fn temp_name(file_name: &str) -> String {
    format!(".{file_name}.tmp-{}", std::process::id())
}

/// Whether `name`, in the skill folder's subfolder `sub` (`""` for the top), is a temporary file
/// of an install (this one or an interrupted one): `.NAME.tmp-PID` where `sub/NAME` is a file of
/// the skill's layout (see [`layout_error`]) and PID is digits.
pub fn is_temp_name(sub: &str, name: &str, manifest: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    let Some((stem, pid)) = rest.rsplit_once(".tmp-") else {
        return false;
    };
    let rel = if sub.is_empty() {
        stem.to_string()
    } else {
        format!("{sub}/{stem}")
    };
    !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && layout_error(&rel, manifest).is_none()
}

/// Remove the temporary files an interrupted install left in the subfolder `sub` of the skill
/// folder `dir` (when it is a real folder): only entries named like [`is_temp_name`] that are
/// files or symbolic links (a link is removed, never followed). Returns the names removed.
pub fn remove_stale_temps(dir: &Path, sub: &str, manifest: &str) -> Result<Vec<String>> {
    let folder = &dir.join(sub);
    let Ok(meta) = std::fs::symlink_metadata(folder) else {
        return Ok(Vec::new());
    };
    if !meta.is_dir() {
        return Ok(Vec::new());
    }
    let mut removed = Vec::new();
    let entries = std::fs::read_dir(folder).map_err(|e| Error::input(folder, "listing", e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::input(folder, "listing", e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if is_temp_name(sub, &name, manifest) && (kind.is_file() || kind.is_symlink()) {
            std::fs::remove_file(entry.path())
                .map_err(|e| Error::input(&entry.path(), "removing a stale temporary file", e))?;
            removed.push(name);
        }
    }
    Ok(removed)
}

/// Write `bytes` to a new temporary file beside `path`, then rename it into place (the rename
/// replaces a symbolic link at `path` itself, never what it points to). On any failure the
/// temporary file is removed and `path` is as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::input(parent, "creating", e))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(temp_name(&file_name));
    let result = write_new(&tmp, bytes)
        .map_err(|e| Error::input(&tmp, "writing", e))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| Error::input(path, "writing", e)));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Create `tmp` (it must not exist: `create_new` never follows a planted link) and fill it.
fn write_new(tmp: &PathBuf, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).open(tmp)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &str = ".mldebug-skill.json";

    #[test]
    fn only_the_layout_is_accepted() {
        for ok in [
            "SKILL.md",
            "PLAYBOOK.md",
            "refs/a.md",
            "evidence/b.yaml",
            "torch/mldebug_model.py",
            M,
        ] {
            assert_eq!(layout_error(ok, M), None, "{ok}");
        }
        for bad in [
            "",
            "../x",
            "../../x",
            "/abs/path",
            "/dev/zero",
            "refs/../../x",
            "refs//a.md",
            "./SKILL.md",
            "refs/a.md/",
            "refs/sub/a.md",
            "notes.md",
            "refs/a.txt",
            "C:\\x",
            "refs/\u{1b}.md",
            "evidence",
            "refs/.",
            "torch/driver.md",
            "torch/sub/a.py",
            "torch",
        ] {
            assert!(layout_error(bad, M).is_some(), "{bad:?} accepted");
        }
    }

    #[test]
    fn temp_names_match_exactly() {
        assert!(is_temp_name("", ".SKILL.md.tmp-123", M));
        assert!(is_temp_name("", &temp_name("PLAYBOOK.md"), M));
        assert!(is_temp_name("", &temp_name(M), M));
        assert!(is_temp_name("refs", ".a.md.tmp-9", M));
        assert!(is_temp_name("evidence", ".b.yaml.tmp-9", M));
        assert!(is_temp_name("torch", ".mldebug_model.py.tmp-9", M));
        for (sub, not) in [
            ("", "SKILL.md.tmp-1"),
            ("", ".SKILL.md.tmp-"),
            ("", ".SKILL.md.tmp-1a"),
            ("", "..tmp-1"),
            ("", ".x.tmp"),
            ("", ".notes.txt.tmp-1"),
            ("refs", ".a.yaml.tmp-1"),
            ("refs", ".SKILL.md.tmp-1.bak"),
        ] {
            assert!(!is_temp_name(sub, not, M), "{sub}/{not}");
        }
    }

    #[test]
    fn a_failed_rename_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        // A non-empty folder where the file should go: the rename fails.
        std::fs::create_dir_all(tmp.path().join("SKILL.md/inside")).unwrap();
        assert!(write_atomic(&tmp.path().join("SKILL.md"), b"x").is_err());
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
}
