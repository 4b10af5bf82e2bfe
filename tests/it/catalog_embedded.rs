//! The binary embeds exactly the catalog files on disk: none missing (a new refs/ or evidence/
//! file must not be left out) and each with the same text.

use std::path::Path;

fn on_disk() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = ["SKILL.md", "PLAYBOOK.md"]
        .into_iter()
        .filter(|f| root.join(f).is_file())
        .map(String::from)
        .collect();
    for (dir, ext) in mldebug::catalog::FOLDERS {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut names: Vec<String> = rd
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
            .map(|p| format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()))
            .collect();
        names.sort();
        files.extend(names);
    }
    files
}

#[test]
fn every_catalog_file_on_disk_is_embedded_unchanged() {
    let embedded = mldebug::catalog::embedded_files();
    let names: Vec<&str> = embedded.iter().map(|(p, _)| *p).collect();
    assert_eq!(names, on_disk(), "rebuild: the embedded list is stale");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, text) in embedded {
        let disk = std::fs::read_to_string(root.join(path)).unwrap();
        assert!(disk == *text, "{path} differs from the embedded copy");
    }
}

#[test]
fn the_embedded_catalog_has_the_skill() {
    let names: Vec<&str> = mldebug::catalog::embedded_files()
        .iter()
        .map(|(p, _)| *p)
        .collect();
    assert!(names.contains(&"SKILL.md"), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("evidence/")),
        "{names:?}"
    );
}
