//! `mldebug skill install`: write the agent skill (SKILL.md, PLAYBOOK.md, refs/, evidence/, and
//! the files the skill tells an agent to copy: [`PROTOCOL_FILES`]) where coding agents look for
//! skills: `.claude/skills/<name>/` (default), `.agents/skills/<name>/` (`--agents`), under
//! `$HOME` with `--global`, or into `--dir D`.
//!
//! A manifest (`.mldebug-skill.json`) records a hash of every file written, so a copy the user
//! edited is recognised and never overwritten without `--force`; an unmodified older copy is
//! simply updated. Each file is written to a temporary name and renamed into place, and the
//! manifest last, so an interrupted install leaves no half-written file.

mod disk;

use crate::catalog::completeness::REQUIRED_FILES;
use crate::catalog::limits::shown;
use crate::catalog::{self, front_matter};
use crate::context::Context;
use crate::render::json;
use crate::render::output::{emit, emit_json};
use crate::{Error, Exit, Result};
use disk::OnDisk;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The manifest's file name inside the installed skill folder.
pub const MANIFEST: &str = ".mldebug-skill.json";

/// Files the skill names that are not catalog Markdown: the PyTorch protocol an agent copies to
/// run `mldebug check --torch` (SKILL.md and refs/torch.md point to it). They come from this
/// binary, so they always match the driver it embeds, whichever catalog is installed.
pub const PROTOCOL_FILES: &[(&str, &str)] = &[(
    "torch/mldebug_model.py",
    include_str!("../../torch/mldebug_model.py"),
)];

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Install (or update) the skill files.
    Install(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Write the skill into this folder instead.
    #[arg(long, value_name = "D")]
    pub dir: Option<PathBuf>,
    /// Install under $HOME instead of the current directory.
    #[arg(long, conflicts_with = "dir")]
    pub global: bool,
    /// Use `.agents/skills/` (the cross-client location) instead of `.claude/skills/`.
    #[arg(long, conflicts_with = "dir")]
    pub agents: bool,
    /// Overwrite files that were changed since they were installed.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    version: String,
    /// Relative path → FNV-1a 64 hash (hex) of the content written.
    files: BTreeMap<String, String>,
}

#[derive(Debug, Serialize)]
struct Output {
    name: String,
    dir: String,
    written: Vec<String>,
    unchanged: Vec<String>,
    removed: Vec<String>,
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    match args.action {
        Action::Install(a) => install(a, g),
    }
}

fn install(args: InstallArgs, g: &Context) -> Result<Exit> {
    let c = catalog::open(g)?;
    let fm = c.front_matter.as_ref().ok_or_else(|| {
        Error::usage(
            "SKILL.md has no valid front matter (name, description); run `mldebug catalog verify`",
        )
    })?;
    front_matter::check_name(&fm.name)
        .map_err(|why| Error::usage(format!("SKILL.md `name: {}` {why}", fm.name)))?;
    let dir = target_dir(&args, &fm.name)?;
    let files: Vec<(&str, &str)> = c
        .files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .filter(|(p, _)| !PROTOCOL_FILES.iter().any(|(q, _)| q == p))
        .chain(PROTOCOL_FILES.iter().copied())
        .collect();
    let out = write_skill(&dir, &fm.name, &files, args.force)?;
    if g.json() {
        emit_json(&json::to_string("skill", &out)?)?;
    } else if out.written.is_empty() && out.removed.is_empty() {
        emit(
            &format!(
                "the {} skill in {} is up to date ({} files)\n",
                out.name,
                out.dir,
                out.unchanged.len()
            ),
            false,
        )?;
    } else {
        emit(
            &format!(
                "installed the {} skill in {}: {} written, {} unchanged, {} removed\n",
                out.name,
                out.dir,
                out.written.len(),
                out.unchanged.len(),
                out.removed.len()
            ),
            false,
        )?;
    }
    Ok(Exit::Ok)
}

fn target_dir(args: &InstallArgs, name: &str) -> Result<PathBuf> {
    if let Some(d) = &args.dir {
        return Ok(d.clone());
    }
    let base = if args.global {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .ok_or_else(|| Error::usage("--global needs $HOME to be set"))?
    } else {
        PathBuf::from(".")
    };
    let client = if args.agents { ".agents" } else { ".claude" };
    Ok(base.join(client).join("skills").join(name))
}

