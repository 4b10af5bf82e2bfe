//! Every check on a zoo model at a seed, run once per test binary: the zoo matrix (every seed)
//! and the report round trip (seed 0) read the same reports instead of training the zoo twice.
//! A run happens on the thread that asks first, whole, as the counting allocator needs.

use mldebug_diagnostics::zoo::ZooModel;
use mldebug_diagnostics::{CheckId, Options, Report};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The options every zoo run uses: the defaults, the seed, and the label the CLI would give.
fn options(model: &ZooModel, seed: u64) -> Options {
    Options {
        seed,
        model_label: format!("zoo::{}", model.name),
        ..Options::default()
    }
}

/// Every check on `model` at `seed` ([`options`]), run the first time it is asked for.
pub fn report(model: &'static ZooModel, seed: u64) -> Arc<Report> {
    type Runs = Mutex<HashMap<(&'static str, u64), Arc<OnceLock<Arc<Report>>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let cell = RUNS
        .get_or_init(Runs::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((model.name, seed))
        .or_default()
        .clone();
    // Outside the map's lock: another model's run goes on while this one trains.
    cell.get_or_init(|| Arc::new((model.run)(&CheckId::ALL, &options(model, seed))))
        .clone()
}
