//! `doctor`'s data, between the command and the renderers, one way down: the files read into
//! runs ([`read`], [`trace_read`] for run traces of `mldebug run`, each a [`run::Run`]), then
//! the report built from them ([`report`] for logs, [`trace_report`] for traces) as a
//! [`document`] whose findings link to their PLAYBOOK rows ([`playbook`]). The command reads its
//! flags and calls these; render draws the report.

pub mod document;
pub mod playbook;
pub mod read;
pub mod report;
pub mod run;
pub mod trace_read;
pub mod trace_report;
