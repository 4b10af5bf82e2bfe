//! No two modules of one crate (or of one embedded Python package) import each other, directly
//! or round a longer loop: the modules of a crate form layers, each reading only those below it.
//! A loop is a place where two concepts are not yet apart; the mend is to move the shared item to
//! the module that owns its concept (or to a small module both read).
//!
//! The module graph is drawn at the level of files: a Rust file imports another when it names a
//! path into it (`use crate::a::b`, `super::x`, a module brought in by `use`, a child module by
//! its name); a Python module imports another by `from .x import y`, `import mldebug_run.x` and
//! the like, inside functions too. Declaring a child module (`mod x;`) is not an import, nor is
//! a test module's (`#[cfg(test)] mod tests { .. }`) reading.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The source folders of the workspace's library crates (each folder's `lib.rs` is its root).
const RUST_CRATES: [&str; 10] = [
    "src",
    "diagnostics/src",
    "crates/catalog/src",
    "crates/doctor/src",
    "crates/judge/src",
    "crates/memory/src",
    "crates/report/src",
    "crates/sweep/src",
    "crates/sweep-writers/src",
    "crates/text/src",
];

/// The embedded Python packages: (folder holding the package, package name).
const PY_PACKAGES: [(&str, &str); 2] = [
    ("torch/run", "mldebug_run"),
    ("torch/driver", "mldebug_driver"),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_with(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// A graph of files: names, and for each file the files it imports with the path that does.
struct Graph {
    names: Vec<String>,
    edges: Vec<BTreeMap<usize, String>>,
}

impl Graph {
    /// The loops: strongly connected components of more than one file (Tarjan's algorithm).
    fn loops(&self) -> Vec<Vec<usize>> {
        struct State<'a> {
            g: &'a Graph,
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            on_stack: Vec<bool>,
            stack: Vec<usize>,
            next: usize,
            out: Vec<Vec<usize>>,
        }
        fn visit(s: &mut State, v: usize) {
            s.index[v] = Some(s.next);
            s.low[v] = s.next;
            s.next += 1;
            s.stack.push(v);
            s.on_stack[v] = true;
            for &w in s.g.edges[v].keys() {
                match s.index[w] {
                    None => {
                        visit(s, w);
                        s.low[v] = s.low[v].min(s.low[w]);
                    }
                    Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(s.low[v]) == s.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = s.stack.pop().unwrap();
                    s.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    s.out.push(component);
                }
            }
        }
        let n = self.names.len();
        let mut s = State {
            g: self,
            index: vec![None; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            next: 0,
            out: Vec::new(),
        };
        for v in 0..n {
            if s.index[v].is_none() {
                visit(&mut s, v);
            }
        }
        s.out
    }

    /// Each loop in words: its files, and what ties them (file -> file: the path named).
    fn describe_loops(&self) -> Vec<String> {
        self.loops()
            .iter()
            .map(|component| {
                let mut text = String::new();
                for &v in component {
                    for (w, why) in &self.edges[v] {
                        if component.contains(w) {
                            text += &format!("\n  {} -> {}: {why}", self.names[v], self.names[*w]);
                        }
                    }
                }
                text
            })
            .collect()
    }
}

/// Whether module `a` is `b` or holds it. A module's children are parts of it (in Rust they see
/// its private items; in Python its `__init__.py` runs before them): a child reading from its own
/// ancestor (`super::Args`, `from . import _debug`) is not a loop, while the ancestor reads on.
fn is_ancestor(a: &[String], b: &[String]) -> bool {
    b.starts_with(a)
}

// ---- Rust ----------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of Rust source, comments, strings and character literals left out.
fn tokens(text: &str) -> Vec<Token> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if raw_string_at(&c, i) {
            // A raw string: r"...", r#"..."#, br#"..."#.
            let mut j = i + if ch == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            j += 1;
            'raw: while j < c.len() {
                if c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break 'raw;
                }
                j += 1;
            }
            i = j;
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if ch == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a), which is kept out too.
            if next == Some('\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(c[start..i].iter().collect()));
        } else if ch == ':' && next == Some(':') {
            out.push(Token::PathSep);
            i += 2;
        } else {
            if !ch.is_whitespace() {
                out.push(Token::Punct(ch));
            }
            i += 1;
        }
    }
    out
}

/// Whether a raw string (`r"`, `r#"`, `br"`, `br#"`) starts at `c[i]`.
fn raw_string_at(c: &[char], i: usize) -> bool {
    let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    let r = if c[i] == 'b' { i + 1 } else { i };
    !ident_before && c.get(r) == Some(&'r') && matches!(c.get(r + 1), Some('#' | '"'))
}

