//! `mldebug check --torch`: the embedded driver run with a real Python and torch, judged by the
//! same code as candle models. The Python comes from `support::python` (a cached venv).

mod cli;
mod python;
mod support;
mod zoo;
