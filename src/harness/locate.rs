//! Find the user's package: the nearest `Cargo.toml` (or `--manifest-path`), `cargo metadata`,
//! and the member whose library holds the model.

use super::model_path::ModelPath;
use crate::{Error, Exit, Result};
use cargo_metadata::{DependencyKind, Metadata, MetadataCommand, Package, TargetKind};
use std::path::{Path, PathBuf};

/// The name under which user crates depend on the checks.
pub const DIAGNOSTICS_PACKAGE: &str = "mldebug-diagnostics";

/// The user's package, as the harness needs it.
#[derive(Debug, Clone)]
pub struct UserCrate {
    /// Package name (`my-net`).
    pub name: String,
    /// Library target name (`my_net`): how Rust code names the crate.
    pub lib: String,
    pub manifest_path: PathBuf,
    pub workspace_root: PathBuf,
    pub target_dir: PathBuf,
    pub edition: String,
    /// The features of the package, to turn on the one that enables an optional
    /// `mldebug-diagnostics` dependency.
    pub features: Vec<(String, Vec<String>)>,
    /// The key under which the package depends on `mldebug-diagnostics` (usually the same name).
    pub diagnostics_key: String,
    /// Whether that dependency is optional (then a feature must turn it on).
    pub diagnostics_optional: bool,
}

/// The manifest to start from: `--manifest-path`, else the nearest `Cargo.toml` at or above `cwd`.
pub fn find_manifest(explicit: Option<&Path>, cwd: &Path) -> Result<PathBuf> {
    if let Some(p) = explicit {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        };
        if !p.is_file() {
            return Err(Error::usage(format!(
                "--manifest-path {}: no such file",
                p.display()
            )));
        }
        return Ok(p);
    }
    cwd.ancestors()
        .map(|d| d.join("Cargo.toml"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Error::usage(format!(
                "no Cargo.toml in {} or any parent directory; run `mldebug check` inside the \
                 crate that defines your model, or pass --manifest-path path/to/Cargo.toml \
                 (built-in models need no crate: --model zoo::mlp)",
                cwd.display()
            ))
        })
}

/// `cargo metadata --no-deps` for the workspace of `manifest`.
pub fn metadata(manifest: &Path, offline: bool) -> Result<Metadata> {
    let mut cmd = MetadataCommand::new();
    cmd.manifest_path(manifest).no_deps();
    if let Some(dir) = manifest.parent() {
        // Cargo reads `.cargo/config.toml` from the current directory, not from the manifest's.
        cmd.current_dir(dir);
    }
    if offline {
        cmd.other_options(vec!["--offline".to_string()]);
    }
    cmd.exec().map_err(|e| {
        let detail = match &e {
            cargo_metadata::Error::CargoMetadata { stderr } => stderr.trim().to_string(),
            other => other.to_string(),
        };
        Error::new(
            Exit::BuildFailed,
            format!(
                "`cargo metadata` failed for {}:\n{detail}",
                manifest.display()
            ),
        )
    })
}

/// Pick the package that holds `model`: `-p` if given; else, for `mycrate::...`, the member whose
/// library is `mycrate`; else the member whose manifest is `manifest` (the nearest one); else the
/// only member with a library.
pub fn select(
    meta: &Metadata,
    manifest: &Path,
    model: &ModelPath,
    package: Option<&str>,
) -> Result<UserCrate> {
    let members = meta.workspace_packages();
    let names = || {
        members
            .iter()
            .map(|p| format!("`{}`", p.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: &Package = if let Some(name) = package {
        members
            .iter()
            .find(|p| p.name.as_str() == name)
            .copied()
            .ok_or_else(|| {
                Error::usage(format!(
                    "-p {name}: no such package in this workspace; its packages: {}",
                    names()
                ))
            })?
    } else if let Some(krate) = &model.krate {
        members
            .iter()
            .find(|p| {
                lib_name(p).as_deref() == Some(krate.as_str()) || p.name.replace('-', "_") == *krate
            })
            .copied()
            .ok_or_else(|| {
                Error::usage(format!(
                    "--model {krate}::{}: no package in this workspace has a library named \
                     `{krate}`; its packages: {} (use `crate::...` for the package you are in)",
                    model.inner(),
                    names()
                ))
            })?
    } else {
        let here = same_file_in(&members, manifest);
        match here {
            Some(p) => p,
            None => {
                let with_lib: Vec<&Package> = members
                    .iter()
                    .copied()
                    .filter(|p| lib_name(p).is_some())
                    .collect();
                match with_lib.as_slice() {
                    [one] => one,
                    _ => {
                        return Err(Error::usage(format!(
                            "--model crate::{}: {} is a workspace root, so `crate` is ambiguous; \
                             name the package with -p (one of {}) or write `<its_crate>::{}`",
                            model.inner(),
                            manifest.display(),
                            names(),
                            model.inner()
                        )))
                    }
                }
            }
        }
    };
    user_crate(meta, chosen)
}

fn same_file_in<'a>(members: &[&'a Package], manifest: &Path) -> Option<&'a Package> {
    let want = manifest.canonicalize().ok()?;
    members
        .iter()
        .find(|p| p.manifest_path.as_std_path().canonicalize().ok().as_deref() == Some(&want))
        .copied()
}

fn lib_name(p: &Package) -> Option<String> {
    p.targets
        .iter()
        .find(|t| {
            t.kind
                .iter()
                .any(|k| matches!(k, TargetKind::Lib | TargetKind::RLib | TargetKind::DyLib))
        })
        .map(|t| t.name.replace('-', "_"))
}

fn user_crate(meta: &Metadata, p: &Package) -> Result<UserCrate> {
    let lib = lib_name(p).ok_or_else(|| {
        Error::usage(format!(
            "package `{}` ({}) has no library target, and mldebug links your model as a \
             library. Move the model into src/lib.rs (keep main.rs for the binary: \
             `use {}::Net;`), or call the checks from a #[test]: \
             `mldebug_diagnostics::checks::overfit::<Net>(&Options::default())?.assert_pass()`",
            p.name,
            p.manifest_path,
            p.name.replace('-', "_")
        ))
    })?;
    let dep =
        p.dependencies
            .iter()
            .find(|d| d.name == DIAGNOSTICS_PACKAGE && d.kind == DependencyKind::Normal)
            .ok_or_else(|| {
                let only_dev = p.dependencies.iter().any(|d| {
                    d.name == DIAGNOSTICS_PACKAGE && d.kind == DependencyKind::Development
                });
                Error::usage(format!(
                    "package `{}` does not depend on `{DIAGNOSTICS_PACKAGE}`{}; the model's \
                 `impl DebugModel` must live in the library, so add it under [dependencies] \
                 of {} (`cargo add {DIAGNOSTICS_PACKAGE}`)",
                    p.name,
                    if only_dev {
                        " outside [dev-dependencies]"
                    } else {
                        ""
                    },
                    p.manifest_path
                ))
            })?;
    Ok(UserCrate {
        name: p.name.to_string(),
        lib,
        manifest_path: p.manifest_path.clone().into(),
        workspace_root: meta.workspace_root.clone().into(),
        target_dir: meta.target_directory.clone().into(),
        edition: p.edition.as_str().to_string(),
        features: p
            .features
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        diagnostics_key: dep.rename.clone().unwrap_or_else(|| dep.name.clone()),
        diagnostics_optional: dep.optional,
    })
}
