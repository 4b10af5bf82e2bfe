//! The judgement of logs and run traces (`mldebug doctor`, and `mldebug run`, which judges its
//! trace the same way): read a training run's logged curves, or what the probes measured inside
//! it ([`trace`]), and say what went wrong, with the step where it starts and the numbers behind
//! it. The checks of `mldebug check` are judged by `mldebug-judge`, not here.
//!
//! Data flows one way: [`textlog`] parses plain-text logs into histories (the other formats are
//! read by `mldebug-sweep`); [`history`] sorts a run's series into roles by [`names`]; [`robust`]
//! smooths them with medians; the detectors in [`detect`] judge them into [`finding::Finding`]s;
//! [`seeds`] compares the findings of runs that differ only in their seed; [`watch`] keeps a
//! growing run's state between polls. Nothing here reads files or prints.
//!
//! ```text
//! symptom          severity  metric  step  summary
//! loss-nonfinite   fail      loss    340   loss is NaN from step 340 (last finite 9.71 at step 330; grad_norm 8.1e3, learning_rate 0.3)
//! ```

#![warn(missing_docs)]

pub mod detect;
pub mod finding;
pub mod history;
pub mod names;
pub mod robust;
pub mod seeds;
pub mod textlog;
pub mod trace;
pub mod watch;

pub use detect::{diagnose, Diagnosis, Options};
pub use finding::{Finding, Severity, Symptom};
pub use history::RunHistory;
