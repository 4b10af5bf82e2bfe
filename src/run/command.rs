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
    let program = find(first).ok_or_else(|| {
        Error::usage(format!(
            "no such command: `{first}` (not a file, and not found on PATH)"
        ))
    })?;
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

/// Interpreter options come before the script or `-m`/`-c`; a cluster like `-uS` counts.
fn refuse_hiding_flags(program: &str, args: &[String]) -> Result<()> {
    for a in args {
        if !a.starts_with('-') || a == "-" || a == "-m" || a == "-c" || a.starts_with("--") {
            break;
        }
        let letters = &a[1..];
        for (flag, why) in HIDING_FLAGS {
            if letters.contains(flag) {
                return Err(Error::usage(format!(
                    "`{program} {a}`: -{flag} {why}, so nothing could be observed; run it without -{flag}"
                )));
            }
        }
        // Options that take a value (-W x, -X y) end the cluster; their value is not a flag.
        if letters.ends_with('W') || letters.ends_with('X') {
            continue;
        }
    }
    Ok(())
}

/// A path as given when it contains a slash, else the first executable of that name on `PATH`.
fn find(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
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

    #[test]
    fn flags_that_hide_the_probes_are_refused_before_the_script_only() {
        for p in ["python3", "/usr/bin/python3"] {
            if find(p).is_none() {
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
            for good in ["train.py -S", "-u train.py", "-m pkg.train -I", "-c x"] {
                assert!(resolve(&words(&format!("{p} {good}"))).is_ok(), "{good}");
            }
        }
    }
}
