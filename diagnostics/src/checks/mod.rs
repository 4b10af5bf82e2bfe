//! The checks, one module each. Every check is a plain function generic over the model type,
//! returning a [`Finding`]; [`run_checks`] runs several and turns a model error or panic into an
//! `error` finding without stopping the others.

pub mod loss;

use crate::model::DebugModel;
use crate::options::Options;
use crate::report::{CheckId, Report};

/// Run `ids` on fresh parameters of `M` and collect one finding per check, in the order given.
pub fn run_checks<M: DebugModel>(_ids: &[CheckId], _opts: &Options) -> Report {
    unimplemented!("filled in by the checks work")
}
