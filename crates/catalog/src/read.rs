//! Reading a catalog folder (`--catalog DIR`): SKILL.md, PLAYBOOK.md, refs/*.md, evidence/*.yaml.
//!
//! Every file read must be a regular file (a symlink is followed to one; a device, a pipe or a
//! folder is refused, so nothing can block or stream forever) of at most
//! [`MAX_FILE_BYTES`](super::limits::MAX_FILE_BYTES), holding UTF-8 text. A folder that exists
//! but cannot be listed, an entry that cannot be read, or a name that is not plain text is an
//! error naming it (exit 2); a file that is missing is left to `catalog verify`, which says
//! which required file it is.

use super::limits::{shown, MAX_FILE_BYTES};
use super::model::Problem;
use super::{parse_files, Catalog, PLAYBOOK_FILE, SKILL_FILE};
use crate::{Error, Result};
use std::io::{ErrorKind, Read};
use std::path::Path;

/// Read and parse the catalog files under `dir` (the same layout as the repository root).
pub fn from_dir(dir: &Path) -> Result<Catalog> {
    if !dir.is_dir() {
        return Err(Error::input(
            dir,
            "--catalog",
            "not a directory (expected a folder holding SKILL.md, PLAYBOOK.md, refs/ and evidence/)",
        ));
    }
    let mut files = Vec::new();
    for name in [SKILL_FILE, PLAYBOOK_FILE] {
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            _ => files.push((name.to_string(), read(&path)?)),
        }
    }
    for (sub, ext) in crate::FOLDERS {
        for n in list(&dir.join(sub), ext)? {
            let rel = format!("{sub}/{n}");
            files.push((rel.clone(), read(&dir.join(&rel))?));
        }
    }
    let mut catalog = parse_files(files);
    check_folder_name(dir, &mut catalog);
    Ok(catalog)
}

/// An installed skill lives in `.../skills/<name>/`: the folder must carry the skill's name.
fn check_folder_name(dir: &Path, catalog: &mut Catalog) {
    let (Some(fm), Ok(abs)) = (&catalog.front_matter, dir.canonicalize()) else {
        return;
    };
    let name_of = |p: Option<&Path>| {
        p.and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    };
    let folder = name_of(Some(&abs)).unwrap_or_default();
    if name_of(abs.parent()).as_deref() == Some("skills") && folder != fm.name {
        catalog.problems.push(Problem {
            location: fm.location.clone(),
            message: format!(
                "front matter `name: {}` must equal the skill's folder name `{}`",
                shown(&fm.name),
                shown(&folder)
            ),
        });
    }
}

/// The names of the `*.ext` entries of `folder`, sorted; none when the folder does not exist.
fn list(folder: &Path, ext: &str) -> Result<Vec<String>> {
    let read_dir = match std::fs::read_dir(folder) {
        Ok(r) => r,
        Err(e) if e.kind() == ErrorKind::NotFound && !folder.is_symlink() => return Ok(Vec::new()),
        Err(_) if folder.exists() && !folder.is_dir() => {
            return Err(Error::input(
                folder,
                "listing",
                format!("not a folder (the catalog keeps its *.{ext} files in it)"),
            ))
        }
        Err(e) => return Err(Error::input(folder, "listing", e)),
    };
    let mut names = Vec::new();
    for entry in read_dir {
        let entry = entry.map_err(|e| Error::input(folder, "listing", e))?;
        let path = entry.path();
        if path.extension().is_none_or(|e| e != ext) {
            continue;
        }
        let name = entry.file_name();
        match name.to_str() {
            Some(n) if !n.contains(char::is_control) => names.push(n.to_string()),
            _ => {
                return Err(Error::input(
                    folder,
                    shown(&name.to_string_lossy()),
                    "a catalog file name must be UTF-8 text without control characters",
                ))
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The text of one catalog file: a regular file, at most [`MAX_FILE_BYTES`], valid UTF-8.
fn read(path: &Path) -> Result<String> {
    let meta = std::fs::metadata(path).map_err(|e| Error::input(path, "reading", e))?;
    if !meta.is_file() {
        return Err(Error::input(
            path,
            "reading",
            "not a regular file (a catalog file is Markdown or YAML text)",
        ));
    }
    let too_big = || {
        Error::input(
            path,
            "reading",
            format!(
                "larger than {MAX_FILE_BYTES} bytes; a catalog file is text of a few kilobytes"
            ),
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| Error::input(path, "reading", e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1;
        Error::input(
            path,
            format!("line {line}, byte {at}"),
            "not valid UTF-8 (catalog files are UTF-8 text)",
        )
    })
}
