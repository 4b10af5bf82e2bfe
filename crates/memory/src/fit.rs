//! Does it fit: each GPU target with the headroom left, the largest batch and context that fit,
//! and the levers that would save the most.
//!
//! A setup fits a GPU when what the device must hold (the estimate's `on_device`: peak, the
//! allocator's slack and the CUDA context) is within the GPU's memory less the headroom kept
//! free for evaluation and caching (refs/memory.md, "Headroom"; [`DEFAULT_HEADROOM`] is
//! mldebug's own default, not a published figure).

use crate::architecture::Shape;
use crate::estimate::{estimate, Estimate};
use crate::setup::{Attention, Method, Optimizer, Quant, Setup, Shard};
use serde::Serialize;

/// Share of the GPU kept free by default.
pub const DEFAULT_HEADROOM: f64 = 0.10;
/// The largest micro-batch searched.
pub const MAX_BATCH: u64 = 65_536;
/// The longest context searched (when the model gives none).
pub const MAX_SEQ: u64 = 1_048_576;

/// A GPU model and its memory, as on its spec sheet (GiB).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Gpu {
    /// The name `--gpu` takes (`a100-80`).
    pub name: &'static str,
    /// Its memory in bytes.
    pub bytes: f64,
}

const GIB: f64 = 1073741824.0;

/// The GPUs `--gpu` knows, smallest first.
pub const GPUS: [Gpu; 9] = [
    Gpu {
        name: "t4",
        bytes: 16.0 * GIB,
    },
    Gpu {
        name: "l4",
        bytes: 24.0 * GIB,
    },
    Gpu {
        name: "a10",
        bytes: 24.0 * GIB,
    },
    Gpu {
        name: "3090",
        bytes: 24.0 * GIB,
    },
    Gpu {
        name: "4090",
        bytes: 24.0 * GIB,
    },
    Gpu {
        name: "a100-40",
        bytes: 40.0 * GIB,
    },
    Gpu {
        name: "a100-80",
        bytes: 80.0 * GIB,
    },
    Gpu {
        name: "h100",
        bytes: 80.0 * GIB,
    },
    Gpu {
        name: "h200",
        bytes: 141.0 * GIB,
    },
];

/// The GPU called `name`, or an error listing them.
pub fn gpu(name: &str) -> Result<Gpu, String> {
    GPUS.iter()
        .copied()
        .find(|g| g.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = GPUS.iter().map(|g| g.name).collect();
            format!(
                "unknown GPU `{}`; expected one of {} (or give --gpu-memory, e.g. 24GB)",
                name.escape_debug(),
                names.join(", ")
            )
        })
}

/// The verdict for one target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetFit {
    /// The GPU (or `--gpu-memory`) as the table names it.
    pub gpu: String,
    /// Its memory in bytes.
    pub memory: f64,
    /// What the device must hold.
    pub needs: f64,
    /// `needs` fits within the memory less the headroom.
    pub fits: bool,
    /// Memory left after `needs` (negative: short by that much).
    pub left: f64,
    /// The largest micro-batch at this context that fits (0: not even 1).
    pub max_batch: u64,
    /// The longest context at this batch that fits (0: not even 1 token).
    pub max_seq: u64,
}

/// Whether `e` fits `memory` with `headroom` kept free.
pub fn fits(e: &Estimate, memory: f64, headroom: f64) -> bool {
    e.on_device <= memory * (1.0 - headroom)
}

/// The verdict for each target.
pub fn targets(
    shape: &Shape,
    setup: &Setup,
    e: &Estimate,
    gpus: &[Gpu],
    headroom: f64,
) -> Vec<TargetFit> {
    gpus.iter()
        .map(|g| TargetFit {
            gpu: g.name.to_string(),
            memory: g.bytes,
            needs: e.on_device,
            fits: fits(e, g.bytes, headroom),
            left: g.bytes - e.on_device,
            max_batch: largest(1, MAX_BATCH, |b| {
                fits_with(shape, setup, g.bytes, headroom, |s| s.batch = b)
            }),
            max_seq: largest(1, seq_limit(shape), |n| {
                fits_with(shape, setup, g.bytes, headroom, |s| s.seq = n)
            }),
        })
        .collect()
}

/// The longest context searched: the model's own limit when it has one.
pub fn seq_limit(shape: &Shape) -> u64 {
    if shape.max_positions > 0 {
        shape.max_positions
    } else {
        MAX_SEQ
    }
}

