//! Holm-Bonferroni step-down adjustment of a family of p-values.

/// Holm-adjusted p-values, in the input order: sort ascending, multiply the i-th smallest
/// (0-based) by (m − i), carry the running maximum, cap at 1.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}
