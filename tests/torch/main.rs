//! `mldebug check --torch`: the embedded driver run with a real Python and torch, judged by the
//! same code as candle models; and `mldebug run` over the run zoo and its command line. The Python comes from `support::python` (a cached venv).

mod cache;
mod cli;
mod hostile;
mod python;
mod run_cli;
mod run_zoo;
mod support;
mod zoo;
mod zoo_fixtures;