fn fits_with(
    shape: &Shape,
    setup: &Setup,
    memory: f64,
    headroom: f64,
    change: impl Fn(&mut Setup),
) -> bool {
    let mut s = setup.clone();
    change(&mut s);
    estimate(shape, &s).is_ok_and(|e| fits(&e, memory, headroom))
}

/// The largest `n` in `lo..=hi` with `ok(n)`, for `ok` true up to a point and false after it;
/// 0 when `ok(lo)` is false.
fn largest(lo: u64, hi: u64, ok: impl Fn(u64) -> bool) -> u64 {
    if !ok(lo) {
        return 0;
    }
    let (mut good, mut bad) = (lo, hi + 1);
    if ok(hi) {
        return hi;
    }
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if ok(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    good
}

/// One change to the setup and what it saves at the peak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lever {
    /// The change, in words.
    pub lever: String,
    /// The flags that make the change.
    pub flags: String,
    /// Bytes it saves at the peak.
    pub saves: f64,
    /// The peak after it.
    pub peak_after: f64,
}

/// The changes that lower the peak, most bytes saved first.
pub fn levers(shape: &Shape, setup: &Setup, e: &Estimate) -> Vec<Lever> {
    let mut options: Vec<(String, String, Setup)> = Vec::new();
    let mut add = |lever: &str, flags: String, change: &dyn Fn(&mut Setup)| {
        let mut s = setup.clone();
        change(&mut s);
        options.push((lever.to_string(), flags, s));
    };
    if !setup.grad_checkpointing {
        add(
            "gradient checkpointing",
            "--grad-checkpointing".into(),
            &|s| s.grad_checkpointing = true,
        );
    }
    if setup.method == Method::Full {
        add(
            "LoRA instead of full training",
            "--method lora".into(),
            &|s| s.method = Method::Lora,
        );
    }
    if setup.quant == Quant::None {
        add(
            "QLoRA: base in 4 bits",
            "--method qlora --quant nf4".into(),
            &|s| {
                s.method = Method::Qlora;
                s.quant = Quant::Nf4;
            },
        );
    }
    if matches!(setup.optimizer, Optimizer::AdamW | Optimizer::PagedAdamW) {
        add("8-bit AdamW", "--optimizer adamw-8bit".into(), &|s| {
            s.optimizer = Optimizer::AdamW8bit
        });
    }
    if setup.attention == Attention::Eager {
        add(
            "fused attention (no score matrix)",
            "--attention sdpa".into(),
            &|s| s.attention = Attention::Sdpa,
        );
    }
    if setup.seq > 1 {
        let half = setup.seq / 2;
        add("half the context", format!("--seq {half}"), &|s| {
            s.seq = half
        });
    }
    if setup.batch > 1 {
        let (half, accum) = (setup.batch / 2, setup.grad_accum * 2);
        add(
            "half the batch, twice the accumulation",
            format!("--batch {half} --grad-accum {accum}"),
            &|s| {
                s.batch = half;
                s.grad_accum = accum;
            },
        );
    }
    if setup.gpus > 1 && !matches!(setup.shard, Shard::Zero3 | Shard::Fsdp) {
        add(
            "shard everything over the GPUs",
            "--shard zero3".into(),
            &|s| s.shard = Shard::Zero3,
        );
    }
    let mut out: Vec<Lever> = options
        .into_iter()
        .filter_map(|(lever, flags, s)| {
            let s = s.validate().ok()?;
            let after = estimate(shape, &s).ok()?;
            let saves = e.peak - after.peak;
            (saves > 0.0).then_some(Lever {
                lever,
                flags,
                saves,
                peak_after: after.peak,
            })
        })
        .collect();
    out.sort_by(|a, b| b.saves.total_cmp(&a.saves));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_finds_the_edge() {
        assert_eq!(largest(1, 100, |n| n <= 37), 37);
        assert_eq!(largest(1, 100, |_| true), 100);
        assert_eq!(largest(1, 100, |_| false), 0);
        assert_eq!(largest(1, 1, |n| n == 1), 1);
    }

    #[test]
    fn unknown_gpus_are_named() {
        assert_eq!(gpu("h100").unwrap().bytes, 80.0 * GIB);
        assert!(gpu("v100").unwrap_err().contains("t4, l4, a10"));
    }
}
