//! Reference values for every statistic, computed independently with scipy 1.17.1 / numpy (the
//! exact call is given beside each value) or by exact enumeration in Python (`itertools.product`
//! over sign vectors, `itertools.combinations` over splits), to at least 6 significant digits.

use super::binomial::clopper_pearson;
use super::bootstrap::{stratified, TaskScores};
use super::correlation::{pearson, spearman};
use super::describe::{iqm, median_of, quantile7, skewness, sorted, Describe};
use super::effect::{d_z, hedges_g};
use super::holm::holm;
use super::mannwhitney::mann_whitney;
use super::permutation::two_sample;
use super::signflip::sign_flip;
use super::ttest::{one_sample, welch};
use super::wilcoxon::signed_rank;
use super::PMethod;
use mldebug_text::rng::Rng;

fn close(got: f64, want: f64) {
    let tol = 1e-7 * want.abs().max(1e-12);
    assert!((got - want).abs() <= tol, "got {got:.17}, want {want:.17}");
}

const N2: [f64; 2] = [0.5, 0.8];
const N3: [f64; 3] = [0.5, 1.2, 0.3];
const N5: [f64; 5] = [0.5, 1.2, 0.3, 0.9, 1.1];
const N6: [f64; 6] = [0.4, -0.2, 1.1, 0.7, 0.9, 0.3];
/// A zero and tied |d| (1, −1 and 2, 2).
const TIES: [f64; 6] = [1.0, -1.0, 2.0, 2.0, 0.0, 3.0];

#[test]
fn paired_t_matches_scipy() {
    // r = scipy.stats.ttest_1samp(d, 0.0); ci = r.confidence_interval(0.95)
    let cases: [(&[f64], f64, f64, f64, f64); 5] = [
        (
            &N2,
            4.333333333333333,
            0.1443846310212945,
            -1.2559307104262043,
            2.5559307104262046,
        ),
        (
            &N3,
            2.4433888871261042,
            0.1345153551841691,
            -0.5072910149286441,
            1.8406243482619775,
        ),
        (
            &N5,
            4.618802153517007,
            0.00988999066389132,
            0.31910560133715066,
            1.2808943986628494,
        ),
        (
            &N6,
            2.793721183078312,
            0.0382762689425384,
            0.04259825665134365,
            1.024068410015323,
        ),
        (
            &TIES,
            1.9414506867883021,
            0.10986650103422642,
            -0.3780607693605127,
            2.711394102693846,
        ),
    ];
    for (d, t, p, lo, hi) in cases {
        let r = one_sample(d, 0.95);
        close(r.t, t);
        close(r.p, p);
        close(r.ci.0, lo);
        close(r.ci.1, hi);
        assert_eq!(r.df, d.len() as f64 - 1.0);
    }
}

#[test]
fn paired_t_on_the_design_example() {
    // a = [81.5, 80.6, 82.1, 81.3, 81.6]; b = [80.7, 79.6, 81.3, 80.4, 80.9]
    // r = scipy.stats.ttest_rel(a, b); r.confidence_interval()
    let a = [81.5, 80.6, 82.1, 81.3, 81.6];
    let b = [80.7, 79.6, 81.3, 80.4, 80.9];
    let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
    let r = one_sample(&d, 0.95);
    close(r.t, 16.473755351606943);
    close(r.p, 7.950360493633518e-05);
    close(r.ci.0, 0.6984285223017641);
    close(r.ci.1, 0.9815714776982256);
    // w = scipy.stats.ttest_ind(a, b, equal_var=False); w.df; w.confidence_interval()
    let w = welch(&a, &b, 0.95);
    close(w.t, 2.2386075217339148);
    close(w.p, 0.05633813223440781);
    close(w.df, 7.809342230695894);
    close(w.ci.0, -0.028980409871235957);
    close(w.ci.1, 1.7089804098712427);
    // scipy.stats.pearsonr(a, b).statistic; scipy.stats.spearmanr(a, b).statistic
    close(pearson(&a, &b), 0.9937396591893585);
    close(spearman(&a, &b), 1.0);
}

#[test]
fn constant_differences_give_infinite_t_not_nan() {
    let r = one_sample(&[0.5, 0.5, 0.5], 0.95);
    assert_eq!(r.p, 0.0);
    assert!(r.t.is_infinite());
    let z = one_sample(&[0.0, 0.0], 0.95);
    assert_eq!(z.p, 1.0);
}

