//! `mldebug check --torch`: the embedded driver run with a real Python and torch, judged by the
//! same code as candle models; and `mldebug run` over the run zoo and its command line. The Python comes from `support::python` (a cached venv).

// The support both test binaries share, from the one support folder (`tests/support/`), each
// included the same way in both.
#[path = "../support/cache.rs"]
mod cache;
#[path = "../support/torch.rs"]
mod support;
#[path = "../support/torch_zoo.rs"]
mod torch_zoo;
#[path = "../support/zoo_fixtures.rs"]
mod zoo_fixtures;

mod cli;
mod hostile;
mod python;
mod run_cli;
mod run_zoo;
mod zoo;