/// Install `files` (relative path, text) into `dir`, refusing to overwrite user edits unless
/// `force`. Only paths of the skill's layout are ever looked at (see `disk`): the files of this
/// catalog, and the files an earlier install recorded in its manifest.
fn write_skill(dir: &Path, name: &str, files: &[(&str, &str)], force: bool) -> Result<Output> {
    if let Ok(meta) = std::fs::metadata(dir) {
        if !meta.is_dir() {
            return Err(Error::input(dir, "installing", "not a folder"));
        }
    }
    for (rel, _) in files {
        if let Some(why) = disk::layout_error(rel, MANIFEST) {
            return Err(Error::usage(format!(
                "the catalog file `{}` {why}; nothing was written",
                shown(rel)
            )));
        }
    }
    for required in REQUIRED_FILES {
        if !files
            .iter()
            .any(|(p, t)| *p == required && !t.trim().is_empty())
        {
            return Err(Error::usage(format!(
                "the catalog has no {required} (or it is empty), so the skill would be incomplete; nothing was written (run `mldebug catalog verify`)"
            )));
        }
    }
    let old = load_manifest(dir, force)?;
    let new_hashes: BTreeMap<String, String> = files
        .iter()
        .map(|(p, t)| (p.to_string(), hash(t.as_bytes())))
        .collect();
    let known = old.as_ref().map(|m| &m.files);
    // Everything this install may touch, looked at once: (path, hash of the regular file there).
    let mut candidates: Vec<&str> = files.iter().map(|(p, _)| *p).collect();
    candidates.extend(known.into_iter().flat_map(|k| k.keys().map(String::as_str)));
    candidates.sort();
    candidates.dedup();
    let mut current: BTreeMap<&str, Option<String>> = BTreeMap::new();
    // A file on disk is the user's when it matches neither what was installed nor what is new.
    let mut modified = Vec::new();
    for rel in candidates {
        let here = match disk::inspect(dir, rel)? {
            OnDisk::Missing => continue,
            OnDisk::File(bytes) => Some(hash(&bytes)),
            OnDisk::Other(what) => {
                if new_hashes.contains_key(rel) {
                    modified.push(format!("{rel} ({what})"));
                }
                None
            }
        };
        let installed = known.and_then(|k| k.get(rel));
        let fresh = new_hashes.get(rel);
        if here.is_some() && installed != here.as_ref() && fresh != here.as_ref() {
            modified.push(rel.to_string());
        }
        current.insert(rel, here);
    }
    if !modified.is_empty() && !force {
        let why = if old.is_none() {
            "were not installed by mldebug"
        } else {
            "were changed since they were installed"
        };
        return Err(Error::usage(format!(
            "{}: these files {why}: {}; nothing was written (use --force to overwrite them)",
            dir.display(),
            modified.join(", ")
        )));
    }
    let mut out = Output {
        name: name.to_string(),
        dir: dir.display().to_string(),
        written: Vec::new(),
        unchanged: Vec::new(),
        removed: Vec::new(),
    };
    remove_stale_temps(dir, files)?;
    for (rel, text) in files {
        let here = current.get(rel).cloned().flatten();
        if here.as_ref() == new_hashes.get(*rel) {
            out.unchanged.push(rel.to_string());
            continue;
        }
        disk::write_atomic(&dir.join(rel), text.as_bytes())?;
        out.written.push(rel.to_string());
    }
    // Files an older install wrote that this catalog no longer has (and the user did not edit):
    // layout paths only (checked when the manifest was read), regular files only.
    if let Some(k) = known {
        for (rel, h) in k {
            let here = current.get(rel.as_str()).cloned().flatten();
            if !new_hashes.contains_key(rel) && here.as_ref() == Some(h) {
                std::fs::remove_file(dir.join(rel))
                    .map_err(|e| Error::input(&dir.join(rel), "removing", e))?;
                out.removed.push(rel.clone());
            }
        }
    }
    let manifest = Manifest {
        version: env!("CARGO_PKG_VERSION").to_string(),
        files: new_hashes,
    };
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| Error::internal(format!("writing the manifest: {e}")))?;
    disk::write_atomic(&dir.join(MANIFEST), text.as_bytes())?;
    Ok(out)
}

/// The manifest of an earlier install, checked entry by entry: every name must be a file of the
/// skill's layout and every hash 16 hex digits. A manifest that is not a regular file, does not
/// parse, or has a bad entry is refused (exit 2) naming it; with `force` it is set aside (and
/// replaced once the install is done), but a folder in its place is always refused.
fn load_manifest(dir: &Path, force: bool) -> Result<Option<Manifest>> {
    let path = dir.join(MANIFEST);
    let refuse = |place: String, why: String| {
        Err(Error::input(
            &path,
            place,
            format!("{why}; the manifest is not trusted, nothing was written (remove it, or use --force to replace it)"),
        ))
    };
    let bytes = match disk::inspect(dir, MANIFEST)? {
        OnDisk::Missing => return Ok(None),
        OnDisk::Other("a folder") => {
            return Err(Error::input(&path, "installing", "is a folder; remove it"))
        }
        OnDisk::Other(what) if !force => return refuse("reading".into(), format!("is {what}")),
        OnDisk::Other(_) => return Ok(None),
        OnDisk::File(bytes) => bytes,
    };
    let manifest: Manifest = match serde_json::from_slice(&bytes) {
        Ok(m) => m,
        Err(_) if force => return Ok(None),
        Err(e) => return refuse("parsing".into(), e.to_string()),
    };
    for (rel, h) in &manifest.files {
        let why = disk::layout_error(rel, MANIFEST)
            .or_else(|| (rel == MANIFEST).then_some("is the manifest itself"))
            .or_else(|| {
                (h.len() != 16 || !h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .then_some("has a hash that is not 16 hex digits")
            });
        if let Some(why) = why {
            if force {
                return Ok(None);
            }
            return refuse(
                format!("entry `{}`", shown(rel)),
                format!("the entry {why}"),
            );
        }
    }
    Ok(Some(manifest))
}

/// Remove the temporary files an interrupted install left in the folders this one writes.
fn remove_stale_temps(dir: &Path, files: &[(&str, &str)]) -> Result<()> {
    let mut subs: Vec<&str> = files
        .iter()
        .map(|(rel, _)| rel.rsplit_once('/').map_or("", |(sub, _)| sub))
        .collect();
    subs.push("");
    subs.sort();
    subs.dedup();
    for sub in subs {
        disk::remove_stale_temps(dir, sub, MANIFEST)?;
    }
    Ok(())
}

/// FNV-1a, 64 bit, in hex: enough to notice an edited file (not a security measure).
fn hash(bytes: &[u8]) -> String {
    format!("{:016x}", mldebug_text::hash::fnv1a(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable_and_sensitive() {
        assert_eq!(hash(b"abc"), hash(b"abc"));
        assert_ne!(hash(b"abc"), hash(b"abd"));
        assert_eq!(hash(b""), "cbf29ce484222325");
    }
}