#[test]
fn sign_flip_is_exact() {
    // Enumerated: cnt = #{s in {±1}^n : |s·d| >= |Σd|}; p = cnt / 2^n. Identical to
    // scipy.stats.permutation_test((d,), np.sum, permutation_type='samples',
    //   n_resamples=np.inf, alternative='two-sided').pvalue
    let mut rng = Rng::new(0);
    let cases: [(&[f64], f64, f64); 5] = [
        (&N2, 2.0 / 4.0, 0.5),
        (&N3, 2.0 / 8.0, 0.25),
        (&N5, 2.0 / 32.0, 0.0625),
        (&N6, 4.0 / 64.0, 0.03125),
        (&TIES, 12.0 / 64.0, 0.0625),
    ];
    for (d, p, min) in cases {
        let r = sign_flip(d, &mut rng);
        close(r.p, p);
        close(r.min_attainable, min);
        assert_eq!(r.method, PMethod::Exact);
    }
}

#[test]
fn sign_flip_exact_path_agrees_with_brute_force_at_larger_n() {
    // 23 differences with repeated magnitudes, brute-forced over all 2^23 sign vectors in Rust
    // below (independent of the meet-in-the-middle count).
    let d: Vec<f64> = (0..23)
        .map(|i| ((i * 7) % 5) as f64 * 0.1 - 0.12 + if i % 3 == 0 { 0.3 } else { 0.0 })
        .collect();
    let target: f64 = d.iter().sum::<f64>().abs();
    let mut count = 0u64;
    for mask in 0u32..(1 << 23) {
        let s: f64 = d
            .iter()
            .enumerate()
            .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
            .sum();
        if s.abs() >= target - 1e-9 {
            count += 1;
        }
    }
    let r = sign_flip(&d, &mut Rng::new(1));
    close(r.p, count as f64 / (1u64 << 23) as f64);
}

#[test]
fn wilcoxon_is_exact_with_ties_and_zeros() {
    // No ties: scipy.stats.wilcoxon(d, method='exact').pvalue. With ties and a zero (last case):
    // enumerated over 2^5 sign vectors of scipy.stats.rankdata(|d|) with the zero dropped,
    // p = min(1, 2·min(P(W+ >= w), P(W+ <= w))).
    let cases: [(&[f64], f64, f64, f64); 5] = [
        (&N2, 3.0, 0.5, 0.5),
        (&N3, 6.0, 0.25, 0.25),
        (&N5, 15.0, 0.0625, 0.0625),
        (&N6, 20.0, 0.0625, 0.03125),
        (&TIES, 13.5, 0.1875, 0.0625),
    ];
    for (d, w, p, min) in cases {
        let r = signed_rank(d);
        close(r.statistic, w);
        close(r.p, p);
        close(r.min_attainable, min);
    }
}

/// (a, b, t, p, df, CI low, CI high)
type WelchCase = (&'static [f64], &'static [f64], f64, f64, f64, f64, f64);

#[test]
fn welch_matches_scipy() {
    // w = scipy.stats.ttest_ind(a, b, equal_var=False); w.df; w.confidence_interval()
    let cases: [WelchCase; 5] = [
        (
            &[3.0, 4.0, 5.0],
            &[0.0, 1.0, 2.0],
            3.6742346141747673,
            0.021311641128756713,
            4.0,
            0.7330420644724809,
            5.266957935527519,
        ),
        (
            &[1.0, 4.0, 5.0, 7.0, 9.0],
            &[2.0, 3.0, 6.0, 8.0, 0.5],
            0.6758378183830474,
            0.5182000144257393,
            7.99976625956875,
            -3.135710078214356,
            5.735710078214357,
        ),
        (
            &[1.0, 2.5],
            &[0.2, 0.4],
            1.9163739413197602,
            0.2995453987541234,
            1.0355443217945934,
            -7.418191850800478,
            10.318191850800478,
        ),
        (
            &[0.81, 0.79, 0.84, 0.80, 0.83, 0.78],
            &[0.77, 0.80, 0.76, 0.79, 0.75],
            2.592066622025935,
            0.029308477753586228,
            8.924384516812585,
            0.004331085654757573,
            0.06433558101190931,
        ),
        (
            &[1.0, 2.0, 2.0, 3.0, 4.0],
            &[2.0, 2.0, 3.0, 5.0, 5.0, 6.0],
            -1.650188546374673,
            0.13466365935682484,
            8.650898787856045,
            -3.4103685512662647,
            0.5437018845995976,
        ),
    ];
    for (a, b, t, p, df, lo, hi) in cases {
        let r = welch(a, b, 0.95);
        close(r.t, t);
        close(r.p, p);
        close(r.df, df);
        close(r.ci.0, lo);
        close(r.ci.1, hi);
    }
}

