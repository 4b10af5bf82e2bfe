//! Is the knowledge all there? The files every catalog needs (SKILL.md, PLAYBOOK.md and
//! refs/diagnostics.md) must be present and hold text, and every relative link in the Markdown
//! must name a file of the catalog. A link is resolved by its words alone: nothing is read from
//! the disk, so a link can never make mldebug open a path.

use super::limits::shown;
use super::model::{Catalog, Location, Problem};
use super::{DIAGNOSTICS_FILE, PLAYBOOK_FILE, SKILL_FILE};
use std::collections::HashSet;

/// The files without which the skill is incomplete: the entry point, the symptom table and the
/// check sections.
pub const REQUIRED_FILES: [&str; 3] = [SKILL_FILE, PLAYBOOK_FILE, DIAGNOSTICS_FILE];

/// One problem per required file that is missing or holds only whitespace, and one per relative
/// link whose target is not a catalog file.
pub fn check(c: &Catalog, out: &mut Vec<Problem>) {
    for name in REQUIRED_FILES {
        match c.files.iter().find(|(p, _)| p == name) {
            None => out.push(problem(name, 1, format!("{name} is missing"))),
            Some((_, text)) if text.trim().is_empty() => {
                out.push(problem(name, 1, format!("{name} is empty")))
            }
            Some(_) => {}
        }
    }
    let files: HashSet<&str> = c.files.iter().map(|(p, _)| p.as_str()).collect();
    for (dest, location) in &c.links {
        let Some(path) = local_path(dest) else {
            continue;
        };
        match resolve(&location.file, path) {
            Err(why) => out.push(Problem {
                location: location.clone(),
                message: format!("link `{}` {why}", shown(dest)),
            }),
            Ok(target) if !files.contains(target.as_str()) => out.push(Problem {
                location: location.clone(),
                message: format!(
                    "link `{}` names {}, which is not a file of the catalog",
                    shown(dest),
                    shown(&target)
                ),
            }),
            Ok(_) => {}
        }
    }
}

fn problem(file: &str, line: usize, message: String) -> Problem {
    Problem {
        location: Location {
            file: file.to_string(),
            line,
        },
        message,
    }
}

/// The path part of a link to a file beside the Markdown: `None` for a web address, a scheme
/// (`mailto:`), or a link to a place in the same file (`#id`).
fn local_path(dest: &str) -> Option<&str> {
    let dest = dest.trim();
    let path = dest.split(['#', '?']).next().unwrap_or("");
    if path.is_empty() {
        return None;
    }
    let scheme = path.split_once(':').is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    });
    if scheme || path.starts_with("//") {
        return None;
    }
    Some(path)
}

/// `path` relative to the folder of `from` (both `/`-separated, relative to the catalog root),
/// without `.` and `..`; `Err` when it is absolute or climbs above the catalog root.
pub fn resolve(from: &str, path: &str) -> Result<String, &'static str> {
    if path.starts_with('/') || path.starts_with('\\') {
        return Err("is an absolute path; link to catalog files by relative paths");
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err("leaves the catalog folder");
                }
            }
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_resolve_by_their_words() {
        assert_eq!(resolve("SKILL.md", "refs/a.md"), Ok("refs/a.md".into()));
        assert_eq!(resolve("refs/b.md", "a.md"), Ok("refs/a.md".into()));
        assert_eq!(
            resolve("refs/b.md", "../PLAYBOOK.md"),
            Ok("PLAYBOOK.md".into())
        );
        assert_eq!(resolve("refs/b.md", "./x/../a.md"), Ok("refs/a.md".into()));
        assert!(resolve("refs/b.md", "../../etc/passwd").is_err());
        assert!(resolve("SKILL.md", "/etc/passwd").is_err());
    }

    #[test]
    fn web_links_and_anchors_are_not_files() {
        for d in [
            "https://x.org/a.md",
            "mailto:a@b",
            "#symptoms",
            "//host/x",
            "",
        ] {
            assert_eq!(local_path(d), None, "{d}");
        }
        assert_eq!(local_path("refs/a.md#part"), Some("refs/a.md"));
    }
}
