//! Named to sort first. libtest starts a binary's tests in the order of their names, so this
//! test makes the torch venv (`.ci/torch-venv`, created on the first use in an empty cache:
//! about a minute of download, unpacking and byte-compiling) on one core at the very start,
//! while the other core runs the tests that need no Python. Made later, by the first claim
//! measured with PyTorch, it kept a second such test waiting on it with nothing to do. On CI,
//! `.ci/run` has made it already, while cargo compiled.

use crate::support::{python_c, repo};

/// `name==version` lines of `torch/requirements.txt`.
fn pinned() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(repo().join("torch/requirements.txt"))
        .expect("torch/requirements.txt");
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (name, version) = l
                .split_once("==")
                .unwrap_or_else(|| panic!("torch/requirements.txt: {l:?} is not name==version"));
            (name.trim().to_string(), version.trim().to_string())
        })
        .collect()
}

#[test]
fn the_test_python_has_the_pinned_requirements() {
    let pinned = pinned();
    assert!(pinned.iter().any(|(n, _)| n == "torch"), "{pinned:?}");
    let names: Vec<&str> = pinned.iter().map(|(n, _)| n.as_str()).collect();
    let stdout = python_c(
        "import sys, importlib.metadata as m\nfor n in sys.argv[1:]: print(n, m.version(n))",
        &names,
    );
    let found: Vec<(String, String)> = stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    // An interpreter of the user's own (MLDEBUG_TEST_PYTHON) needs every package, not the pins.
    if std::env::var_os("MLDEBUG_TEST_PYTHON").is_some_and(|p| !p.is_empty()) {
        let installed: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(installed, names);
    } else {
        assert_eq!(
            found, pinned,
            "the venv of .ci/torch-venv, against torch/requirements.txt"
        );
    }
}
