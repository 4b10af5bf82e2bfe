//! The `sweep-compare` report as format-neutral blocks (header lines, titled tables, verdict,
//! warnings), so the terminal table and the Markdown carry exactly the same content.

use crate::sweep::compare::{ArmStats, Comparison, PairedStats, TaskResult, UnpairedStats};
use crate::sweep::stats::{PMethod, PermP};
use mldebug_text::number::{interval, num, p_eq, pval, signed};

/// Most individual seeds shown per arm (more go to `--json`).
pub const SHOW_SEEDS_MAX: usize = 10;

/// A titled table.
#[derive(Debug, Clone)]
pub struct Block {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The report: header lines, tables, the verdict and the warnings.
#[derive(Debug, Clone)]
pub struct Report {
    pub lines: Vec<String>,
    pub blocks: Vec<Block>,
    /// "A BETTER", … and the kind for colouring.
    pub verdict_headline: String,
    pub verdict_kind: crate::sweep::verdict::VerdictKind,
    pub verdict_reason: String,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

fn s(x: impl Into<String>) -> String {
    x.into()
}

fn method_note(p: &PermP) -> String {
    match p.method {
        PMethod::Exact => format!("min attainable {}", pval(p.min_attainable)),
        PMethod::MonteCarlo { resamples } => format!("Monte Carlo, {resamples} draws"),
        PMethod::Normal => s("normal approximation (large n)"),
    }
}

/// Build the report of a comparison.
pub fn build(c: &Comparison) -> Report {
    let failed = c.runs.iter().filter(|r| r.failed).count();
    let used = c.runs.iter().filter(|r| r.arm.is_some()).count();
    let ignored = c.runs.len() - used;
    let dir = if c.direction.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    };
    let mut lines = vec![
        format!(
            "sweep-compare  metric={} ({dir}; {})  reduce={}  files={} runs={}{} failed={failed}",
            c.metric,
            c.direction.how,
            c.reduction,
            c.files,
            used,
            if ignored > 0 {
                format!(" (+{ignored} outside both arms, ignored)")
            } else {
                String::new()
            },
        ),
        format!(
            "arms: A={} ({})  B={} ({})  — {}",
            c.arms.a,
            c.runs.iter().filter(|r| r.arm == Some("A")).count(),
            c.arms.b,
            c.runs.iter().filter(|r| r.arm == Some("B")).count(),
            c.arms.how
        ),
    ];
    let mut blocks = Vec::new();
    let mut notes = Vec::new();
    if c.multi_task() {
        multi_task(c, &mut lines, &mut blocks, &mut notes);
    } else {
        single_task(&c.tasks[0], c, &mut lines, &mut blocks, &mut notes);
    }
    let mut warnings: Vec<String> = Vec::new();
    for t in &c.tasks {
        for w in &t.warnings {
            warnings.push(match &t.task {
                Some(name) if c.multi_task() => format!("[{name}] {}", w.message),
                _ => w.message.clone(),
            });
        }
    }
    warnings.extend(c.warnings.iter().map(|w| w.message.clone()));
    Report {
        lines,
        blocks,
        verdict_headline: c.verdict.headline.to_string(),
        verdict_kind: c.verdict.kind,
        verdict_reason: c.verdict.reason.clone(),
        warnings,
        notes,
    }
}

fn design_line(t: &TaskResult) -> String {
    match &t.paired {
        Some(p) => {
            let keys: Vec<&str> = p.pairs.iter().map(|x| x.key.as_str()).collect();
            let shown = if keys.len() <= SHOW_SEEDS_MAX {
                format!("{{{}}}", keys.join(","))
            } else {
                format!("({} values)", keys.len())
            };
            let eff = p
                .effective_seeds
                .map(|e| format!("  effective seeds {}", num(e)))
                .unwrap_or_default();
            format!(
                "design: PAIRED by {} {shown}  r={} ρ={} (var. ratio {}){eff}",
                p.key,
                num(p.pearson_r),
                num(p.spearman_rho),
                num(p.variance_ratio)
            )
        }
        None => format!("design: UNPAIRED — {}", t.design),
    }
}

fn arms_block(t: &TaskResult) -> Block {
    let show = |a: &ArmStats| a.values.len() <= SHOW_SEEDS_MAX;
    let mut rows = Vec::new();
    for (label, a) in [("A", &t.a), ("B", &t.b)] {
        let mut row = vec![s(label), a.name.clone(), a.values.len().to_string()];
        match &a.describe {
            Some(d) => {
                row.extend([
                    num(d.mean),
                    num(d.sd),
                    num(d.median),
                    if d.n < 4 { s("= mean") } else { num(d.iqm) },
                    num(d.min),
                    num(d.max),
                ]);
            }
            None => row.extend(std::iter::repeat_n(s("—"), 6)),
        }
        row.push(if show(a) {
            a.values
                .iter()
                .map(|v| num(v.2))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            format!("({} runs; see --json)", a.values.len())
        });
        row.push(if a.failed.is_empty() {
            s("0")
        } else {
            format!("{} ({})", a.failed.len(), a.failed.join(", "))
        });
        rows.push(row);
    }
    Block {
        title: s("arms"),
        header: [
            "arm",
            "name",
            "n",
            "mean",
            "sd",
            "median",
            "IQM",
            "min",
            "max",
            "runs (seed order)",
            "failed",
        ]
        .map(s)
        .to_vec(),
        rows,
    }
}

fn pairs_block(p: &PairedStats) -> Option<Block> {
    (p.pairs.len() <= SHOW_SEEDS_MAX).then(|| Block {
        title: s("pairs"),
        header: vec![p.key.clone(), s("A"), s("B"), s("A−B")],
        rows: p
            .pairs
            .iter()
            .map(|x| vec![x.key.clone(), num(x.a), num(x.b), signed(x.diff)])
            .collect(),
    })
}

fn power_row(t: &TaskResult, c: &Comparison, have: usize) -> Vec<String> {
    let pw = t.power.as_ref().expect("analysed");
    let observed = match pw.seeds_for_observed {
        Some(n) => format!("{n} {}", pw.unit),
        None => s("— (Δ = 0 or beyond reach)"),
    };
    let mut tail = format!("seeds for observed Δ: {observed} (have {have})");
    if let (Some(target), Some(n)) = (pw.target, pw.seeds_for_target) {
        tail.push_str(&format!("; for Δ={}: {n}", num(target)));
    }
    vec![
        format!("MDE (80% power, α={})", num(c.alpha)),
        format!(
            "{} (conservative σ: {})",
            num(pw.mde),
            num(pw.mde_conservative)
        ),
        tail,
    ]
}

fn paired_block(p: &PairedStats, t: &TaskResult, c: &Comparison) -> Block {
    let n = p.pairs.len();
    let mut rows = vec![
        vec![
            s("mean difference"),
            signed(p.t.estimate),
            format!("{}  (t, df={})", interval(p.t.ci.0, p.t.ci.1), num(p.t.df)),
        ],
        vec![s("paired t-test"), format!("t={}", num(p.t.t)), p_eq(p.t.p)],
        vec![
            s("exact sign-flip permutation"),
            s(""),
            format!("{}  ({})", p_eq(p.sign_flip.p), method_note(&p.sign_flip)),
        ],
        vec![
            s("Wilcoxon signed-rank"),
            format!("W+={}", num(p.wilcoxon.statistic)),
            format!("{}  ({})", p_eq(p.wilcoxon.p), method_note(&p.wilcoxon)),
        ],
        vec![
            s("wins / ties / losses"),
            format!("{} / {} / {}", p.wins, p.ties, p.losses),
            format!(
                "P(A_i better)={} {}",
                num(p.prob_a_better),
                interval_plain(p.prob_a_better_ci)
            ),
        ],
        vec![
            s("effect size d_z"),
            num(p.d_z),
            format!("relative {}% of |mean B|", signed(p.relative * 100.0)),
        ],
        vec![
            s("Welch (ignoring pairing)"),
            format!("t={}", num(p.welch.t)),
            format!("{}  (df={})", p_eq(p.welch.p), num(p.welch.df)),
        ],
        power_row(t, c, n),
    ];
    tost_row(t, &mut rows);
    Block {
        title: s("A − B (paired)"),
        header: ["", "value", "95% CI / p"].map(s).to_vec(),
        rows,
    }
}

fn interval_plain((lo, hi): (f64, f64)) -> String {
    format!("[{}, {}]", num(lo), num(hi))
}

fn tost_row(t: &TaskResult, rows: &mut Vec<Vec<String>>) {
    if let Some(e) = &t.tost {
        rows.push(vec![
            format!("equivalence (TOST, ±{})", num(e.margin)),
            if e.equivalent {
                s("equivalent")
            } else {
                s("not shown")
            },
            format!("90% CI {}", interval(e.ci90.0, e.ci90.1)),
        ]);
    }
}

fn unpaired_block(u: &UnpairedStats, t: &TaskResult, c: &Comparison) -> Block {
    let have = t.a.values.len().min(t.b.values.len());
    let mut rows = vec![
        vec![
            s("mean difference"),
            signed(u.welch.estimate),
            format!(
                "{}  (Welch, df={})",
                interval(u.welch.ci.0, u.welch.ci.1),
                num(u.welch.df)
            ),
        ],
        vec![
            s("Welch t-test"),
            format!("t={}", num(u.welch.t)),
            p_eq(u.welch.p),
        ],
        vec![
            s("exact permutation"),
            s(""),
            format!(
                "{}  ({})",
                p_eq(u.permutation.p),
                method_note(&u.permutation)
            ),
        ],
        vec![
            s("Mann-Whitney U"),
            format!("U={}", num(u.mann_whitney.test.statistic)),
            format!(
                "{}  ({})",
                p_eq(u.mann_whitney.test.p),
                method_note(&u.mann_whitney.test)
            ),
        ],
        vec![
            s("P(A better than B)"),
            num(u.prob_a_better),
            s("U/(n_A·n_B), ties ½"),
        ],
        vec![
            s("effect size Hedges' g"),
            num(u.hedges_g),
            format!("relative {}% of |mean B|", signed(u.relative * 100.0)),
        ],
        power_row(t, c, have),
    ];
    tost_row(t, &mut rows);
    Block {
        title: s("A − B (unpaired)"),
        header: ["", "value", "95% CI / p"].map(s).to_vec(),
        rows,
    }
}

fn single_task(
    t: &TaskResult,
    c: &Comparison,
    lines: &mut Vec<String>,
    blocks: &mut Vec<Block>,
    notes: &mut Vec<String>,
) {
    if t.power.is_some() {
        lines.push(design_line(t));
    }
    blocks.push(arms_block(t));
    if let Some(p) = &t.paired {
        blocks.extend(pairs_block(p));
        blocks.push(paired_block(p, t, c));
        if !p.unmatched.is_empty() {
            notes.push(format!("left out, no partner: {}", p.unmatched.join(", ")));
        }
        if !p.dropped_failed.is_empty() {
            notes.push(format!(
                "pairs left out because a run failed: {}",
                p.dropped_failed.join(", ")
            ));
        }
    } else if let Some(u) = &t.unpaired {
        blocks.push(unpaired_block(u, t, c));
    }
}

fn multi_task(
    c: &Comparison,
    lines: &mut Vec<String>,
    blocks: &mut Vec<Block>,
    notes: &mut Vec<String>,
) {
    lines.push(format!(
        "tasks: {}  (per-task verdicts use Holm-adjusted p-values)",
        c.tasks.len()
    ));
    let mut rows = Vec::new();
    for t in &c.tasks {
        let mean = |a: &ArmStats| {
            a.describe
                .as_ref()
                .map(|d| num(d.mean))
                .unwrap_or_else(|| s("—"))
        };
        let mut row = vec![
            t.task.clone().unwrap_or_default(),
            format!("{}/{}", t.a.values.len(), t.b.values.len()),
            mean(&t.a),
            mean(&t.b),
        ];
        let stats = match (&t.paired, &t.unpaired) {
            (Some(p), _) => Some((s("paired"), p.t, p.sign_flip)),
            (None, Some(u)) => Some((s("unpaired"), u.welch, u.permutation)),
            _ => None,
        };
        match stats {
            Some((design, tt, robust)) => row.extend([
                design,
                signed(tt.estimate),
                interval(tt.ci.0, tt.ci.1),
                pval(tt.p),
                t.holm_primary_p.map(pval).unwrap_or_default(),
                pval(robust.p),
                t.holm_robust_p.map(pval).unwrap_or_default(),
            ]),
            None => row.extend(std::iter::repeat_n(s("—"), 7)),
        }
        row.push(t.verdict.headline.to_string());
        rows.push(row);
    }
    blocks.push(Block {
        title: s("per task"),
        header: [
            "task",
            "n A/B",
            "mean A",
            "mean B",
            "design",
            "Δ",
            "95% CI",
            "p",
            "Holm p",
            "exact p",
            "Holm exact p",
            "verdict",
        ]
        .map(s)
        .to_vec(),
        rows,
    });
    if let Some(a) = &c.aggregates {
        let ci = |i: &crate::sweep::stats::bootstrap::Interval| interval_plain((i.lo, i.hi));
        let cis = |i: &crate::sweep::stats::bootstrap::Interval| interval(i.lo, i.hi);
        blocks.push(Block {
            title: format!(
                "aggregates over tasks (stratified bootstrap, {} resamples, rng seed {}, 95% percentile intervals)",
                a.reps, a.rng_seed
            ),
            header: ["", "estimate", "95% CI"].map(s).to_vec(),
            rows: vec![
                vec![s("IQM A"), num(a.iqm_a.estimate), ci(&a.iqm_a)],
                vec![s("IQM B"), num(a.iqm_b.estimate), ci(&a.iqm_b)],
                vec![s("IQM A − IQM B"), signed(a.iqm_diff.estimate), cis(&a.iqm_diff)],
                vec![s("P(A better), mean over tasks"), num(a.prob_improvement.estimate), ci(&a.prob_improvement)],
            ],
        });
        notes.push(s(
            "IQM over tasks assumes the tasks share a scale; percentile bootstrap intervals are optimistic at few seeds, so the verdict rests on the per-task tests.",
        ));
    }
    for t in &c.tasks {
        if let (Some(name), Some(p)) = (&t.task, &t.paired) {
            if !p.unmatched.is_empty() {
                notes.push(format!(
                    "[{name}] left out, no partner: {}",
                    p.unmatched.join(", ")
                ));
            }
        }
    }
}
