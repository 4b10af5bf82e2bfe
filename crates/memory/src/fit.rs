//! Does it fit: each GPU target with the headroom left, the largest batch and context that fit,
//! and the levers that would save the most.
//!
//! A setup fits a GPU when what the device must hold (the estimate's `on_device`: peak, the
//! allocator's slack and the CUDA context) is within the GPU's memory less the headroom kept
//! free for evaluation and caching (refs/memory.md, "Headroom"; [`DEFAULT_HEADROOM`] is
//! mldebug's own default, not a published figure).
//!
//! A GPU's memory is the total CUDA reports for the card (`totalGlobalMem`, PyTorch's
//! `total_memory`), taken from a public report that printed it ([`GPUS`], [`Reported`]), not the
//! size it is sold with: a T4 sold with 16 GB gives CUDA 14.58 GiB.

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

/// A GPU and the memory the estimate is held against.
///
/// For a card `--gpu` knows, `bytes` is the total CUDA reports for it
/// (`cudaGetDeviceProperties` `totalGlobalMem`, which is what PyTorch's
/// `get_device_properties(0).total_memory` and its out-of-memory message's "total capacity"
/// give), as one public report printed it ([`Reported`]). That is less than the size the card is
/// sold with, and less than `nvidia-smi`'s total, which counts memory the driver keeps for itself.
/// For `--gpu-memory`, `bytes` is the size given and there is no report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Gpu {
    /// The name `--gpu` takes (`a100-80`).
    pub name: &'static str,
    /// Its memory in bytes: CUDA's total for a known card, the given size for `--gpu-memory`.
    pub bytes: f64,
    /// Where a known card's total comes from; `None` for `--gpu-memory`.
    pub reported: Option<Reported>,
}

/// One public report of a card's total as CUDA gives it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Reported {
    /// The card as the report names it (`Tesla T4`, `NVIDIA A100-SXM4-40GB`).
    pub device: &'static str,
    /// The memory it is sold with, in the maker's GB (`16`).
    pub sold_gb: u32,
    /// The total as the report prints it: `15655829504 bytes` (CUDA's deviceQuery sample) or
    /// `21.99 GiB` (PyTorch's "total capacity", to two decimals). [`Gpu::bytes`] is this figure.
    pub total: &'static str,
    /// The report: a public issue or pull request with the output pasted.
    pub url: &'static str,
}

const GIB: f64 = 1073741824.0;

/// A card `--gpu` knows: its CUDA total as `report` prints it, in bytes.
const fn card(
    name: &'static str,
    bytes: f64,
    device: &'static str,
    sold_gb: u32,
    total: &'static str,
    url: &'static str,
) -> Gpu {
    Gpu {
        name,
        bytes,
        reported: Some(Reported {
            device,
            sold_gb,
            total,
            url,
        }),
    }
}

