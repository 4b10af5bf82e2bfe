//! Where the graph is cut, named without traced layers: from which parameters got a gradient and
//! the order the model creates them, say "everything up to `ln_f` gets none; `head` does".
//!
//! A model creates its parameters in forward order far more often than not (embedding, blocks,
//! final norm, head), so a run of dead parameters followed by a run of live ones is a cut between
//! the last dead module and the first live one. Anything else is listed by module, without a
//! boundary claimed.

/// One parameter: its name, the order it was created in, whether it got a gradient.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    /// The parameter's name.
    pub name: &'a str,
    /// Its place in creation order.
    pub order: usize,
    /// It got a gradient.
    pub live: bool,
}

/// The module a parameter belongs to: its name without the last segment (`ln_f.weight` →
/// `ln_f`; a bare name is its own module).
pub fn module_of(name: &str) -> &str {
    name.rsplit_once('.').map_or(name, |(m, _)| m)
}

/// Modules in first-seen order, each once.
fn modules<'a>(rows: &[&Row<'a>]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        let m = module_of(r.name);
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// "`a`", "`a` and `b`", "`a`, `b` and `c`".
/// Modules a one-line summary names before "and N more" (the details list every parameter).
pub const MODULES_IN_SUMMARY: usize = 6;

fn and_list(names: &[&str]) -> String {
    let mut quoted: Vec<String> = names
        .iter()
        .take(MODULES_IN_SUMMARY)
        .map(|n| format!("`{n}`"))
        .collect();
    if names.len() > MODULES_IN_SUMMARY {
        quoted.push(format!("{} more", names.len() - MODULES_IN_SUMMARY));
    }
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The sentence naming the cut, or `None` when every parameter is live or every one is dead
/// (then there is no boundary to name).
pub fn boundary(rows: &[Row]) -> Option<String> {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_key(|r| r.order);
    let dead: Vec<&Row> = sorted.iter().copied().filter(|r| !r.live).collect();
    let live: Vec<&Row> = sorted.iter().copied().filter(|r| r.live).collect();
    if dead.is_empty() || live.is_empty() {
        return None;
    }
    let first_live = sorted.iter().position(|r| r.live)?;
    let last_dead = sorted.iter().rposition(|r| !r.live)?;
    let live_modules = modules(&live);
    let does = if live_modules.len() == 1 {
        "does"
    } else {
        "do"
    };
    if last_dead < first_live {
        let cut_at = module_of(sorted[last_dead].name);
        let first = if dead.len() == 1 {
            "the first parameter".to_string()
        } else {
            format!("the first {} parameters", dead.len())
        };
        return Some(format!(
            "everything up to `{cut_at}` ({first} the model creates) gets none; {} {does}",
            and_list(&live_modules)
        ));
    }
    Some(format!(
        "none reaches {}; {} {does}",
        and_list(&modules(&dead)),
        and_list(&live_modules)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows<'a>(spec: &[(&'a str, bool)]) -> Vec<Row<'a>> {
        spec.iter()
            .enumerate()
            .map(|(order, &(name, live))| Row { name, order, live })
            .collect()
    }

    #[test]
    fn a_dead_prefix_names_the_last_dead_module_and_the_live_ones() {
        let r = rows(&[
            ("embed.weight", false),
            ("blocks.0.ln.weight", false),
            ("blocks.0.ln.bias", false),
            ("ln_f.weight", false),
            ("ln_f.bias", false),
            ("head.weight", true),
            ("head.bias", true),
        ]);
        let s = boundary(&r).unwrap();
        assert_eq!(
            s,
            "everything up to `ln_f` (the first 5 parameters the model creates) gets none; `head` does"
        );
        assert!(s.contains("; `head` does"), "{s}");
    }

    #[test]
    fn the_order_decides_not_the_alphabet() {
        // Sorted by name, `head` would come before `ln_f`; by creation it comes last.
        let mut r = rows(&[("ln_f.weight", false), ("head.weight", true)]);
        r[0].order = 0;
        r[1].order = 1;
        r.reverse();
        assert!(boundary(&r).unwrap().contains("up to `ln_f`"));
    }

    #[test]
    fn interleaved_dead_parameters_are_listed_without_a_boundary() {
        let r = rows(&[
            ("fc1.weight", true),
            ("fc2.weight", false),
            ("fc3.weight", true),
        ]);
        let s = boundary(&r).unwrap();
        assert_eq!(s, "none reaches `fc2`; `fc1` and `fc3` do");
    }

    #[test]
    fn a_long_list_of_modules_is_cut_short_in_the_summary() {
        // Every other module is live, so the 9 dead ones never form a prefix.
        let names: Vec<String> = (0..18).map(|i| format!("m{i}.weight")).collect();
        let spec: Vec<(&str, bool)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i % 2 == 1))
            .collect();
        let s = boundary(&rows(&spec)).unwrap();
        assert!(s.starts_with("none reaches `m0`, `m2`"), "{s}");
        assert!(s.contains("and 3 more;"), "{s}");
    }

    #[test]
    fn nothing_to_name_when_all_live_or_all_dead() {
        assert_eq!(boundary(&rows(&[("a.w", true), ("b.w", true)])), None);
        assert_eq!(boundary(&rows(&[("a.w", false)])), None);
        assert_eq!(boundary(&[]), None);
        assert_eq!(module_of("w"), "w");
    }
}
