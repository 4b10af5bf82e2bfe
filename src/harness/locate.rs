//! Find the user's package: the nearest `Cargo.toml` (or `--manifest-path`), `cargo metadata`,
//! and the member whose library holds the model.

use super::model_path::ModelPath;
use crate::{Error, Result};
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
    /// Whether the package depends on `mldebug-diagnostics` at all (else the harness brings its
    /// own and wraps the model: `own_model`).
    pub has_diagnostics: bool,
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
        Error::build(format!(
            "`cargo metadata` failed for {}:\n{detail}",
            manifest.display()
        ))
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
    let dep = p
        .dependencies
        .iter()
        .find(|d| d.name == DIAGNOSTICS_PACKAGE && d.kind == DependencyKind::Normal);
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
        diagnostics_key: dep
            .and_then(|d| d.rename.clone())
            .unwrap_or_else(|| DIAGNOSTICS_PACKAGE.to_string()),
        diagnostics_optional: dep.is_some_and(|d| d.optional),
        has_diagnostics: dep.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace of two members with libraries `alpha` and `beta_net`, both depending on the
    /// diagnostics (no build: `cargo metadata --no-deps` only reads manifests).
    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let diag = concat!(env!("CARGO_MANIFEST_DIR"), "/diagnostics");
        std::fs::write(
            root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"alpha\", \"beta\"]\nresolver = \"2\"\n",
        )
        .unwrap();
        for (dir_name, pkg) in [("alpha", "alpha"), ("beta", "beta-net")] {
            std::fs::create_dir_all(root.join(dir_name).join("src")).unwrap();
            std::fs::write(
                root.join(dir_name).join("Cargo.toml"),
                format!(
                    "[package]\nname = \"{pkg}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
                     [dependencies]\nmldebug-diagnostics = {{ path = {diag:?} }}\n"
                ),
            )
            .unwrap();
            std::fs::write(root.join(dir_name).join("src/lib.rs"), "").unwrap();
        }
        dir
    }

    #[test]
    fn a_crate_name_or_the_member_you_are_in_selects_the_package() {
        let ws = workspace();
        let root_manifest = ws.path().join("Cargo.toml");
        let meta = metadata(&root_manifest, true).unwrap();

        let named = ModelPath::parse("beta_net::models::Net").unwrap();
        let user = select(&meta, &root_manifest, &named, None).unwrap();
        assert_eq!(
            (user.name.as_str(), user.lib.as_str()),
            ("beta-net", "beta_net")
        );
        assert_eq!(user.diagnostics_key, DIAGNOSTICS_PACKAGE);

        let here = ModelPath::parse("crate::Net").unwrap();
        let alpha_manifest = ws.path().join("alpha/Cargo.toml");
        let user = select(&meta, &alpha_manifest, &here, None).unwrap();
        assert_eq!(user.name, "alpha");

        let user = select(&meta, &root_manifest, &here, Some("beta-net")).unwrap();
        assert_eq!(user.name, "beta-net");
    }

    #[test]
    fn ambiguous_or_unknown_packages_are_usage_errors_naming_the_members() {
        let ws = workspace();
        let root_manifest = ws.path().join("Cargo.toml");
        let meta = metadata(&root_manifest, true).unwrap();
        let here = ModelPath::parse("crate::Net").unwrap();
        let e = select(&meta, &root_manifest, &here, None).unwrap_err();
        assert_eq!(e.exit(), crate::Exit::Usage);
        assert!(e.message.contains("`crate` is ambiguous"), "{}", e.message);
        assert!(e.message.contains("`alpha`, `beta-net`"), "{}", e.message);

        let other = ModelPath::parse("gamma::Net").unwrap();
        let e = select(&meta, &root_manifest, &other, None).unwrap_err();
        assert!(e
            .message
            .contains("no package in this workspace has a library named `gamma`"));
        let e = select(&meta, &root_manifest, &here, Some("gamma")).unwrap_err();
        assert!(
            e.message.starts_with("-p gamma: no such package"),
            "{}",
            e.message
        );
    }
}
