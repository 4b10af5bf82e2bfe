//! Walking the file system without loops: glob patterns expanded ([`glob`]) and folders listed
//! ([`files_under`]) so that each real directory is entered once and each real file is named
//! once, however links point. A folder holding `ln -s . l1; ln -s . l2` has 2^40 paths before
//! the kernel's link limit stops a naive walk; here it has the paths of its own files.
//!
//! Directories and files are known by device and inode ([`FileId`]): a directory already
//! entered (through a link, or a bind mount) is not entered again, a file already found under
//! another name is not named again, and no walk goes deeper than [`MAX_DEPTH`] or lists more
//! than [`MAX_ENTRIES`] entries.

use crate::{Error, Result};
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The deepest a walk goes below where it starts: run folders are a few levels deep (W&B's
/// `wandb/run-…/files/`, MLflow's `mlruns/<exp>/<run>/metrics/`); 64 levels are none of these.
pub const MAX_DEPTH: usize = 64;

/// The most directory entries one walk lists: a few hundred thousand run files are a large
/// sweep; a pattern that lists more (`/**/*.json`) is refused instead of running for hours.
pub const MAX_ENTRIES: usize = 2_000_000;

/// A file or directory's identity: its device and inode (the path on other systems).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileId {
    /// Device and inode.
    Inode(u64, u64),
    /// Where inodes are not known: the canonical path.
    Path(PathBuf),
}

