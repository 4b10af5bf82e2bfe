//! `mldebug skill install`: write the agent skill (SKILL.md, PLAYBOOK.md, refs/, evidence/) where
//! coding agents look for skills: `.claude/skills/<name>/` (default), `.agents/skills/<name>/`
//! (`--agents`), under `$HOME` with `--global`, or into `--dir D`.
//!
//! A manifest (`.mldebug-skill.json`) records a hash of every file written, so a copy the user
//! edited is recognised and never overwritten without `--force`; an unmodified older copy is
//! simply updated. Each file is written to a temporary name and renamed into place, and the
//! manifest last, so an interrupted install leaves no half-written file.

use crate::catalog::{self, front_matter};
use crate::cli::Global;
use crate::render::json;
use crate::render::output::emit;
use crate::{Error, Exit, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The manifest's file name inside the installed skill folder.
pub const MANIFEST: &str = ".mldebug-skill.json";

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

pub fn run(args: Args, g: &Global) -> Result<Exit> {
    match args.action {
        Action::Install(a) => install(a, g),
    }
}

fn install(args: InstallArgs, g: &Global) -> Result<Exit> {
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
        .collect();
    let out = write_skill(&dir, &fm.name, &files, args.force)?;
    if g.json {
        emit(&json::to_string(&out)?)?;
    } else if out.written.is_empty() && out.removed.is_empty() {
        emit(&format!(
            "the {} skill in {} is up to date ({} files)\n",
            out.name,
            out.dir,
            out.unchanged.len()
        ))?;
    } else {
        emit(&format!(
            "installed the {} skill in {}: {} written, {} unchanged, {} removed\n",
            out.name,
            out.dir,
            out.written.len(),
            out.unchanged.len(),
            out.removed.len()
        ))?;
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
/// `force`.
fn write_skill(dir: &Path, name: &str, files: &[(&str, &str)], force: bool) -> Result<Output> {
    let manifest_path = dir.join(MANIFEST);
    let old: Option<Manifest> = match std::fs::read_to_string(&manifest_path) {
        Ok(text) => Some(serde_json::from_str(&text).map_err(|e| {
            Error::input(
                &manifest_path,
                "parsing",
                format!("{e}; remove it or use --force"),
            )
        })?),
        Err(_) => None,
    };
    let new_hashes: BTreeMap<String, String> = files
        .iter()
        .map(|(p, t)| (p.to_string(), hash(t.as_bytes())))
        .collect();
    // A file on disk is the user's when it matches neither what was installed nor what is new.
    let mut modified = Vec::new();
    let on_disk = |rel: &str| std::fs::read(dir.join(rel)).ok().map(|b| hash(&b));
    let known = old.as_ref().map(|m| &m.files);
    let mut candidates: Vec<&str> = files.iter().map(|(p, _)| *p).collect();
    if let Some(k) = known {
        candidates.extend(k.keys().map(String::as_str));
    }
    candidates.sort();
    candidates.dedup();
    for rel in &candidates {
        let Some(current) = on_disk(rel) else {
            continue;
        };
        let installed = known.and_then(|k| k.get(*rel));
        let fresh = new_hashes.get(*rel);
        if installed != Some(&current) && fresh != Some(&current) {
            modified.push(rel.to_string());
        }
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
    for (rel, text) in files {
        let path = dir.join(rel);
        if on_disk(rel).as_ref() == new_hashes.get(*rel) {
            out.unchanged.push(rel.to_string());
            continue;
        }
        write_atomic(&path, text.as_bytes())?;
        out.written.push(rel.to_string());
    }
    // Files an older install wrote that this catalog no longer has (and the user did not edit).
    if let Some(k) = known {
        for (rel, h) in k {
            if !new_hashes.contains_key(rel) && on_disk(rel).as_ref() == Some(h) {
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
    write_atomic(&manifest_path, text.as_bytes())?;
    Ok(out)
}

/// Write `bytes` to a temporary file beside `path`, then rename it into place.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::input(parent, "creating", e))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{file_name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| Error::input(&tmp, "writing", e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::input(path, "writing", e)
    })
}

/// FNV-1a, 64 bit: enough to notice an edited file (not a security measure).
fn hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
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
