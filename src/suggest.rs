//! "Did you mean" support shared by every command that looks a name up: the edit distance and
//! how many edits still count as a typo. Each caller keeps its own ranking policy.

/// Names within this many edits are offered as "did you mean" (catches one or two typos).
pub const SUGGEST_MAX_EDITS: usize = 2;

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("rahtz", "rahtz"), 0);
        assert_eq!(edit_distance("rahts", "rahtz"), 1);
        assert_eq!(edit_distance("karpaty", "karpathy"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("mlp", "mlp"), 0);
        assert_eq!(edit_distance("mpl", "mlp"), 2);
        assert_eq!(edit_distance("cnn", "cn"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
