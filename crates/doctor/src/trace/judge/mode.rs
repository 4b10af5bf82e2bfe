//! Train and eval modes: training steps taken in eval mode, evaluation in training mode,
//! dropout that stays on under eval, BatchNorm statistics changed by an evaluation.

use super::main_model;
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    train_in_eval(p, out);
    for m in &p.modes {
        let (symptom, summary) = match m.event.as_str() {
            "eval_forward_in_train_mode" => (
                Symptom::EvalInTrainMode,
                format!(
                    "a forward under torch.no_grad() ran with the model in training mode ({} \
                     active): evaluation without model.eval() gives noisy scores and moves \
                     BatchNorm statistics",
                    module(m)
                ),
            ),
            "dropout_in_eval" => (
                Symptom::DropoutInEval,
                format!(
                    "a functional dropout inside {} still drops in eval mode (training=True): \
                     evaluation is not reproducible (pass training=self.training)",
                    module(m)
                ),
            ),
            "batchnorm_updated_in_eval" => (
                Symptom::BatchnormUpdatedInEval,
                format!(
                    "{}'s running statistics changed during an evaluation under no_grad: the \
                     evaluation data moved the model",
                    module(m)
                ),
            ),
            _ => continue,
        };
        if out.iter().any(|f| f.symptom == symptom) {
            continue;
        }
        out.push(
            Finding::new(symptom, Severity::Warn, "mode", m.step as f64)
                .summary(summary)
                .at(m.location.clone()),
        );
    }
}

fn module(m: &crate::trace::records::Mode) -> String {
    match (&m.module, &m.class) {
        (Some(n), Some(c)) => format!("`{n}` ({c})"),
        (Some(n), None) => format!("`{n}`"),
        (None, Some(c)) => c.clone(),
        (None, None) => "a module".into(),
    }
}

/// `train-in-eval-mode`: a fail when the model has dropout or BatchNorm (their training
/// behaviour is skipped), information otherwise (eval mode changes nothing then).
fn train_in_eval(p: &Process, out: &mut Vec<Finding>) {
    let known: Vec<_> = p.steps.iter().filter(|s| s.training.is_some()).collect();
    let eval: Vec<_> = known.iter().filter(|s| s.training == Some(false)).collect();
    if eval.is_empty() {
        return;
    }
    let model = main_model(p);
    let (dropout, bn) = model.map(|m| (m.dropout, m.batchnorm)).unwrap_or((0, 0));
    let severity = if dropout + bn > 0 {
        Severity::Fail
    } else {
        Severity::Info
    };
    let effect = if dropout + bn > 0 {
        format!(
            "its {dropout} dropout and {bn} BatchNorm layer(s) train as they would evaluate \
             (call model.train() before the loop, and after each evaluation)"
        )
    } else {
        "it has no dropout or BatchNorm, so nothing changes".to_string()
    };
    out.push(
        Finding::new(
            Symptom::TrainInEvalMode,
            severity,
            "mode",
            eval[0].step as f64,
        )
        .summary(format!(
            "{} of {} training steps ran with the model in eval mode: {effect}",
            eval.len(),
            known.len()
        ))
        .number("steps_in_eval", eval.len() as f64)
        .number("steps", known.len() as f64)
        .number("dropout_layers", dropout as f64)
        .number("batchnorm_layers", bn as f64)
        .at(training_forward_in_eval(p).or_else(|| model.and_then(|m| m.location.clone()))),
    );
}

/// Where the first training forward in eval mode ran (the forward whose backward followed), as
/// the probes recorded it: not the model's first forward, which may be an evaluation.
fn training_forward_in_eval(p: &Process) -> Option<String> {
    p.modes
        .iter()
        .find(|m| m.event == "train_step_in_eval")
        .and_then(|m| m.location.clone())
}
