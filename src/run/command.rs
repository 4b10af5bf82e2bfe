//! What the command line of `mldebug run -- <command>` names, checked before anything starts:
//! the program must exist, and a Python started with a flag that skips `sitecustomize` or
//! ignores `PYTHONPATH` would run unobserved, so it is refused with the reason.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Python flags that keep the probes out: `-S` skips the `site` module (and so
/// `sitecustomize`), `-I` and `-E` ignore `PYTHONPATH`.
const HIDING_FLAGS: [(char, &str); 3] = [
    ('S', "skips the site module, which loads the probes"),
    ('I', "runs isolated, ignoring PYTHONPATH"),
    ('E', "ignores PYTHONPATH"),
];

/// The program to start, resolved, and its arguments.
#[derive(Debug, Clone)]
pub struct Command {
    /// The program as resolved on `PATH` (or as given, when it names a path).
    pub program: PathBuf,
    /// Its arguments, as typed.
    pub args: Vec<String>,
}

/// Checks `words` (the command after `--`) and resolves its program.
pub fn resolve(words: &[String]) -> Result<Command> {
    let Some((first, args)) = words.split_first() else {
        return Err(Error::usage(
            "no command to run: give it after `--`, e.g. mldebug run -- python train.py",
        ));
    };
    let program = find(first).map_err(Error::usage)?;
    if is_python(&program) {
        refuse_hiding_flags(first, args)?;
    }
    Ok(Command {
        program,
        args: args.to_vec(),
    })
}

/// `python`, `python3`, `python3.11`, a venv's `python`.
fn is_python(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("python"))
}

/// Interpreter options come before the script or `-m`/`-c`; a cluster like `-uS` counts. `-W`
/// and `-X` take a value, in the same word (`-Wignore`) or the next (`-W ignore`), and
/// `--check-hash-based-pycs` the next word: a value is never read as flags.
fn refuse_hiding_flags(program: &str, args: &[String]) -> Result<()> {
    let mut words = args.iter();
    while let Some(a) = words.next() {
        if a == "--check-hash-based-pycs" {
            words.next();
            continue;
        }
        if !a.starts_with('-') || a == "-" || a.starts_with("--") {
            break;
        }
        for (i, letter) in a.char_indices().skip(1) {
            if let Some((flag, why)) = HIDING_FLAGS.iter().find(|(f, _)| *f == letter) {
                return Err(Error::usage(format!(
                    "`{program} {a}`: -{flag} {why}, so nothing could be observed; run it without -{flag}"
                )));
            }
            match letter {
                // The program follows: nothing after it is an interpreter option.
                'c' | 'm' => return Ok(()),
                'W' | 'X' => {
                    if i + 1 == a.len() {
                        words.next();
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A path as given when it contains a slash, else the first executable of that name on `PATH`;
/// else why not, in words.
fn find(program: &str) -> std::result::Result<PathBuf, String> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return match std::fs::metadata(&p) {
            Err(_) => Err(format!("no such command: `{program}` (no such file)")),
            Ok(m) if m.is_dir() => Err(format!("`{program}` is a folder, not a program")),
            Ok(_) if !is_executable(&p) => Err(not_executable(program)),
            Ok(_) => Ok(p),
        };
    }
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
    });
    match found {
        Some(p) => Ok(p),
        None if Path::new(program).is_file() => {
            let here = format!("./{program}");
            Err(if is_executable(Path::new(program)) {
                format!(
                    "no such command on PATH: `{program}`; for the file of that name here, name \
                     it by its path: mldebug run -- {here}"
                )
            } else {
                format!(
                    "no such command on PATH: `{program}`, and the file of that name here is not \
                     executable; {}",
                    how_to_run(&here)
                )
            })
        }
        None => Err(format!(
            "no such command: `{program}` (not a file, and not found on PATH)"
        )),
    }
}

/// A file that is not executable: how to run it.
fn not_executable(program: &str) -> String {
    format!("`{program}` is not executable; {}", how_to_run(program))
}

/// How to run a file that is not executable.
fn how_to_run(program: &str) -> String {
    if program.ends_with(".py") {
        format!("run it with its interpreter: mldebug run -- python {program}")
    } else {
        format!("make it executable (chmod +x {program}) or name its interpreter first")
    }
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_missing_program_is_a_usage_error() {
        let e = resolve(&words("no-such-program-xyz train.py")).unwrap_err();
        assert_eq!(e.kind, crate::Kind::Usage);
        assert!(e.message.contains("no-such-program-xyz"), "{}", e.message);
        let e = resolve(&words("./not/here.py")).unwrap_err();
        assert!(e.message.contains("not/here.py"), "{}", e.message);
        assert!(resolve(&[]).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_file_that_is_not_executable_is_called_so_with_how_to_run_it() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("train.py");
        std::fs::write(&script, "print(1)\n").unwrap();
        let shown = script.display().to_string();
        let e = resolve(std::slice::from_ref(&shown)).unwrap_err();
        assert_eq!(e.kind, crate::Kind::Usage);
        assert!(e.message.contains("is not executable"), "{}", e.message);
        assert!(
            e.message
                .contains(&format!("mldebug run -- python {shown}")),
            "{}",
            e.message
        );
        let e = resolve(&[dir.path().display().to_string() + "/"]).unwrap_err();
        assert!(e.message.contains("is a folder"), "{}", e.message);
    }

    #[test]
    fn flags_that_hide_the_probes_are_refused_before_the_script_only() {
        for p in ["python3", "/usr/bin/python3"] {
            if find(p).is_err() {
                continue;
            }
            for bad in ["-S train.py", "-I train.py", "-uE train.py", "-u -S -m pkg"] {
                let e = resolve(&words(&format!("{p} {bad}"))).unwrap_err();
                assert!(
                    e.message.contains("nothing could be observed"),
                    "{bad}: {}",
                    e.message
                );
            }
            for good in [
                "train.py -S",
                "-u train.py",
                "-m pkg.train -I",
                "-c x",
                "-um pkg -S",
                "-Werror::DeprecationWarning train.py",
                "-X importtime -W ignore train.py",
                "-W ignore::UserWarning:Some train.py",
            ] {
                assert!(resolve(&words(&format!("{p} {good}"))).is_ok(), "{good}");
            }
            // A value of -W or -X ends the cluster, and the next word starts a new one.
            for bad in [
                "-W ignore -S train.py",
                "-X dev -I train.py",
                "-Wignore -E train.py",
                "--check-hash-based-pycs never -S train.py",
                "-X utf8 -X dev -uS train.py",
            ] {
                let e = resolve(&words(&format!("{p} {bad}"))).unwrap_err();
                assert!(
                    e.message.contains("nothing could be observed"),
                    "{bad}: {}",
                    e.message
                );
            }
        }
    }
}
