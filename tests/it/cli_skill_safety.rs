//! `mldebug skill install` touches nothing outside the skill folder, whatever its manifest says
//! and whatever sits in the folder: entries that climb out, absolute paths, devices, symbolic
//! links, folders named like files. It never leaves a temporary file behind, and removes the ones
//! an interrupted install left.

#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MANIFEST: &str = ".mldebug-skill.json";
/// The FNV-1a hash of no bytes: a manifest entry with it matches any empty file.
const EMPTY_HASH: &str = "cbf29ce484222325";

fn fixture() -> String {
    format!("{}/tests/fixtures/catalog", env!("CARGO_MANIFEST_DIR"))
}

/// `mldebug skill install --dir <tmp>/skill [extra]`, killed if it runs past 20 s.
fn install_in(dir: &Path, extra: &[&str]) -> Output {
    install_cmd(dir, extra, None)
}

fn install_cmd(dir: &Path, extra: &[&str], shell_prefix: Option<&str>) -> Output {
    let bin = env!("CARGO_BIN_EXE_mldebug");
    let mut args: Vec<String> = [
        "--color",
        "never",
        "--catalog",
        &fixture(),
        "skill",
        "install",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push("--dir".into());
    args.push(dir.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut cmd = match shell_prefix {
        None => {
            let mut c = Command::new(bin);
            c.args(&args);
            c
        }
        Some(prefix) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("{prefix}; exec \"$0\" \"$@\""))
                .arg(bin)
                .args(&args);
            c
        }
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("skill install hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temp dir holding an installed skill (`skill/`) and a file outside it (`outside/victim`).
struct Setup {
    tmp: tempfile::TempDir,
}

impl Setup {
    fn new(victim: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::fs::write(tmp.path().join("outside/victim"), victim).unwrap();
        let s = Setup { tmp };
        let out = install_in(&s.skill(), &[]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        s
    }
    fn skill(&self) -> PathBuf {
        self.tmp.path().join("skill")
    }
    fn victim(&self) -> PathBuf {
        self.tmp.path().join("outside/victim")
    }
    fn set_manifest_entry(&self, rel: &str, hash: &str) {
        let path = self.skill().join(MANIFEST);
        let mut m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        m["files"][rel] = serde_json::json!(hash);
        std::fs::write(&path, m.to_string()).unwrap();
    }
}

#[test]
fn manifest_entries_outside_the_folder_are_refused_and_nothing_outside_is_touched() {
    for (victim, entry) in [
        ("", "../outside/victim"),
        ("", "../../outside/victim"),
        ("", "ABS"),
        ("", "/dev/zero"),
        ("", "refs/../../outside/victim"),
        ("", ""),
    ] {
        let s = Setup::new(victim);
        let entry = if entry == "ABS" {
            s.victim().display().to_string()
        } else {
            entry.to_string()
        };
        s.set_manifest_entry(&entry, EMPTY_HASH);
        let out = install_in(&s.skill(), &[]);
        assert_eq!(code(&out), 2, "{entry}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(MANIFEST) && err.contains("entry") && err.contains("not trusted"),
            "{entry}: {err}"
        );
        assert!(
            s.victim().is_file(),
            "{entry}: the outside file was removed"
        );
        // With --force the bad manifest is replaced, and still nothing outside is touched.
        let out = install_in(&s.skill(), &["--force"]);
        assert_eq!(code(&out), 0, "{entry}: {}", stderr(&out));
        assert!(s.victim().is_file(), "{entry}: removed with --force");
        let m = std::fs::read_to_string(s.skill().join(MANIFEST)).unwrap();
        assert!(!m.contains("victim") && !m.contains("/dev/"), "{m}");
    }
}

#[test]
fn a_symlink_inside_the_folder_is_never_followed() {
    // A recorded file replaced by a link to an outside file with the recorded content's hash.
    let s = Setup::new("");
    std::fs::create_dir_all(s.skill().join("refs")).unwrap();
    symlink(s.victim(), s.skill().join("refs/old.md")).unwrap();
    s.set_manifest_entry("refs/old.md", EMPTY_HASH);
    let out = install_in(&s.skill(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(s.victim().is_file(), "the link's target was removed");
    assert!(s.skill().join("refs/old.md").is_symlink());

    // A file of the skill replaced by a link: refused, and with --force the link itself is
    // replaced, its target left as it was.
    std::fs::remove_file(s.skill().join("SKILL.md")).unwrap();
    symlink(s.victim(), s.skill().join("SKILL.md")).unwrap();
    let out = install_in(&s.skill(), &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    let out = install_in(&s.skill(), &["--force"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(s.victim()).unwrap(), "");
    assert!(!s.skill().join("SKILL.md").is_symlink());

    // A folder of the skill replaced by a link to an outside folder: refused even with --force.
    std::fs::remove_dir_all(s.skill().join("refs")).unwrap();
    symlink(s.tmp.path().join("outside"), s.skill().join("refs")).unwrap();
    for extra in [&[][..], &["--force"][..]] {
        let out = install_in(&s.skill(), extra);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    }
    let outside: Vec<_> = std::fs::read_dir(s.tmp.path().join("outside"))
        .unwrap()
        .collect();
    assert_eq!(
        outside.len(),
        1,
        "something was written outside: {outside:?}"
    );
}

#[test]
fn devices_pipes_and_folders_in_place_of_files_do_not_hang_or_leak() {
    let s = Setup::new("keep");
    // A pipe where a file goes: reading it would block forever.
    std::fs::remove_file(s.skill().join("PLAYBOOK.md")).unwrap();
    let ok = Command::new("mkfifo")
        .arg(s.skill().join("PLAYBOOK.md"))
        .status()
        .unwrap();
    assert!(ok.success());
    let out = install_in(&s.skill(), &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
    // The manifest itself a link to a device.
    std::fs::remove_file(s.skill().join(MANIFEST)).unwrap();
    symlink("/dev/zero", s.skill().join(MANIFEST)).unwrap();
    let out = install_in(&s.skill(), &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains(MANIFEST), "{}", stderr(&out));
    let out = install_in(&s.skill(), &["--force"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(s.skill().join(MANIFEST).is_file() && !s.skill().join(MANIFEST).is_symlink());
    // A folder named like a recorded file is not removed, and one named like a file to write
    // is an error, not a hang.
    std::fs::create_dir_all(s.skill().join("evidence/old.yaml")).unwrap();
    s.set_manifest_entry("evidence/old.yaml", EMPTY_HASH);
    std::fs::remove_file(s.skill().join("SKILL.md")).unwrap();
    std::fs::create_dir_all(s.skill().join("SKILL.md/x")).unwrap();
    let out = install_in(&s.skill(), &["--force"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(s.skill().join("evidence/old.yaml").is_dir());
    assert_eq!(std::fs::read_to_string(s.victim()).unwrap(), "keep");
}

#[test]
fn a_corrupt_manifest_needs_force_and_force_replaces_it() {
    let s = Setup::new("");
    std::fs::write(s.skill().join(MANIFEST), "{ not json").unwrap();
    let out = install_in(&s.skill(), &[]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    let out = install_in(&s.skill(), &["--force"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.skill().join(MANIFEST)).unwrap()).unwrap();
    assert!(m["files"]["SKILL.md"].is_string(), "{m}");
    // A bad hash is a bad entry too.
    s.set_manifest_entry("SKILL.md", "zz");
    assert_eq!(code(&install_in(&s.skill(), &[])), 2);
}

fn temp_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(temp_files(&p));
        } else if p.file_name().unwrap().to_string_lossy().contains(".tmp-") {
            out.push(p.display().to_string());
        }
    }
    out
}

#[test]
fn stale_temporary_files_are_removed_and_only_those() {
    let s = Setup::new("");
    let stale = [
        ".SKILL.md.tmp-4242",
        "refs/.diagnostics.md.tmp-1",
        "evidence/.x.yaml.tmp-77",
    ];
    for f in stale {
        std::fs::write(s.skill().join(f), "half written").unwrap();
    }
    // Not ours: a different pattern, or a link (removed as a link, its target kept).
    let keep = [
        ".SKILL.md.tmp-12x",
        "SKILL.md.tmp-1",
        "refs/.notes.tmp",
        ".notes.txt.tmp-5",
        "refs/.data.yaml.tmp-5",
    ];
    for f in keep {
        std::fs::write(s.skill().join(f), "user's").unwrap();
    }
    symlink(s.victim(), s.skill().join(".PLAYBOOK.md.tmp-9")).unwrap();
    let out = install_in(&s.skill(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for f in stale.iter().chain([".PLAYBOOK.md.tmp-9"].iter()) {
        assert!(
            !s.skill().join(f).exists() && !s.skill().join(f).is_symlink(),
            "{f} left"
        );
    }
    for f in keep {
        assert!(s.skill().join(f).is_file(), "{f} removed");
    }
    assert!(s.victim().is_file());
}

#[test]
fn a_write_error_leaves_no_temporary_file() {
    // A file-size limit makes every write past 1 KiB fail, as a full disk would.
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("skill");
    let out = install_cmd(&skill, &[], Some("trap '' XFSZ; ulimit -f 1"));
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("writing"), "{}", stderr(&out));
    assert!(skill.is_dir(), "the install started writing");
    assert_eq!(temp_files(&skill), Vec::<String>::new());
    assert!(
        !skill.join(MANIFEST).exists(),
        "no manifest after a failed install"
    );
}

#[test]
fn an_incomplete_catalog_is_not_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(catalog.join("refs")).unwrap();
    for f in ["SKILL.md", "refs/diagnostics.md"] {
        std::fs::copy(Path::new(&fixture()).join(f), catalog.join(f)).unwrap();
    }
    let skill = tmp.path().join("skill");
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .arg("--catalog")
        .arg(&catalog)
        .args(["skill", "install", "--dir"])
        .arg(&skill)
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("PLAYBOOK.md"), "{}", stderr(&out));
    assert!(!skill.exists(), "nothing written");
}
