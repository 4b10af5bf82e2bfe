//! Generates the list of catalog files embedded in the binary (`include_str!`): SKILL.md,
//! PLAYBOOK.md, refs/*.md and evidence/*.yaml, found on disk at build time so a new file in
//! refs/ or evidence/ is embedded without editing any list.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Top-level files of the catalog, then the folders whose files of the given extension belong to it.
const TOP_FILES: [&str; 2] = ["SKILL.md", "PLAYBOOK.md"];
const FOLDERS: [(&str, &str); 2] = [("refs", "md"), ("evidence", "yaml")];

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
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("embedded_catalog.rs");
    std::fs::write(&dest, out).expect("write the embedded catalog list");
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
