//! `doctor`'s data, between the command and the renderers: the logs read into runs
//! ([`read`]) and the report built from them with the findings linked to the PLAYBOOK
//! ([`report`]); run traces of `mldebug run` ([`trace_read`], [`trace_report`]). The command reads its flags and calls these; render draws the report.

pub mod read;
pub mod report;
pub mod trace_read;
pub mod trace_report;