/// (a, b, permutation p, U, Mann-Whitney p, P(A>B), Hedges' g)
type Unpaired = (&'static [f64], &'static [f64], f64, f64, f64, f64, f64);

const UNPAIRED: [Unpaired; 5] = [
    (
        &[3.0, 4.0, 5.0],
        &[0.0, 1.0, 2.0],
        2.0 / 20.0,
        9.0,
        0.1,
        1.0,
        2.4000000000000004,
    ),
    (
        &[1.0, 4.0, 5.0, 7.0, 9.0],
        &[2.0, 3.0, 6.0, 8.0, 0.5],
        138.0 / 252.0,
        16.0,
        0.5476190476190477,
        0.64,
        0.38607246051064564,
    ),
    (
        &[1.0, 2.5],
        &[0.2, 0.4],
        2.0 / 6.0,
        4.0,
        0.3333333333333333,
        1.0,
        1.0950708236112916,
    ),
    (
        &[0.81, 0.79, 0.84, 0.80, 0.83, 0.78],
        &[0.77, 0.80, 0.76, 0.79, 0.75],
        21.0 / 462.0,
        26.0,
        0.05194805194805195,
        0.8666666666666667,
        1.4191502473286257,
    ),
    (
        &[1.0, 2.0, 2.0, 3.0, 4.0],
        &[2.0, 2.0, 3.0, 5.0, 5.0, 6.0],
        89.0 / 462.0,
        7.5,
        0.19913419913419914,
        0.25,
        -0.8783624894318083,
    ),
];

#[test]
fn two_sample_permutation_is_exact() {
    // Enumerated over itertools.combinations(range(N), n_a):
    // p = #{splits : |mean(A*) − mean(B*)| >= |mean(A) − mean(B)|} / C(N, n_a).
    let mut rng = Rng::new(0);
    for (a, b, p, ..) in UNPAIRED {
        let r = two_sample(a, b, &mut rng);
        close(r.p, p);
        assert_eq!(r.method, PMethod::Exact);
    }
}

#[test]
fn mann_whitney_is_exact_and_right_way_round() {
    // No ties: scipy.stats.mannwhitneyu(a, b, method='exact') (U of the first sample, p).
    // Ties (last case): enumerated over combinations of scipy.stats.rankdata(pooled) ranks,
    // p = min(1, 2·min(P(R >= r), P(R <= r))); scipy's 'exact' ignores ties there (0.2468).
    // Regression for statrs 0.19.1, which returns 0.95 / 1.0 for the 3 v 3 case.
    for (a, b, _, u, p, pg, _) in UNPAIRED {
        let r = mann_whitney(a, b);
        close(r.test.statistic, u);
        close(r.test.p, p);
        close(r.prob_a_greater, pg);
    }
    close(
        mann_whitney(&[3.0, 4.0, 5.0], &[0.0, 1.0, 2.0])
            .test
            .min_attainable,
        0.1,
    );
}

#[test]
fn hedges_g_and_d_z() {
    // g: numpy, sp = sqrt(((na-1)*a.var(ddof=1) + (nb-1)*b.var(ddof=1)) / (N-2));
    //    (a.mean() - b.mean()) / sp * (1 - 3/(4N - 9))
    for (a, b, .., g) in UNPAIRED {
        close(hedges_g(a, b), g);
    }
    // d.mean() / d.std(ddof=1)
    close(d_z(&N2), 3.0641293851417055);
    close(d_z(&N3), 1.4106912317171965);
    close(d_z(&N5), 2.0655911179772892);
    close(d_z(&N6), 1.1405318970244018);
    close(d_z(&TIES), 0.792593923901217);
}