/// The GPUs `--gpu` knows, smallest CUDA total first. Each total is the one a public report
/// printed (refs/memory.md, "The GPU table"); totals move by some hundreds of MiB with the
/// driver, so a close fit is worth checking with `--gpu-memory` and the device's own total. The
/// H200 is left out: no public report of its CUDA total was found.
pub const GPUS: [Gpu; 8] = [
    card(
        "t4",
        15_655_829_504.0,
        "Tesla T4",
        16,
        "15655829504 bytes",
        "https://github.com/bottlerocket-os/bottlerocket/pull/3798",
    ),
    card(
        "l4",
        23_583_784_960.0,
        "NVIDIA L4",
        24,
        "23583784960 bytes",
        "https://github.com/bottlerocket-os/bottlerocket-kernel-kit/pull/139",
    ),
    card(
        "a10",
        21.99 * GIB,
        "A10 (a Lambda instance)",
        24,
        "21.99 GiB",
        "https://github.com/zai-org/CogVLM/issues/236",
    ),
    card(
        "4090",
        23.64 * GIB,
        "RTX 4090",
        24,
        "23.64 GiB",
        "https://github.com/3DTopia/Phidias-Diffusion/issues/8",
    ),
    card(
        "3090",
        23.70 * GIB,
        "RTX 3090",
        24,
        "23.70 GiB",
        "https://github.com/xiaoxiangAQ/GAS-Net/issues/7",
    ),
    card(
        "a100-40",
        42_298_834_944.0,
        "NVIDIA A100-SXM4-40GB",
        40,
        "42298834944 bytes",
        "https://github.com/bottlerocket-os/bottlerocket/pull/3873",
    ),
    card(
        "h100",
        79.11 * GIB,
        "H100 (80 GB)",
        80,
        "79.11 GiB",
        "https://github.com/vllm-project/vllm/issues/27508",
    ),
    card(
        "a100-80",
        79.25 * GIB,
        "A100 (80 GB)",
        80,
        "79.25 GiB",
        "https://github.com/HiDream-ai/VAREdit/issues/6",
    ),
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
    /// Its memory in bytes: CUDA's total for a known card ([`Gpu::bytes`]).
    pub memory: f64,
    /// Where a known card's total comes from; `None` for `--gpu-memory`.
    pub reported: Option<Reported>,
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
            reported: g.reported,
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
        assert_eq!(gpu("h100").unwrap().bytes, 79.11 * GIB);
        assert!(gpu("v100").unwrap_err().contains("t4, l4, a10"));
        assert!(gpu("h200").is_err(), "no public CUDA total for the H200");
    }

    /// A reported total is at least this share of the size the card is sold with (in GiB): ECC
    /// on GDDR6 keeps 1/16 and the driver some hundreds of MiB, so a total further below is a
    /// typo (14.58 written 1.458, or MiB read as GB).
    const LEAST_SHARE_OF_SOLD: f64 = 0.85;

    /// The total as a report prints it, in bytes: `N bytes`, `N MiB` or `N GiB`.
    fn printed(total: &str) -> f64 {
        let (number, unit) = total.split_once(' ').unwrap();
        let scale = match unit {
            "bytes" => 1.0,
            "MiB" => 1048576.0,
            "GiB" => GIB,
            other => panic!("unit {other:?} in {total:?}"),
        };
        number.parse::<f64>().unwrap() * scale
    }

    #[test]
    fn each_gpu_is_its_reported_cuda_total_not_its_sold_size() {
        for g in GPUS {
            let r = g.reported.expect("every known card names its report");
            assert_eq!(
                g.bytes,
                printed(r.total),
                "{}: bytes vs {:?}",
                g.name,
                r.total
            );
            let sold = f64::from(r.sold_gb) * GIB;
            assert!(
                g.bytes < sold,
                "{} is its sold size, not CUDA's total",
                g.name
            );
            assert!(
                g.bytes > LEAST_SHARE_OF_SOLD * sold,
                "{}: {} is implausibly far below {} GB",
                g.name,
                r.total,
                r.sold_gb
            );
            assert!(r.url.starts_with("https://github.com/"), "{}", r.url);
            assert!(!r.device.is_empty());
        }
    }

    #[test]
    fn the_list_is_smallest_first_with_distinct_names() {
        assert!(GPUS.windows(2).all(|w| w[0].bytes <= w[1].bytes));
        let mut names: Vec<&str> = GPUS.iter().map(|g| g.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), GPUS.len());
    }

    fn small() -> Shape {
        Shape::llama_style(2, 64, 128, 4, 4, 256)
    }

    /// An estimate whose device total is `on_device` bytes (the rest as for a small model).
    fn needing(on_device: f64) -> Estimate {
        let mut e = estimate(&small(), &Setup::default()).unwrap();
        e.on_device = on_device;
        e
    }

    #[test]
    fn a_setup_between_cudas_total_and_the_sold_size_does_not_fit() {
        let t4 = gpu("t4").unwrap();
        // 15.5 GiB: under the 16 GiB a spec-sheet table would read, over the 14.58 GiB CUDA has.
        let e = needing(15.5 * GIB);
        assert!(
            fits(&e, 16.0 * GIB, 0.0),
            "the spec-sheet size would say it fits"
        );
        assert!(!fits(&e, t4.bytes, 0.0));
        // With the default headroom: 13.5 GiB is within 90% of 16 GiB, not of 14.58 GiB.
        let e = needing(13.5 * GIB);
        assert!(fits(&e, 16.0 * GIB, DEFAULT_HEADROOM));
        assert!(!fits(&e, t4.bytes, DEFAULT_HEADROOM));
        let verdict = targets(&small(), &Setup::default(), &e, &[t4], DEFAULT_HEADROOM);
        assert!(!verdict[0].fits);
        assert_eq!(verdict[0].memory, t4.bytes);
        assert_eq!(verdict[0].reported, t4.reported);
    }
}
