//! The checks, one module each. Every check is a plain function generic over the model type,
//! returning a [`Finding`]; [`run_checks`] runs several and turns a model error or panic into an
//! `error` finding without stopping the others.
//!
//! Each check comes in two forms:
//! - `check::<M>(&opts)` builds fresh parameters from the seeded `VarBuilder`
//!   ([`crate::init::seeded_var_builder`]) and the model's own batch, so the same seed gives the
//!   same verdict and nothing of the user's is touched;
//! - `check_on(&model, &params, &batch, &opts)` runs on a model the caller already has (in a
//!   training loop, after loading a checkpoint), and puts every parameter back as it found it.
//!
//! No check prints; progress goes through [`Options::progress`].
//!
//! On a model you already train with a `VarMap`:
//!
//! ```no_run
//! # use mldebug_diagnostics::{checks, Batch, DebugModel, Options, ParamStore, Status};
//! # fn demo<M: DebugModel>(model: &M, varmap: &candle_nn::VarMap, batch: &Batch) -> candle_core::Result<()> {
//! let params = ParamStore::from_varmap(varmap);
//! let opts = Options::default();
//! let flow = checks::grad_flow::grad_flow_on(model, &params, batch, &opts)?;
//! if flow.status == Status::Fail {
//!     eprintln!("{}", flow.summary); // e.g. "20 of 21 parameters get no gradient: ..."
//! }
//! // Trains on `batch` from the current weights, then puts every weight back.
//! let fit = checks::overfit::overfit_on(model, &params, batch, &opts)?;
//! # let _ = fit; Ok(()) }
//! ```

pub mod batch_leak;
pub mod buffers;
pub mod class_balance;
pub mod grad_flow;
pub mod init_loss;
pub mod label_mask;
pub mod loss;
pub mod memory;
pub mod nan_trace;
pub mod overfit;

pub(crate) mod fresh;
pub(crate) mod guard;
pub(crate) mod optimizer;
mod read;

pub use fresh::Fresh;
// One function per check at `checks::<name>` (module and function share the name).
pub use batch_leak::batch_leak;
pub use class_balance::class_balance;
pub use grad_flow::grad_flow;
pub use init_loss::init_loss;
pub use label_mask::label_mask;
pub use memory::memory;
pub use nan_trace::nan_trace;
pub use overfit::overfit;

use crate::model::DebugModel;
use crate::options::Options;
use crate::report::{CheckId, Finding, Report};

/// Run `ids` on fresh parameters of `M` and collect one finding per check, in the order given.
///
/// A check whose model returns an error, or panics, becomes a finding with status `error` and
/// the message; the other checks still run.
pub fn run_checks<M: DebugModel>(ids: &[CheckId], opts: &Options) -> Report {
    let checks = ids.iter().map(|&id| run_one::<M>(id, opts)).collect();
    Report {
        model: opts.model_label.clone(),
        device: device_name(&opts.device),
        seed: opts.seed,
        checks,
    }
}

/// Run one check, catching errors and panics. Past [`Options::deadline`] the check does not
/// start, and a check stopped by it says so.
pub fn run_one<M: DebugModel>(id: CheckId, opts: &Options) -> Finding {
    if let Some(deadline) = opts.deadline.filter(|d| d.passed()) {
        return error_finding(id, &deadline.message(), opts);
    }
    let outcome = guard::catch(|| match id {
        CheckId::InitLoss => init_loss::init_loss::<M>(opts),
        CheckId::Overfit => overfit::overfit::<M>(opts),
        CheckId::GradFlow => grad_flow::grad_flow::<M>(opts),
        CheckId::NanTrace => nan_trace::nan_trace::<M>(opts),
        CheckId::LabelMask => label_mask::label_mask::<M>(opts),
        CheckId::BatchLeak => batch_leak::batch_leak::<M>(opts),
        CheckId::ClassBalance => class_balance::class_balance::<M>(opts),
        CheckId::Memory => memory::memory::<M>(opts),
    });
    match outcome {
        Ok(Ok(finding)) => finding,
        Ok(Err(_)) if opts.timed_out() => {
            let deadline = opts.deadline.expect("timed out means a deadline");
            error_finding(id, &deadline.message(), opts)
        }
        Ok(Err(err)) => error_finding(id, &format!("the model returned an error: {err}"), opts),
        Err(panic) => error_finding(id, &format!("the model panicked: {panic}"), opts),
    }
}

fn error_finding(id: CheckId, message: &str, opts: &Options) -> Finding {
    // Errors from candle can span lines (backtraces); the summary stays one line.
    mldebug_judge::error_finding(id, message, &opts.ctx(crate::model::Task::Classification))
}

/// `cpu`, `cuda:0`, `metal:0`: how the report names a device.
pub fn device_name(device: &candle_core::Device) -> String {
    match device.location() {
        candle_core::DeviceLocation::Cpu => "cpu".to_string(),
        candle_core::DeviceLocation::Cuda { gpu_id } => format!("cuda:{gpu_id}"),
        candle_core::DeviceLocation::Metal { gpu_id } => format!("metal:{gpu_id}"),
    }
}

/// A finding for a model or task the check cannot judge (never a pass).
pub(crate) use mldebug_judge::skipped;
