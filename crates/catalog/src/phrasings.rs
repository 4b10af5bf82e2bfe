//! How people describe each symptom row when they ask for help (`refs/*.tsv`): one phrasing a
//! line, `id<TAB>set<TAB>phrasing`, where `id` is a PLAYBOOK symptom row's id and `set` names
//! where the phrasing came from. Triage indexes them beside each row's own words.

use crate::model::{Location, Phrasing, Problem};

/// The phrasings of one file, and what is wrong with its lines (blank lines and lines that
/// start with `#` are skipped).
pub fn parse(path: &str, text: &str) -> (Vec<Phrasing>, Vec<Problem>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let location = Location {
            file: path.to_string(),
            line: i + 1,
        };
        let mut cols = line.splitn(3, '\t');
        match (cols.next(), cols.next(), cols.next()) {
            (Some(id), Some(set), Some(words))
                if !id.trim().is_empty() && !words.trim().is_empty() =>
            {
                out.push(Phrasing {
                    id: id.trim().to_string(),
                    set: set.trim().to_string(),
                    text: words.trim().to_string(),
                    location,
                })
            }
            _ => problems.push(Problem {
                location,
                message: "expected `symptom-id<TAB>set<TAB>phrasing`".into(),
            }),
        }
    }
    (out, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_and_bad_ones_are_named_by_place() {
        let (p, problems) = parse(
            "refs/x.tsv",
            "# comment\nloss-nan\th1\tloss is nan\n\nloss-zero only one column\nloss-zero\th1\t \n",
        );
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].id.as_str(), p[0].set.as_str()), ("loss-nan", "h1"));
        assert_eq!(p[0].text, "loss is nan");
        assert_eq!(p[0].location.line, 2);
        let lines: Vec<usize> = problems.iter().map(|x| x.location.line).collect();
        assert_eq!(lines, [4, 5]);
    }
}
