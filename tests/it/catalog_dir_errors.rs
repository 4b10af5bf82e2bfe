//! `--catalog DIR` with knowledge missing or unreadable: a missing or empty required file fails
//! `catalog verify` (exit 1) naming it; a link to a file that is not there fails naming the link;
//! what cannot be read (invalid UTF-8, a file in place of refs/, a folder that cannot be listed,
//! a pipe, a huge file) is an error naming the file and the place (exit 2), never a silent skip
//! or a hang.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn fixture_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), tmp.path());
    tmp
}

/// `catalog verify` on `dir`, killed past 20 s: (exit code, stdout, stderr).
fn verify(dir: &Path) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--color", "never", "--catalog"])
        .arg(dir)
        .args(["catalog", "verify"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("catalog verify hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn each_required_file_missing_or_empty_fails_naming_it() {
    for file in ["SKILL.md", "PLAYBOOK.md", "refs/diagnostics.md"] {
        for empty in [false, true] {
            let tmp = fixture_copy();
            let path = tmp.path().join(file);
            if empty {
                std::fs::write(&path, "  \n\n").unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
            let (code, out, err) = verify(tmp.path());
            assert_eq!(code, 1, "{file} (empty: {empty}): {out}{err}");
            let want = format!(
                "{}/{file}:1: {file} is {}",
                tmp.path().display(),
                if empty { "empty" } else { "missing" }
            );
            assert!(out.contains(&want), "expected `{want}` in:\n{out}");
            assert!(out.contains("catalog FAILED"), "{out}");
        }
    }
}

#[test]
fn a_link_to_a_missing_ref_fails_naming_the_link() {
    let tmp = fixture_copy();
    let skill = tmp.path().join("SKILL.md");
    let mut text = std::fs::read_to_string(&skill).unwrap();
    text.push_str(
        "\nSee [the memory notes](refs/memory.md), [up](../../etc/passwd) and [ok](refs/diagnostics.md#check-overfit).\n",
    );
    std::fs::write(&skill, text).unwrap();
    let (code, out, _) = verify(tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "link `refs/memory.md` names refs/memory.md, which is not a file of the catalog"
        ),
        "{out}"
    );
    assert!(
        out.contains("link `../../etc/passwd` leaves the catalog folder"),
        "{out}"
    );
    assert!(!out.contains("refs/diagnostics.md#"), "{out}");
}

#[test]
fn invalid_utf8_is_reported_with_line_and_byte() {
    let tmp = fixture_copy();
    let path = tmp.path().join("refs/diagnostics.md");
    let mut bytes = b"# Diagnostics\n\nline two\nab".to_vec();
    let at = bytes.len();
    bytes.extend_from_slice(b"\xff\xfe rest\n");
    std::fs::write(&path, &bytes).unwrap();
    let (code, _, err) = verify(tmp.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}: line 4, byte {at}: not valid UTF-8",
            path.display()
        )),
        "{err}"
    );
}

#[test]
fn an_unreadable_refs_folder_is_an_error_naming_it() {
    // refs/ is a file.
    let tmp = fixture_copy();
    let refs = tmp.path().join("refs");
    std::fs::remove_dir_all(&refs).unwrap();
    std::fs::write(&refs, "not a folder").unwrap();
    let (code, _, err) = verify(tmp.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{}: listing: not a folder", refs.display())),
        "{err}"
    );

    // refs/ is a link to itself (listing it fails).
    std::fs::remove_file(&refs).unwrap();
    std::os::unix::fs::symlink("refs", &refs).unwrap();
    let (code, _, err) = verify(tmp.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{}: listing", refs.display())),
        "{err}"
    );

    // refs/ cannot be listed (permission denied; root can list anything, so only checked
    // where the permission holds).
    let tmp = fixture_copy();
    let refs = tmp.path().join("refs");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&refs, std::fs::Permissions::from_mode(0o000)).unwrap();
    let denied = std::fs::read_dir(&refs).is_err();
    let (code, _, err) = verify(tmp.path());
    std::fs::set_permissions(&refs, std::fs::Permissions::from_mode(0o755)).unwrap();
    if denied {
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(&format!("{}: listing", refs.display())),
            "{err}"
        );
    }
}

#[test]
fn pipes_folders_and_huge_files_are_refused_not_read() {
    let tmp = fixture_copy();
    let pipe = tmp.path().join("refs/pipe.md");
    assert!(Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap()
        .success());
    let (code, _, err) = verify(tmp.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("pipe.md: reading: not a regular file"),
        "{err}"
    );
    std::fs::remove_file(&pipe).unwrap();

    std::fs::create_dir(tmp.path().join("evidence/folder.yaml")).unwrap();
    let (code, _, err) = verify(tmp.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("folder.yaml: reading: not a regular file"),
        "{err}"
    );
    std::fs::remove_dir(tmp.path().join("evidence/folder.yaml")).unwrap();

    // A sparse 64 MiB file: refused by its size, without being read.
    let big = std::fs::File::create(tmp.path().join("refs/big.md")).unwrap();
    big.set_len(64 << 20).unwrap();
    let (code, _, err) = verify(tmp.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("big.md: reading: larger than"), "{err}");
}

#[test]
fn control_characters_in_a_file_never_reach_the_terminal() {
    let tmp = fixture_copy();
    let skill = tmp.path().join("SKILL.md");
    let mut text = std::fs::read_to_string(&skill).unwrap();
    text.push_str("\nSee [^evil\u{1b}x].\n\nRun `mldebug check bad\u{7}`.\n");
    std::fs::write(&skill, text).unwrap();
    let (code, out, _) = verify(tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("[^evil\\u{1b}x]"), "{out}");
}
