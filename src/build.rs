//! Generates the lists of files embedded in the binary (`include_str!`), found on disk at build
//! time so a new file is embedded without editing any list:
//! - the catalog: SKILL.md, PLAYBOOK.md, refs/*.md, refs/*.tsv and evidence/*.yaml;
//! - the PyTorch zoo: every `.py` and `.json` file under torch/zoo/ (`mldebug demo --torch`
//!   writes them out and runs them);
//! - the run probes: every `.py` file under torch/run/ but its tests (`mldebug run` writes them
//!   into a private folder on the program's PYTHONPATH);
//! - the torch driver: every `.py` file of the package torch/driver/mldebug_driver/ (`mldebug
//!   check --torch` sends them to the interpreter on stdin; nothing is written to disk).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Top-level files of the catalog, then the folders whose files of the given extension belong to it.
const TOP_FILES: [&str; 2] = ["SKILL.md", "PLAYBOOK.md"];
const FOLDERS: [(&str, &str); 3] = [("refs", "md"), ("refs", "tsv"), ("evidence", "yaml")];

fn main() {
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src/build.rs");
    let mut files: Vec<String> = Vec::new();
    for name in TOP_FILES {
        println!("cargo:rerun-if-changed={name}");
        if root.join(name).is_file() {
            files.push(name.to_string());
        }
    }
    for (dir, ext) in FOLDERS {
        // A folder path makes cargo rescan it, so an added or removed file re-runs this script.
        println!("cargo:rerun-if-changed={dir}");
        files.extend(files_in(&root, dir, ext));
    }
    let mut out = String::from(
        "/// Catalog files embedded at build time: (path relative to the repository root, text).\n\
         pub static FILES: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        let abs = root.join(f);
        writeln!(
            out,
            "    ({f:?}, include_str!({:?})),",
            abs.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out_dir.join("embedded_catalog.rs"), out)
        .expect("write the embedded catalog list");
    embed_tree(
        &root,
        &out_dir,
        "torch/zoo",
        "TORCH_ZOO",
        "embedded_torch_zoo.rs",
    );
    embed_tree(
        &root,
        &out_dir,
        "torch/run",
        "RUN_PROBES",
        "embedded_run_probes.rs",
    );
    embed_tree(
        &root,
        &out_dir,
        "torch/driver/mldebug_driver",
        "DRIVER_PACKAGE",
        "embedded_torch_driver.rs",
    );
}

/// `<dir>/**/*.{py,json}` (tests/ left out) as `<name>: &[(path relative to dir, text)]`.
fn embed_tree(root: &Path, out_dir: &Path, dir: &str, name: &str, file: &str) {
    let zoo = root.join(dir);
    println!("cargo:rerun-if-changed={dir}");
    let mut files = Vec::new();
    walk(&zoo, &zoo, &mut files);
    files.sort();
    let mut out = format!(
        "/// Files of {dir} embedded at build time: (path relative to {dir}, text).\n\
         pub static {name}: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        writeln!(
            out,
            "    ({f:?}, include_str!({:?})),",
            zoo.join(f).display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    std::fs::write(out_dir.join(file), out).expect("write an embedded file list");
}

fn walk(base: &Path, dir: &Path, files: &mut Vec<String>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.filter_map(|e| e.ok()) {
        let path = entry.path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n != "__pycache__" && n != "tests")
            {
                println!("cargo:rerun-if-changed={}", path.display());
                walk(base, &path, files);
            }
        } else if path.extension().is_some_and(|e| e == "py" || e == "json") {
            if let Ok(rel) = path.strip_prefix(base) {
                files.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
}

/// `dir/*.ext` relative to `root`, sorted; none when the folder does not exist.
fn files_in(root: &Path, dir: &str, ext: &str) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = read
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
        .filter_map(|p| {
            p.file_name()
                .map(|n| format!("{dir}/{}", n.to_string_lossy()))
        })
        .collect();
    names.sort();
    names
}