/// The identity of the file or directory `meta` describes, found at `path`.
pub fn file_id(path: &Path, meta: &fs::Metadata) -> FileId {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        FileId::Inode(meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        FileId::Path(fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
    }
}

/// Whether a pattern component holds a glob metacharacter.
pub fn is_pattern(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Counts the entries a walk lists, and refuses past [`MAX_ENTRIES`].
struct Budget {
    listed: usize,
    what: String,
}

impl Budget {
    fn list(&mut self, dir: &Path) -> Result<Vec<(String, PathBuf)>> {
        let cannot =
            |e: std::io::Error| Error::usage(format!("{}: cannot read: {e}", dir.display()));
        let mut out = Vec::new();
        for e in fs::read_dir(dir).map_err(cannot)? {
            let e = e.map_err(cannot)?;
            self.listed += 1;
            if self.listed > MAX_ENTRIES {
                return Err(Error::usage(format!(
                    "{}: more than {MAX_ENTRIES} entries to look through; name a narrower folder or pattern",
                    self.what
                )));
            }
            out.push((e.file_name().to_string_lossy().into_owned(), e.path()));
        }
        out.sort();
        Ok(out)
    }
}

/// The paths matching a glob pattern (`*`, `?`, `[…]` within a name, `**` for any number of
/// folders), sorted, each real file or directory once (the first of its names in order).
/// Links are followed, but never into a directory already entered for the same part of the
/// pattern, and never deeper than [`MAX_DEPTH`].
pub fn glob(pattern: &str) -> Result<Vec<PathBuf>> {
    glob::Pattern::new(pattern)
        .map_err(|e| Error::usage(format!("{pattern}: bad glob pattern: {e}")))?;
    let parts: Vec<&str> = pattern.split('/').collect();
    let compiled: Vec<Option<glob::Pattern>> = parts
        .iter()
        .map(|p| match *p {
            "**" => Ok(None),
            p if is_pattern(p) => glob::Pattern::new(p)
                .map(Some)
                .map_err(|e| Error::usage(format!("{pattern}: bad glob pattern: {e}"))),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let start = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    };
    let mut budget = Budget {
        listed: 0,
        what: pattern.to_string(),
    };
    let mut entered: HashSet<(FileId, usize)> = HashSet::new();
    let mut found: Vec<(PathBuf, FileId)> = Vec::new();
    let mut stack = vec![(start, 0usize, 0usize)];
    while let Some((at, i, depth)) = stack.pop() {
        if i == parts.len() {
            if let Ok(meta) = fs::metadata(&at) {
                found.push((clean(&at), file_id(&at, &meta)));
            }
            continue;
        }
        let part = parts[i];
        if part.is_empty() || part == "." || !is_pattern(part) && part != "**" {
            // A literal name (or an empty part of `a//b`, or the root's): no listing needed.
            let next = if part.is_empty() || part == "." {
                at
            } else {
                at.join(part)
            };
            stack.push((next, i + 1, depth));
            continue;
        }
        let dir = if at.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            at.clone()
        };
        let Ok(meta) = fs::metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() || depth >= MAX_DEPTH {
            continue;
        }
        let entries = if part == "**" {
            if !entered.insert((file_id(&dir, &meta), i)) {
                continue; // entered before for this part of the pattern: a link loop
            }
            let last = i + 1 == parts.len();
            let mut next = Vec::new();
            for (name, p) in budget.list(&dir)? {
                if fs::metadata(&p).is_ok_and(|m| m.is_dir()) {
                    next.push((at.join(&name), i, depth + 1));
                    if last {
                        // A trailing `**` names every folder below, not the one it starts in.
                        next.push((at.join(&name), i + 1, depth + 1));
                    }
                }
            }
            if !last {
                // `**` matches no folder (the rest of the pattern here), or one more.
                next.push((at.clone(), i + 1, depth));
            }
            next
        } else {
            let matcher = compiled[i].as_ref().expect("compiled above");
            budget
                .list(&dir)?
                .into_iter()
                .filter(|(name, _)| matcher.matches(name))
                .map(|(name, _)| (at.join(name), i + 1, depth + 1))
                .collect()
        };
        // Popped in sorted order.
        stack.extend(entries.into_iter().rev());
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut seen = HashSet::new();
    Ok(found
        .into_iter()
        .filter(|(_, id)| seen.insert(id.clone()))
        .map(|(p, _)| p)
        .collect())
}

/// The command-line paths with each glob pattern (a path that does not exist and holds a
/// metacharacter) replaced by its matches; a pattern matching nothing is an error.
pub fn expand_patterns(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        let s = p.to_string_lossy();
        if fs::symlink_metadata(p).is_ok() || !is_pattern(&s) {
            out.push(p.clone());
            continue;
        }
        let matches = glob(&s)?;
        if matches.is_empty() {
            return Err(Error::usage(format!("{s}: no file matches this pattern")));
        }
        out.extend(matches);
    }
    Ok(out)
}

/// `./a/b` → `a/b`: the path as a glob match names it.
fn clean(p: &Path) -> PathBuf {
    p.strip_prefix(".")
        .map_or_else(|_| p.to_path_buf(), Path::to_path_buf)
}

/// Every regular file under `root` (itself, when it is a file), sorted: links to files are
/// followed, links to directories are not (a run reached twice would count twice), and each
/// real file is named once. For watching a folder for changes.
pub fn files_under(root: &Path) -> Result<Vec<PathBuf>> {
    let mut budget = Budget {
        listed: 0,
        what: root.display().to_string(),
    };
    let mut entered = HashSet::new();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((p, depth)) = stack.pop() {
        let Ok(meta) = fs::metadata(&p) else {
            continue; // a dangling link, or a file removed since it was listed
        };
        let id = file_id(&p, &meta);
        if meta.is_file() {
            if seen.insert(id) {
                out.push(p);
            }
            continue;
        }
        if !meta.is_dir() || depth >= MAX_DEPTH || !entered.insert(id) {
            continue;
        }
        for (_, child) in budget.list(&p)?.into_iter().rev() {
            let is_dir_link = fs::symlink_metadata(&child)
                .is_ok_and(|m| m.file_type().is_symlink())
                && fs::metadata(&child).is_ok_and(|m| m.is_dir());
            if !is_dir_link {
                stack.push((child, depth + 1));
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn self_links(dir: &Path) {
        std::os::unix::fs::symlink(".", dir.join("l1")).unwrap();
        std::os::unix::fs::symlink(".", dir.join("l2")).unwrap();
    }

    #[test]
    #[cfg(unix)]
    fn self_links_are_not_walked_again() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        fs::create_dir_all(d.join("a/b")).unwrap();
        fs::write(d.join("top.jsonl"), "{}\n").unwrap();
        fs::write(d.join("a/b/deep.jsonl"), "{}\n").unwrap();
        self_links(d);
        self_links(&d.join("a/b"));
        let pattern = format!("{}/**/*.jsonl", d.display());
        let got = glob(&pattern).unwrap();
        assert_eq!(got, vec![d.join("a/b/deep.jsonl"), d.join("top.jsonl")]);
        let all = files_under(d).unwrap();
        assert_eq!(all, vec![d.join("a/b/deep.jsonl"), d.join("top.jsonl")]);
    }

    #[test]
    #[cfg(unix)]
    fn a_file_linked_under_two_names_is_found_once() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        fs::write(d.join("a.json"), "{}").unwrap();
        std::os::unix::fs::symlink(d.join("a.json"), d.join("b.json")).unwrap();
        let got = glob(&format!("{}/*.json", d.display())).unwrap();
        assert_eq!(got, vec![d.join("a.json")]);
        assert_eq!(files_under(d).unwrap(), vec![d.join("a.json")]);
    }

    #[test]
    fn patterns_match_as_the_glob_crate_does() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        for f in [
            "r1/x.json",
            "r2/x.json",
            "r2/sub/y.json",
            "z.csv",
            ".hidden/w.json",
        ] {
            let p = d.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "{}").unwrap();
        }
        for pattern in [
            "*/x.json",
            "**/*.json",
            "r[12]/*.json",
            "r?/**/*.json",
            "**",
            "*",
        ] {
            let full = format!("{}/{pattern}", d.display());
            let ours = glob(&full).unwrap();
            let mut theirs: Vec<PathBuf> =
                ::glob::glob(&full).unwrap().map(|p| p.unwrap()).collect();
            theirs.sort();
            assert_eq!(ours, theirs, "{pattern}");
        }
        assert!(glob(&format!("{}/[", d.display())).is_err());
    }

    #[test]
    fn depth_is_bounded() {
        let t = tempfile::tempdir().unwrap();
        let mut p = t.path().to_path_buf();
        for _ in 0..MAX_DEPTH + 5 {
            p = p.join("d");
        }
        fs::create_dir_all(&p).unwrap();
        fs::write(p.join("deep.json"), "{}").unwrap();
        let got = glob(&format!("{}/**/*.json", t.path().display())).unwrap();
        assert!(got.is_empty());
        assert!(files_under(t.path()).unwrap().is_empty());
    }
}
