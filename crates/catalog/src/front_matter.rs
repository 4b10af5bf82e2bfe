//! SKILL.md front matter, checked against the agent-skill spec (agentskills.io): `name` is 1–64
//! characters of `a-z`, `0-9` and single hyphens with none leading or trailing; `description` is
//! 1–1024 characters with no angle brackets; no keys beyond the spec's; the body stays under 500
//! lines.

use super::limits::shown;
use super::model::{FrontMatter, Location, Problem};
use std::collections::{BTreeMap, HashMap};

/// The spec's limit on `name`.
pub const NAME_MAX: usize = 64;
/// The spec's limit on `description`.
pub const DESCRIPTION_MAX: usize = 1024;
/// The spec's advice for the body ("under 500 lines"), enforced by the reference validators.
pub const BODY_MAX_LINES: usize = 500;
/// The top-level keys the strict validator accepts.
pub const ALLOWED_KEYS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// The front matter split off a SKILL.md: the YAML, the line it starts on, and the body.
pub struct Split<'a> {
    /// The YAML between the `---` lines.
    pub yaml: &'a str,
    /// 1-based line of the first YAML line.
    pub yaml_line: usize,
    /// The Markdown after the closing `---`.
    pub body: &'a str,
}

/// Split `---\n<yaml>\n---\n<body>`; `None` when the file does not start with `---`.
pub fn split(text: &str) -> Option<Split<'_>> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some(Split {
                yaml: &rest[..offset],
                yaml_line: 2,
                body: &rest[offset + line.len()..],
            });
        }
        offset += line.len();
    }
    None
}

/// Parse and check SKILL.md's front matter; every rule broken is one problem.
pub fn check(file: &str, text: &str) -> (Option<FrontMatter>, Vec<Problem>) {
    let at = |line: usize, message: String| Problem {
        location: Location {
            file: file.to_string(),
            line,
        },
        message,
    };
    let Some(split) = split(text) else {
        return (
            None,
            vec![at(
                1,
                "no front matter: SKILL.md must start with `---`, the YAML keys `name` and `description`, and `---`".into(),
            )],
        );
    };
    // The line of each top-level key, found in one pass (a key's first line wins).
    let mut key_lines: HashMap<&str, usize> = HashMap::new();
    for (i, l) in split.yaml.lines().enumerate() {
        if let Some((key, _)) = l.split_once(':') {
            key_lines.entry(key).or_insert(i + split.yaml_line);
        }
    }
    let line_of = |key: &str| key_lines.get(key).copied().unwrap_or(split.yaml_line);
    if let Err(deep) = mldebug_text::yaml_depth::check(split.yaml.as_bytes()) {
        return (
            None,
            vec![at(
                deep.line + split.yaml_line - 1,
                format!(
                    "front matter is not valid YAML: nested more than {} levels deep",
                    mldebug_text::yaml_depth::MAX_FLOW_DEPTH
                ),
            )],
        );
    }
    let map: BTreeMap<String, serde_norway::Value> = match serde_norway::from_str(split.yaml) {
        Ok(m) => m,
        Err(e) => {
            let line = e
                .location()
                .map(|l| l.line() + split.yaml_line - 1)
                .unwrap_or(split.yaml_line);
            return (
                None,
                vec![at(line, format!("front matter is not valid YAML: {e}"))],
            );
        }
    };
    let mut problems = Vec::new();
    for key in map.keys() {
        if !ALLOWED_KEYS.contains(&key.as_str()) {
            problems.push(at(
                line_of(key),
                format!(
                    "front matter key `{}` is not in the agent-skill spec (allowed: {}); put extra data under `metadata`",
                    shown(key),
                    ALLOWED_KEYS.join(", ")
                ),
            ));
        }
    }
    let text_of = |key: &str| map.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let name = text_of("name");
    let description = text_of("description");
    match &name {
        None => problems.push(at(
            split.yaml_line,
            "front matter has no `name` (a string)".into(),
        )),
        Some(n) => {
            if let Err(why) = check_name(n) {
                problems.push(at(
                    line_of("name"),
                    format!("front matter `name: {}` {why}", shown(n)),
                ));
            }
        }
    }
    match &description {
        None => problems.push(at(
            split.yaml_line,
            "front matter has no `description` (a string)".into(),
        )),
        Some(d) => problems.extend(
            description_problems(d)
                .into_iter()
                .map(|m| at(line_of("description"), m)),
        ),
    }
    let body_lines = split.body.lines().count();
    if body_lines >= BODY_MAX_LINES {
        let body_start = split.yaml_line + split.yaml.lines().count() + 1;
        problems.push(at(
            body_start,
            format!("the SKILL.md body has {body_lines} lines; the agent-skill spec wants under {BODY_MAX_LINES} (move detail to refs/)"),
        ));
    }
    let fm = match (name, description) {
        (Some(name), Some(description)) => Some(FrontMatter {
            name,
            description,
            location: Location {
                file: file.to_string(),
                line: 1,
            },
        }),
        _ => None,
    };
    (fm, problems)
}

/// The spec's rules for `description`: one message per rule broken.
fn description_problems(d: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars = d.chars().count();
    if chars == 0 || chars > DESCRIPTION_MAX {
        out.push(format!(
            "`description` must be 1 to {DESCRIPTION_MAX} characters; it has {chars}"
        ));
    }
    if d.contains(['<', '>']) {
        out.push("`description` must not contain `<` or `>` (skill validators reject them)".into());
    }
    out
}

/// The spec's rule for a skill name; `Err` says what is wrong.
pub fn check_name(name: &str) -> Result<(), String> {
    let len = name.chars().count();
    if len == 0 || len > NAME_MAX {
        return Err(format!("must be 1 to {NAME_MAX} characters; it has {len}"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err("may hold only a-z, 0-9 and `-`".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err("must not start or end with `-`".into());
    }
    if name.contains("--") {
        return Err("must not contain `--`".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(front: &str) -> String {
        format!("---\n{front}---\n# Title\n")
    }

    #[test]
    fn a_good_front_matter_passes() {
        let (fm, p) = check(
            "SKILL.md",
            &skill("name: mldebug\ndescription: Finds bugs.\n"),
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(fm.unwrap().name, "mldebug");
    }

    #[test]
    fn names_follow_the_spec() {
        assert!(check_name("ml-debug2").is_ok());
        for bad in ["", "-a", "a-", "a--b", "Ml", "a_b", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn bad_front_matter_names_the_line() {
        let (_, p) = check(
            "SKILL.md",
            &skill("name: mldebug\ndescription: run --model <path>\nauthor: me\n"),
        );
        let msgs: Vec<String> = p.iter().map(|p| p.to_string()).collect();
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("SKILL.md:3:") && m.contains('<')),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("SKILL.md:4:") && m.contains("author")),
            "{msgs:?}"
        );
    }

    #[test]
    fn missing_front_matter_and_bad_name() {
        let (fm, p) = check("SKILL.md", "# no front matter\n");
        assert!(fm.is_none());
        assert!(p[0].message.contains("no front matter"));
        let (_, p) = check("SKILL.md", &skill("name: ML--Debug\ndescription: x\n"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].location.line, 2);
    }

    #[test]
    fn long_body_is_flagged() {
        let text = format!(
            "---\nname: a\ndescription: b\n---\n{}",
            "line\n".repeat(500)
        );
        let (_, p) = check("SKILL.md", &text);
        assert!(p.iter().any(|p| p.message.contains("500")), "{p:?}");
    }
}
