//! Metric-name and config-key recognition, in one place: which logged series is the training
//! loss, the validation loss, the learning rate, the gradient norm, throughput, step time or
//! memory, whatever the framework called it (`loss`, `train/loss`, `train_loss_step`,
//! `val_loss`, `eval/loss`, `learning_rate`, `lr-AdamW`, `grad_norm`,
//! `train_samples_per_second`, `step_time`, `memory_allocated`, …).
//!
//! Names are split into lower-case words at `_ / . - :` and spaces, and a role is decided by the
//! words present. A name no rule recognises is [`Role::Other`]: shown, never judged.

use serde::Serialize;

/// What a logged series measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The training loss.
    TrainLoss,
    /// An evaluation or validation loss.
    EvalLoss,
    /// The learning rate.
    LearningRate,
    /// The gradient norm (before clipping when both are logged).
    GradNorm,
    /// Samples, tokens or iterations per second: higher is better.
    Throughput,
    /// Seconds per step or batch: lower is better.
    StepTime,
    /// Memory allocated or reserved.
    Memory,
    /// The epoch counter.
    Epoch,
    /// Anything else (not judged).
    Other,
}

impl Role {
    /// The name shown in tables.
    pub fn label(self) -> &'static str {
        match self {
            Role::TrainLoss => "train loss",
            Role::EvalLoss => "eval loss",
            Role::LearningRate => "learning rate",
            Role::GradNorm => "grad norm",
            Role::Throughput => "throughput",
            Role::StepTime => "step time",
            Role::Memory => "memory",
            Role::Epoch => "epoch",
            Role::Other => "other",
        }
    }
}

/// Words that mark a series as measured on held-out data.
const EVAL_WORDS: [&str; 7] = [
    "eval",
    "val",
    "valid",
    "validation",
    "test",
    "dev",
    "evaluation",
];

/// Words of a loss that is not the objective being trained (the AMP loss scale).
const NOT_A_LOSS: [&str; 2] = ["scale", "scaler"];

/// Words naming memory.
const MEMORY_WORDS: [&str; 7] = [
    "memory",
    "mem",
    "rss",
    "vram",
    "allocated",
    "reserved",
    "gpumem",
];

/// Words naming a rate.
const RATE_WORDS: [&str; 5] = ["throughput", "ips", "sps", "tps", "fps"];

/// Units written as two words: `it/s`, `samples/s`, `tokens/s`.
const RATE_UNITS: [&str; 5] = ["it", "samples", "tokens", "examples", "steps"];

/// The names of the one training loss to judge when several are logged, best first: the
/// objective itself rather than an auxiliary term or a per-epoch mean.
const CORE_TRAIN_LOSSES: [&str; 8] = [
    "loss",
    "train_loss",
    "train_loss_step",
    "training_loss",
    "loss_step",
    "train_loss_total",
    "train_epoch_loss",
    "train_loss_epoch",
];

/// Config keys that hold the configured peak learning rate.
pub const LR_KEYS: [&str; 5] = [
    "learning_rate",
    "lr",
    "optimizer.lr",
    "optim.lr",
    "optimizer.learning_rate",
];
/// Config keys that name the learning-rate schedule.
pub const SCHEDULER_KEYS: [&str; 5] = [
    "lr_scheduler_type",
    "lr_scheduler",
    "scheduler",
    "schedule",
    "scheduler.name",
];
/// Config keys that name the optimizer.
pub const OPTIMIZER_KEYS: [&str; 4] = ["optim", "optimizer", "optimizer.name", "optimizer_type"];
/// Config keys that give warmup, in steps or as a share of training.
pub const WARMUP_KEYS: [&str; 3] = ["warmup_steps", "warmup_ratio", "warmup"];
/// Config keys that give the gradient-clipping threshold.
pub const MAX_GRAD_NORM_KEYS: [&str; 4] = [
    "max_grad_norm",
    "gradient_clip_val",
    "clip_grad_norm",
    "grad_clip",
];
/// Config keys that hold the seed (left out when deciding whether two runs share a config).
pub const SEED_KEYS: [&str; 3] = ["seed", "random_seed", "data_seed"];
/// Config keys that differ between runs of one config without changing the training.
pub const RUN_SPECIFIC_KEYS: [&str; 6] = [
    "output_dir",
    "logging_dir",
    "run_name",
    "name",
    "run_id",
    "version",
];

/// Schedules that lower the learning rate as training goes on.
const DECAYING_SCHEDULES: [&str; 9] = [
    "linear",
    "cosine",
    "cosine_with_restarts",
    "polynomial",
    "inverse_sqrt",
    "exponential",
    "step",
    "onecycle",
    "cosine_with_min_lr",
];
/// Schedules that restart on purpose.
const RESTARTING_SCHEDULES: [&str; 3] = ["cosine_with_restarts", "sgdr", "cosinewarmrestarts"];

