//! The window `mldebug run` watches in each process: one cycle of the program within caps
//! (`--steps auto`, the default), or a fixed number of optimizer steps. Read by the command
//! line, handed to the probes' environment, and said in the report.

use mldebug_text::bounded::Bounded;

/// The steps a cycle window judges first: a fail found in them ends the window there (the
/// window `mldebug run` watched before the cycle window, enough for every heavy probe and for
/// a curve the log detectors can judge, in seconds on a small model).
pub const VERDICT_STEP: u64 = 30;
/// A cycle window's cap in optimizer steps. An evaluation every 500 steps (the transformers
/// Trainer's default `eval_steps`) and an epoch of up to 999 batches (CIFAR-10 or MNIST at a
/// batch of 64: 782 and 938) both fall inside it, with the step after them.
pub const CYCLE_CAP_STEPS: u64 = 1000;
/// A cycle window's cap in seconds after the first step: five minutes is what a debugging run
/// may cost before its verdict, and the light probes add at most 5% of it.
pub const CYCLE_CAP_SECONDS: u64 = 300;
/// The most steps `--steps` takes (0 is the whole run).
pub const MAX_STEPS: u64 = 1_000_000;
/// `--steps N`: 0 (the whole run) to [`MAX_STEPS`].
const FIXED_STEPS: Bounded = Bounded::new(0, MAX_STEPS, "`auto` or a step count");
/// `--steps`: a cycle window, or a fixed number of optimizer steps (0: the whole run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steps {
    Cycle,
    Fixed(u64),
}

impl Steps {
    /// The step limit the probes are given: a cycle window's cap, or the fixed steps.
    pub fn limit(self) -> u64 {
        match self {
            Steps::Cycle => CYCLE_CAP_STEPS,
            Steps::Fixed(n) => n,
        }
    }
}

/// `--steps`: `auto`, or a whole number in [`FIXED_STEPS`].
pub fn parse_steps(text: &str) -> std::result::Result<Steps, String> {
    if text == "auto" {
        return Ok(Steps::Cycle);
    }
    FIXED_STEPS.parse(text).map(Steps::Fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_auto_or_a_bounded_whole_number() {
        assert_eq!(parse_steps("auto"), Ok(Steps::Cycle));
        assert_eq!(parse_steps("0"), Ok(Steps::Fixed(0)));
        assert_eq!(parse_steps("1000000"), Ok(Steps::Fixed(MAX_STEPS)));
        for bad in ["1000001", "-1", "+5", "x", "", "Auto"] {
            let e = parse_steps(bad).unwrap_err();
            assert!(
                e.contains("(expected `auto` or a step count from 0 to 1000000)"),
                "{bad}: {e}"
            );
        }
    }
}
