//! Run traces: what `mldebug run` measured inside the user's own training processes
//! (`torch/run/TRACE.md`), read into processes ([`read`]) and judged into findings
//! ([`judge`]) with the same [`Finding`](crate::Finding) shape, severities and PLAYBOOK links as
//! the findings of a run log. The loss, learning rate, gradient norm and memory of each process
//! also go through the log detectors ([`crate::diagnose`]), so a trace and a log of the same run
//! agree on what both can see.
//!
//! Nothing here reads files, starts processes or prints.

pub mod judge;
pub mod read;
pub mod records;

pub use judge::{judge, TraceDiagnosis};
pub use read::{is_trace, parse, Process, TraceError};