/// The lower-case words of a metric name.
pub fn words(name: &str) -> Vec<String> {
    name.to_ascii_lowercase()
        .split(['_', '/', '.', '-', ':', ' ', '|'])
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The series counts bytes: its name says so (`memory_bytes`, `allocated_bytes`).
pub fn in_bytes(name: &str) -> bool {
    words(name).iter().any(|w| w == "bytes")
}

/// The name's words joined by `_` (`train/loss` → `train_loss`).
pub fn normalised(name: &str) -> String {
    words(name).join("_")
}

/// The role of a series with this name.
pub fn role(name: &str) -> Role {
    let w = words(name);
    let has = |x: &str| w.iter().any(|y| y == x);
    let joined = w.join("_");
    let eval = w.iter().any(|x| EVAL_WORDS.contains(&x.as_str()));
    if joined == "epoch" {
        return Role::Epoch;
    }
    if has("grad") || has("gradient") || has("grads") {
        return if has("norm") || has("total") {
            Role::GradNorm
        } else {
            Role::Other
        };
    }
    if joined == "total_norm" {
        return Role::GradNorm;
    }
    if has("lr") || joined.contains("learning_rate") {
        return Role::LearningRate;
    }
    if has("loss") || has("nll") {
        return if w.iter().any(|x| NOT_A_LOSS.contains(&x.as_str())) {
            Role::Other
        } else if eval {
            Role::EvalLoss
        } else {
            Role::TrainLoss
        };
    }
    if eval || has("runtime") {
        // Evaluation speed and memory say nothing about the training loop.
        return Role::Other;
    }
    if w.iter().any(|x| MEMORY_WORDS.contains(&x.as_str())) || joined.contains("memory") {
        return Role::Memory;
    }
    let per_second = has("per") && (has("second") || has("sec") || has("s"));
    let unit_per_s = w
        .windows(2)
        .any(|p| RATE_UNITS.contains(&p[0].as_str()) && p[1] == "s");
    if per_second || unit_per_s || w.iter().any(|x| RATE_WORDS.contains(&x.as_str())) {
        return Role::Throughput;
    }
    if has("time") && (has("step") || has("iter") || has("batch") || has("data")) {
        return Role::StepTime;
    }
    Role::Other
}

/// Whether a name says it was measured on held-out data (`val_ce`, `eval/accuracy`).
pub fn is_eval(name: &str) -> bool {
    words(name).iter().any(|x| EVAL_WORDS.contains(&x.as_str()))
}

/// The rank of a training-loss name when choosing the one to judge (lower is preferred).
pub fn train_loss_rank(name: &str) -> usize {
    let n = normalised(name);
    CORE_TRAIN_LOSSES
        .iter()
        .position(|c| *c == n)
        .unwrap_or(CORE_TRAIN_LOSSES.len())
}

/// Whether a configured optimizer name is of the Adam family (Adam, AdamW, fused and 8-bit
/// variants, Adafactor's relatives excluded).
pub fn is_adam_family(optimizer: &str) -> bool {
    let o = optimizer.to_ascii_lowercase();
    o.contains("adam") || o.contains("lamb") || o.contains("lion")
}

/// Whether a configured schedule name lowers the learning rate over training.
pub fn schedule_decays(schedule: &str) -> bool {
    let s = normalised(schedule);
    DECAYING_SCHEDULES.iter().any(|d| s.contains(d)) || s.contains("cosine") || s.contains("decay")
}

/// Whether a configured schedule name restarts on purpose.
pub fn schedule_restarts(schedule: &str) -> bool {
    let s = normalised(schedule).replace('_', "");
    RESTARTING_SCHEDULES
        .iter()
        .any(|r| s.contains(&r.replace('_', "")))
        || s.contains("restart")
        || s.contains("cyclic")
}

/// Whether a configured schedule name is constant (no decay; warmup allowed).
pub fn schedule_constant(schedule: &str) -> bool {
    normalised(schedule).starts_with("constant")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framework_names_get_their_roles() {
        let cases = [
            ("loss", Role::TrainLoss),
            ("train/loss", Role::TrainLoss),
            ("train_loss_step", Role::TrainLoss),
            ("eval_loss", Role::EvalLoss),
            ("val_loss", Role::EvalLoss),
            ("validation/epoch_loss", Role::EvalLoss),
            ("eval/loss", Role::EvalLoss),
            ("learning_rate", Role::LearningRate),
            ("lr", Role::LearningRate),
            ("lr-AdamW", Role::LearningRate),
            ("train/learning_rate", Role::LearningRate),
            ("grad_norm", Role::GradNorm),
            ("train/grad_norm", Role::GradNorm),
            ("samples_per_second", Role::Throughput),
            ("train_samples_per_second", Role::Throughput),
            ("it/s", Role::Throughput),
            ("tokens_per_sec", Role::Throughput),
            ("step_time", Role::StepTime),
            ("time/step", Role::StepTime),
            ("data_time", Role::StepTime),
            ("memory_allocated", Role::Memory),
            ("gpu_mem_gb", Role::Memory),
            ("rss_mb", Role::Memory),
            ("epoch", Role::Epoch),
            ("eval_samples_per_second", Role::Other),
            ("eval_runtime", Role::Other),
            ("train_runtime", Role::Other),
            ("loss_scale", Role::Other),
            ("accuracy", Role::Other),
            ("grad_histogram", Role::Other),
            ("unit_size", Role::Other),
        ];
        for (name, want) in cases {
            assert_eq!(role(name), want, "{name}");
        }
    }

    #[test]
    fn the_objective_outranks_auxiliary_and_epoch_losses() {
        assert!(train_loss_rank("loss") < train_loss_rank("train_loss_epoch"));
        assert!(train_loss_rank("train/loss") < train_loss_rank("aux_loss"));
    }

    #[test]
    fn schedules_and_optimizers_are_classified() {
        assert!(is_adam_family("adamw_torch") && is_adam_family("AdamW"));
        assert!(!is_adam_family("sgd"));
        assert!(schedule_decays("cosine") && schedule_decays("linear"));
        assert!(!schedule_decays("constant"));
        assert!(schedule_restarts("cosine_with_restarts") && !schedule_restarts("cosine"));
        assert!(schedule_constant("constant_with_warmup"));
    }
}