#[test]
fn clopper_pearson_matches_scipy() {
    // scipy.stats.binomtest(k, n).proportion_ci(0.95, method='exact')
    let cases = [
        (0, 5, 0.0, 0.5218237501049814),
        (5, 5, 0.47817624989501856, 1.0),
        (3, 5, 0.14663279963467254, 0.9472550494736843),
        (1, 2, 0.01257911709367899, 0.987420882906321),
        (4, 6, 0.22277809550354957, 0.9567281317071105),
        (7, 10, 0.3475471499399921, 0.9332604888222655),
    ];
    for (k, n, lo, hi) in cases {
        let (l, h) = clopper_pearson(k, n, 0.95);
        if lo == 0.0 {
            assert_eq!(l, 0.0);
        } else {
            close(l, lo);
        }
        close(h, hi);
    }
}

#[test]
fn descriptives_match_scipy() {
    // scipy.stats.trim_mean(x, 0.25); numpy.median(x); scipy.stats.skew(x, bias=False)
    let cases: [(&[f64], f64, f64, f64); 4] = [
        (&[3.0, 1.0, 2.0], 2.0, 2.0, 0.0),
        (&[5.0, 1.0, 4.0, 2.0, 3.0], 3.0, 3.0, 0.0),
        (
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 100.0],
            5.5,
            5.5,
            3.118895745239087,
        ),
        (
            &[2.0, 9.0, 4.0, 7.0, 1.0, 8.0, 3.0],
            4.8,
            4.0,
            0.18413029860550095,
        ),
    ];
    for (x, trim, med, skew) in cases {
        close(iqm(x), trim);
        close(median_of(x), med);
        if skew == 0.0 {
            assert!(skewness(x).abs() < 1e-12);
        } else {
            close(skewness(x), skew);
        }
    }
    let d = Describe::of(&[2.0, 9.0, 4.0, 7.0, 1.0, 8.0, 3.0]);
    assert_eq!((d.n, d.min, d.max), (7, 1.0, 9.0));
    // numpy: np.std(x, ddof=1) = 3.132015933791495
    close(d.sd, 3.132015933791495);
    // np.percentile([0.3, 1.0, 2.5, 7.0, 7.5], [2.5, 50, 90, 97.5]) = [0.37, 2.5, 7.3, 7.45]
    let s = sorted(&[7.5, 0.3, 2.5, 1.0, 7.0]);
    for (q, want) in [(0.025, 0.37), (0.5, 2.5), (0.9, 7.3), (0.975, 7.45)] {
        close(quantile7(&s, q), want);
    }
}

#[test]
fn correlations_match_scipy() {
    // scipy.stats.pearsonr(x, y).statistic, scipy.stats.spearmanr(x, y).statistic
    let x = [2.0, 9.0, 4.0, 7.0, 1.0, 8.0, 3.0];
    let y = [1.5, 8.0, 5.0, 6.0, 2.0, 9.0, 2.5];
    close(pearson(&x, &y), 0.9521309773651166);
    close(spearman(&x, &y), 0.9285714285714288);
    close(
        spearman(&[1.0, 2.0, 2.0, 3.0, 5.0], &[2.0, 1.0, 3.0, 3.0, 4.0]),
        0.7631578947368421,
    );
    assert!(pearson(&[1.0, 1.0], &[2.0, 3.0]).is_nan());
}

#[test]
fn holm_by_hand() {
    // p = [0.01, 0.04, 0.03, 0.20]; sorted 0.01, 0.03, 0.04, 0.20 times 4, 3, 2, 1
    // = 0.04, 0.09, 0.08, 0.20; running max → 0.04, 0.09, 0.09, 0.20; back in input order:
    let adj = holm(&[0.01, 0.04, 0.03, 0.20]);
    for (got, want) in adj.iter().zip([0.04, 0.09, 0.09, 0.20]) {
        close(*got, want);
    }
    assert_eq!(holm(&[0.6, 0.5]), vec![1.0, 1.0]);
}

#[test]
fn large_samples_switch_method_and_stay_sane() {
    let mut rng = Rng::new(3);
    let d: Vec<f64> = (0..500).map(|i| ((i * 37) % 11) as f64 - 4.0).collect();
    let s = sign_flip(&d, &mut rng);
    assert_eq!(s.method, PMethod::Normal);
    let w = signed_rank(&d);
    assert_eq!(w.method, PMethod::Normal);
    let mc = sign_flip(&d[..60], &mut rng);
    assert!(matches!(mc.method, PMethod::MonteCarlo { .. }));
    assert!(mc.p > 0.0 && mc.p <= 1.0);
    let a: Vec<f64> = d[..250].to_vec();
    let b: Vec<f64> = d[250..].to_vec();
    let m = mann_whitney(&a, &b);
    assert_eq!(m.test.method, PMethod::Normal);
    let p = two_sample(&a, &b, &mut rng);
    assert_eq!(p.method, PMethod::Normal);
    for v in [s.p, w.p, m.test.p, p.p] {
        assert!(v > 0.0 && v <= 1.0, "{v}");
    }
}

