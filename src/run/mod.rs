//! `mldebug run -- <command>`: the user's own training command, unmodified, watched from inside.
//!
//! - [`probes`]: the embedded Python (`torch/run/`) written into a private folder that the
//!   command's Python processes find on `PYTHONPATH`.
//! - [`command`]: what the command line names (a Python, a launcher) and the flags that would
//!   keep the probes out (`-S`, `-I`, `-E`).
//! - [`guard`]: ends the command and removes its folder when mldebug itself is killed.
//! - [`launch`]: starts the command in its own process group with the probes' environment,
//!   passes its output through, and ends the whole tree on a time limit or Ctrl-C.
//! - [`report`]: what the command reports, built once for the renderers.
//! - [`traces`]: collects the per-process traces, keeps them with `--trace`, and reads them.
//! - [`verdict`]: a cycle window's checkpoint: the first steps judged while the command runs.
//! - [`window`]: what is watched in each process: one cycle within caps, or N steps.
//!
//! The judgement is `mldebug_doctor::trace`, the rendering `render::run`.

pub mod command;
pub mod guard;
pub mod launch;
pub mod probes;
pub mod report;
pub mod traces;
pub mod verdict;
pub mod window;
