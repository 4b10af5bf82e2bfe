//! `ids-out-of-range`: a token id fed to an embedding past its rows (or negative), or a class
//! target of `cross_entropy` / `nll_loss` outside [0, C) and not its ignore index. Either stops
//! the program (an IndexError on a CPU, "device-side assert triggered" on CUDA, reported at a
//! later line); the record names the module, the id and the table's size, so the finding is a
//! fail whatever else the trace holds. The causes are told apart by what was measured: a
//! tokenizer longer than the table, ids that count up by one (positions past the position
//! table), a target equal to C (labels counted from 1), a negative target (an ignore value
//! other than the loss's ignore index).

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::OutOfRange;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    for r in &p.out_of_range {
        let finding = match r.check.as_str() {
            "embedding" => embedding(r),
            "target" => target(r),
            _ => continue,
        };
        let frames: Vec<String> = r.frames.iter().map(|f| format!("at {f}")).collect();
        out.push(
            finding
                .number("step", r.step as f64)
                .number("min", r.min as f64)
                .number("max", r.max as f64)
                .number("out_of_range", r.out_of_range as f64)
                .number("positions", r.positions as f64)
                .details(frames)
                .at(r.location.clone()),
        );
    }
}

/// "4 positions of 512".
fn share(r: &OutOfRange) -> String {
    format!("{} position(s) of {}", r.out_of_range, r.positions)
}

/// The offending id: the largest when it is past the end, else the negative one.
fn offending(r: &OutOfRange, size: u64) -> i64 {
    if r.max >= 0 && r.max as u64 >= size {
        r.max
    } else {
        r.min
    }
}

fn embedding(r: &OutOfRange) -> Finding {
    let rows = r.rows.unwrap_or(0);
    let module = r
        .module
        .as_deref()
        .filter(|m| !m.is_empty())
        .or(r.weight.as_deref())
        .unwrap_or("an embedding");
    let id = offending(r, rows);
    let what = if r.consecutive { "position" } else { "token" };
    let mut text = format!(
        "{what} id {id} fed to `{module}`, which has {rows} rows ({})",
        share(r)
    );
    let cause = if r.consecutive && id >= 0 {
        ": ids counting up by one are positions: a sequence longer than the model's position \
         table (max_position_embeddings, n_positions, block_size); truncate the inputs to it"
            .to_string()
    } else if id < 0 {
        format!(
            ": a negative id is no row (an ignore value such as -100 or a padding value of -1 \
             used as an input id; ids {}..{} out of range)",
            r.min, r.max
        )
    } else if let Some(t) = r.tokenizer_length.filter(|&t| t > rows) {
        let config = r
            .vocab_size
            .map(|v| format!(", config.vocab_size {v}"))
            .unwrap_or_default();
        format!(
            ": the tokenizer has {t} tokens, the embedding {rows} rows{config}: tokens added to \
             the tokenizer without model.resize_token_embeddings(len(tokenizer))"
        )
    } else {
        let config = r
            .vocab_size
            .filter(|&v| v != rows)
            .map(|v| format!(" (config.vocab_size is {v})"))
            .unwrap_or_default();
        format!(
            ": ids from a vocabulary larger than the table{config}: tokens added without \
             resizing the embedding, a tokenizer of another model, a vocabulary counted \
             without its special tokens, or ids offset by one"
        )
    };
    text.push_str(&cause);
    Finding::new(
        Symptom::IdsOutOfRange,
        Severity::Fail,
        &format!("embedding {module}"),
        r.step as f64,
    )
    .summary(text)
    // An embedding's ids: the hypotheses about class targets do not apply.
    .rules_out("labels counted from 1")
    .rules_out("a head with fewer outputs")
    .rules_out("an ignore value other than")
    .number("rows", rows as f64)
    .number(
        "tokenizer_length",
        r.tokenizer_length.map_or(f64::NAN, |t| t as f64),
    )
}

fn target(r: &OutOfRange) -> Finding {
    let classes = r.classes.unwrap_or(0);
    let id = offending(r, classes);
    let ignore = r
        .ignore_index
        .map(|i| format!("; ignore_index {i}"))
        .unwrap_or_default();
    let mut text = format!(
        "target {id} for a {} over {classes} classes ({}{ignore})",
        r.function,
        share(r)
    );
    let cause = if id < 0 {
        format!(
            ": a negative target that is not the ignore index: padding or unlabelled rows \
             marked {id} while the loss ignores {}",
            r.ignore_index
                .map_or_else(|| "another value".to_string(), |i| i.to_string())
        )
    } else if id as u64 == classes {
        format!(
            ": labels counted from 1 (1..{classes} instead of 0..{}), or a head with one class \
             too few (num_labels, out_features)",
            classes.saturating_sub(1)
        )
    } else {
        ": a head with fewer outputs than the data has classes (num_labels, out_features), or \
         labels of another mapping"
            .to_string()
    };
    text.push_str(&cause);
    Finding::new(
        Symptom::IdsOutOfRange,
        Severity::Fail,
        &format!("target {}", r.function),
        r.step as f64,
    )
    .summary(text)
    // Class targets: the hypotheses about a tokenizer and an embedding do not apply.
    .rules_out("tokens added to the tokenizer")
    .rules_out("a tokenizer of another model")
    .number("classes", classes as f64)
}
