//! The mldebug binary's integration tests, one binary (modules inside; the PyTorch tests are the
//! `torch` binary beside it): the CLI end to end, the catalog and the knowledge, the doctor, the
//! harness on user crates, the sweep comparison, the zoo matrix and the fuzz corpus.
//!
//! One test executable links candle once; `cargo test --test it <module>::` runs one module.
//!
//! The memory check measures with the counting allocator, as the mldebug binary does; it counts
//! per thread, so tests beside one another do not disturb it.

/// The torch tests' interpreter (`.ci/torch-venv`) and their kept measurements, for the claims
/// measured with PyTorch.
#[allow(dead_code)]
#[path = "../support/cache.rs"]
mod cache;
mod harness_support;
#[allow(dead_code)]
#[path = "../support/torch.rs"]
mod support;
mod sweep_support;
/// The torch zoo's fixtures: which case, its arguments and verdict (shared with the live tier).
#[allow(dead_code)]
#[path = "../support/torch_zoo.rs"]
mod torch_zoo;
/// The run zoo's fixtures: which program, which key (shared with the live tier).
#[allow(dead_code)]
#[path = "../support/zoo_fixtures.rs"]
mod zoo_fixtures;

mod before_all;
mod catalog_dir_errors;
mod catalog_embedded;
mod catalog_pathological;
mod catalog_records;
mod catalog_verify;
mod cli_broken_pipe;
mod cli_check;
mod cli_check_error;
mod cli_check_inapplicable;
mod cli_check_limits;
mod cli_check_zoo;
mod cli_control_chars;
mod cli_demo;
mod cli_knowledge;
mod cli_knowledge_real;
mod cli_knowledge_skill;
mod cli_memory;
mod cli_output_errors;
mod cli_skill_safety;
mod doctor_cli;
mod doctor_corpus;
mod doctor_trace_input;
mod doctor_watch;
mod fuzz_corpus_replay;
mod harness_e2e;
mod harness_errors;
mod import_cycles;
mod json_schema;
mod knowledge_claims;
mod own_model_e2e;
mod plot_ranges;
mod report_json;
mod run_trust;
mod run_zoo_fixtures;
mod skill_routes;
mod source_layout;
mod sweep_compare_cli;
mod sweep_compare_snapshots;
mod sweep_readers_cli;
mod sweeps_doc_tables;
mod torch_zoo_fixtures;
mod triage_bench;
mod triage_cli;
mod zoo_matrix;
mod zoo_runs;

#[global_allocator]
static ALLOC: mldebug_diagnostics::memory::CountingAllocator =
    mldebug_diagnostics::memory::CountingAllocator;