/// The paths of a `use` tree starting at `tokens[*i]`, each with the name it binds.
fn use_tree(tokens: &[Token], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(*i) {
            Some(Token::Ident(name)) if name == "as" => {
                *i += 2; // `as alias`: the path is what matters here.
                out.push(path);
                return;
            }
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                *i += 1;
            }
            Some(Token::PathSep) => *i += 1,
            Some(Token::Punct('{')) => {
                *i += 1;
                while !matches!(tokens.get(*i), Some(Token::Punct('}')) | None) {
                    use_tree(tokens, i, &path, out);
                    if tokens.get(*i) == Some(&Token::Punct(',')) {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            Some(Token::Punct('*')) => {
                *i += 1;
                out.push(path);
                return;
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// One crate's module graph at the level of files.
fn rust_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    files_with(src, "rs", &mut files);
    files.retain(|f| {
        let name = f.strip_prefix(src).unwrap();
        name != Path::new("main.rs") && name != Path::new("build.rs")
    });
    files.sort();
    let module_of = |f: &Path| -> Vec<String> {
        let rel = f.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into()).collect();
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
            parts.pop();
        }
        parts
    };
    let modules: HashMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (module_of(f), i))
        .collect();
    // The file a crate-absolute path lands in: the longest prefix that is a module file.
    let file_of = |path: &[String]| -> Option<usize> {
        (0..=path.len())
            .rev()
            .find_map(|n| modules.get(&path[..n]).copied())
    };
    let module_names: Vec<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    let mut edges = vec![BTreeMap::new(); files.len()];
    for (v, f) in files.iter().enumerate() {
        let toks = tokens(&std::fs::read_to_string(f).unwrap());
        for (written, abs) in named_paths(&toks, &module_names[v], &modules) {
            if let Some(w) = file_of(&abs) {
                if !is_ancestor(&module_names[w], &module_names[v]) {
                    edges[v].entry(w).or_insert(written);
                }
            }
        }
    }
    let names = files
        .iter()
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    Graph { names, edges }
}

/// Every path into the crate that the tokens of module `module`'s file name: as written, and
/// made crate-absolute.
fn named_paths(
    toks: &[Token],
    module: &[String],
    modules: &HashMap<Vec<String>, usize>,
) -> Vec<(String, Vec<String>)> {
    let cfg_test: Vec<Token> = tokens("#[cfg(test)]");
    let mut out = Vec::new();
    // Inline modules (`mod name { .. }`) and the brace depth each opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    // Names bound by `use` to crate-absolute paths.
    let mut bound: HashMap<String, Vec<String>> = HashMap::new();
    let mut i = 0;
    while i < toks.len() {
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(m, _)| m.clone()))
            .collect();
        let after_sep = i > 0 && toks[i - 1] == Token::PathSep;
        match &toks[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                assert!(depth > 0, "unbalanced braces in {module:?} at token {i}");
                depth -= 1;
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Token::Ident(kw) if kw == "mod" => {
                if let (Some(Token::Ident(name)), Some(Token::Punct('{'))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    if i >= 7 && toks[i - 7..i] == cfg_test[..] {
                        // Test code is no part of the crate's layers: skip the module.
                        i = matching_brace(toks, i + 2) + 1;
                        continue;
                    }
                    inline.push((name.clone(), depth));
                }
            }
            Token::Ident(kw) if kw == "use" && !after_sep => {
                let mut j = i + 1;
                let mut paths = Vec::new();
                use_tree(toks, &mut j, &[], &mut paths);
                for mut p in paths {
                    if p.len() > 1 && p.last().is_some_and(|s| s == "self") {
                        p.pop(); // `use a::b::{self, c}` binds `b`.
                    }
                    if let Some(abs) = absolute(&p, &here, &bound, modules) {
                        if let Some(last) = p.last() {
                            bound.insert(last.clone(), abs.clone());
                        }
                        out.push((p.join("::"), abs));
                    }
                }
                i = j;
                continue;
            }
            Token::Ident(first) if !after_sep && toks.get(i + 1) == Some(&Token::PathSep) => {
                let mut p = vec![first.clone()];
                let mut j = i + 1;
                while toks.get(j) == Some(&Token::PathSep) {
                    match toks.get(j + 1) {
                        Some(Token::Ident(s)) => p.push(s.clone()),
                        _ => break,
                    }
                    j += 2;
                }
                if let Some(abs) = absolute(&p, &here, &bound, modules) {
                    out.push((p.join("::"), abs));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The index of the `}` that closes the `{` at `toks[open]`.
fn matching_brace(toks: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// A path as written in module `here`, made crate-absolute; `None` for a path outside the crate.
fn absolute(
    path: &[String],
    here: &[String],
    bound: &HashMap<String, Vec<String>>,
    modules: &HashMap<Vec<String>, usize>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let (mut base, rest): (Vec<String>, &[String]) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (here.to_vec(), &path[1..]),
        "super" => {
            let mut base = here.to_vec();
            let mut n = 0;
            while path.get(n).is_some_and(|s| s == "super") {
                base.pop();
                n += 1;
            }
            (base, &path[n..])
        }
        _ => {
            let child: Vec<String> = here.iter().chain([first]).cloned().collect();
            if modules.contains_key(&child) {
                (child, &path[1..])
            } else {
                (bound.get(first)?.clone(), &path[1..])
            }
        }
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

#[test]
fn no_module_of_a_crate_imports_itself_round_a_loop() {
    let mut loops = Vec::new();
    let mut files = 0;
    for krate in RUST_CRATES {
        let graph = rust_graph(&root().join(krate));
        files += graph.names.len();
        loops.extend(graph.describe_loops());
    }
    assert!(files > 300, "found only {files} files");
    assert!(
        loops.is_empty(),
        "{} import loops between modules of one crate:{}",
        loops.len(),
        loops.join("\n")
    );
}

// ---- Python --------------------------------------------------------------------------------

/// One package's import graph at the level of modules (files).
fn python_graph(dir: &Path, package: &str) -> Graph {
    let mut files = Vec::new();
    files_with(&dir.join(package), "py", &mut files);
    files.sort();
    // Module name and whether the file is a package's `__init__.py`.
    let module_of = |f: &Path| -> (Vec<String>, bool) {
        let rel = f.strip_prefix(dir).unwrap().with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into()).collect();
        let init = parts.last().is_some_and(|p| p == "__init__");
        if init {
            parts.pop();
        }
        (parts, init)
    };
    let modules: HashMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (module_of(f).0, i))
        .collect();
    let mut edges = vec![BTreeMap::new(); files.len()];
    for (v, f) in files.iter().enumerate() {
        let (module, init) = module_of(f);
        let package_of = if init {
            module.clone()
        } else {
            module[..module.len() - 1].to_vec()
        };
        for (from, names) in python_imports(&std::fs::read_to_string(f).unwrap()) {
            let dots = from.chars().take_while(|&c| c == '.').count();
            let mut target = if dots > 0 {
                let mut base = package_of.clone();
                for _ in 1..dots {
                    base.pop();
                }
                base
            } else {
                Vec::new()
            };
            target.extend(
                from[dots..]
                    .split('.')
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
            if target.first().map(String::as_str) != Some(package) {
                continue;
            }
            let mut targets: BTreeSet<usize> = BTreeSet::new();
            for name in &names {
                let sub: Vec<String> = target.iter().chain([name]).cloned().collect();
                if let Some(&w) = modules.get(&sub) {
                    targets.insert(w);
                } else if let Some(&w) = modules.get(&target) {
                    targets.insert(w);
                }
            }
            if names.is_empty() {
                targets.extend(modules.get(&target).copied());
            }
            for w in targets {
                if !is_ancestor(&module_of(&files[w]).0, &module) {
                    edges[v]
                        .entry(w)
                        .or_insert_with(|| format!("{from} {}", names.join(", ")));
                }
            }
        }
    }
    let names = files
        .iter()
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    Graph { names, edges }
}

/// The imports of a Python module: (module named, names imported from it; none for `import x`).
/// Lines inside triple-quoted strings are left out.
fn python_imports(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut in_string = false;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let quotes = line.matches("\"\"\"").count();
        if in_string {
            in_string = quotes % 2 == 0;
            continue;
        }
        if quotes % 2 == 1 {
            in_string = true;
            continue;
        }
        let code = line.split('#').next().unwrap().trim();
        if let Some(rest) = code.strip_prefix("from ") {
            let Some((from, names)) = rest.split_once(" import ") else {
                continue;
            };
            let mut names = names.to_string();
            if names.contains('(') {
                while !names.contains(')') {
                    let Some(more) = lines.next() else { break };
                    names += more.split('#').next().unwrap();
                }
            }
            let names = names
                .replace(['(', ')'], " ")
                .split(',')
                .filter_map(|n| n.split_whitespace().next().map(String::from))
                .collect();
            out.push((from.trim().to_string(), names));
        } else if let Some(rest) = code.strip_prefix("import ") {
            for item in rest.split(',') {
                if let Some(name) = item.split_whitespace().next() {
                    out.push((name.to_string(), Vec::new()));
                }
            }
        }
    }
    out
}

#[test]
fn no_module_of_an_embedded_python_package_imports_itself_round_a_loop() {
    let mut loops = Vec::new();
    let mut files = 0;
    for (dir, package) in PY_PACKAGES {
        let graph = python_graph(&root().join(dir), package);
        let edges: usize = graph.edges.iter().map(BTreeMap::len).sum();
        assert!(edges > 10, "{package}: only {edges} imports found");
        files += graph.names.len();
        loops.extend(graph.describe_loops());
    }
    assert!(files > 30, "found only {files} files");
    assert!(
        loops.is_empty(),
        "{} import loops between modules of one Python package:{}",
        loops.len(),
        loops.join("\n")
    );
}