#[test]
fn bootstrap_is_reproducible_and_brackets_the_estimate() {
    let tasks = vec![
        TaskScores {
            a: vec![0.81, 0.79, 0.84, 0.80, 0.83],
            b: vec![0.77, 0.80, 0.76, 0.79, 0.75],
        },
        TaskScores {
            a: vec![0.61, 0.66, 0.64, 0.60, 0.63],
            b: vec![0.62, 0.59, 0.58, 0.60, 0.57],
        },
    ];
    let one = stratified(&tasks, true, 2000, 7, 0.95);
    let two = stratified(&tasks, true, 2000, 7, 0.95);
    assert_eq!(one, two);
    for i in [one.iqm_a, one.iqm_b, one.iqm_diff, one.prob_improvement] {
        assert!(i.lo <= i.estimate && i.estimate <= i.hi, "{i:?}");
    }
    // Point estimates: scipy.stats.trim_mean(all ten A values, 0.25) = 0.7216666666666667;
    // P(improve) = mean over tasks of mannwhitneyu(a, b).statistic / 25 = (0.92 + 0.90) / 2.
    close(one.iqm_a.estimate, 0.7216666666666667);
    close(one.prob_improvement.estimate, 0.91);
    let other = stratified(&tasks, true, 2000, 8, 0.95);
    assert_ne!(one, other);
}

#[test]
fn large_sample_approximations_match_scipy() {
    // a = [((i*37) % 23) / 10 for i in range(35)]; b = [((i*29) % 19) / 10 + 0.2 for i in range(35)]
    // scipy.stats.mannwhitneyu(a, b, method='asymptotic', use_continuity=False)
    //   -> statistic 604.0, pvalue 0.9204018918684115 (pooled 70 > 60: normal path, tie-corrected)
    let a: Vec<f64> = (0..35).map(|i| ((i * 37) % 23) as f64 / 10.0).collect();
    let b: Vec<f64> = (0..35)
        .map(|i| ((i * 29) % 19) as f64 / 10.0 + 0.2)
        .collect();
    let m = mann_whitney(&a, &b);
    assert_eq!(m.test.method, PMethod::Normal);
    close(m.test.statistic, 604.0);
    close(m.test.p, 0.9204018918684115);
    // d = [(((i*37) % 11) - 4) * 0.5 for i in range(250)]
    // scipy.stats.wilcoxon(d, method='approx', correction=False, zero_method='wilcox')
    //   -> pvalue 3.653005428124827e-06; W+ (rankdata of |d| without zeros) = 17506.0
    let d: Vec<f64> = (0..250)
        .map(|i| (((i * 37) % 11) as f64 - 4.0) * 0.5)
        .collect();
    let w = signed_rank(&d);
    assert_eq!(w.method, PMethod::Normal);
    close(w.statistic, 17506.0);
    close(w.p, 3.653005428124827e-06);
}

#[test]
fn two_sample_monte_carlo_is_close_to_the_exact_value() {
    // 12 v 12: C(24, 12) = 2,704,156 splits, above the exact limit. Enumerated in Python over
    // itertools.combinations(range(24), 12): 4972 splits with |Δ*| >= |Δ|, p = 0.0018386513204119881.
    // 100,000 draws give a standard error of about 0.00014; allow 5 of them.
    let a = [
        0.81, 0.79, 0.84, 0.80, 0.83, 0.78, 0.82, 0.80, 0.79, 0.85, 0.81, 0.80,
    ];
    let b = [
        0.77, 0.80, 0.76, 0.79, 0.75, 0.80, 0.78, 0.79, 0.77, 0.81, 0.78, 0.76,
    ];
    let r = two_sample(&a, &b, &mut Rng::new(0));
    assert!(matches!(r.method, PMethod::MonteCarlo { .. }));
    assert!((r.p - 0.0018386513204119881).abs() < 7e-4, "{}", r.p);
}
