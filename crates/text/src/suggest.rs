//! "Did you mean" support shared by every command that looks a name up: the edit distance and
//! how many edits still count as a typo. Each caller keeps its own ranking policy.

/// Names within this many edits are offered as "did you mean" (catches one or two typos).
pub const SUGGEST_MAX_EDITS: usize = 2;

/// Optimal-string-alignment distance over characters: Levenshtein's insertions, deletions and
/// substitutions, plus the swap of two neighbouring characters as one edit (the commonest typo:
/// "gradeint", "mpl"). The one edit distance of the crate: suggestions and triage's speller.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    // Three rows: the one two back (for swaps), the previous and the current.
    let mut back: Vec<usize> = vec![0; m + 1];
    let mut prev: Vec<usize> = (0..=m).collect();
    for i in 1..=n {
        let mut cur = vec![i; m + 1];
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(back[j - 2] + 1);
            }
            cur[j] = v;
        }
        back = std::mem::replace(&mut prev, cur);
    }
    prev[m]
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
        assert_eq!(edit_distance("mpl", "mlp"), 1, "a swap is one edit");
        assert_eq!(edit_distance("gradeint", "gradient"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            edit_distance("ca", "abc"),
            3,
            "OSA, not Damerau: no edit after a swap"
        );
        assert_eq!(edit_distance("é", "e"), 1, "characters, not bytes");
        assert_eq!(edit_distance("cnn", "cn"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
