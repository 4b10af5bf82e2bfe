//! A measurement as a driver writes it (JSON, `torch/CONTRACT.md`), judged by check id.

use crate::common::Ctx;
use crate::{
    batch_leak, class_balance, grad_flow, init_loss, label_mask, memory, nan_trace, overfit,
};
use mldebug_report::{CheckId, Finding};
use serde::de::DeserializeOwned;

fn read<T: DeserializeOwned>(id: CheckId, value: serde_json::Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("the {id} measurement does not read: {e}"))
}

/// Judges the measurement `value` of check `id`. `label_convention` is the model's
/// (`label-mask` reads it). An error names the check and what does not read.
pub fn judge_json(
    id: CheckId,
    value: serde_json::Value,
    labels: label_mask::Labels,
    ctx: &Ctx,
) -> Result<Finding, String> {
    Ok(match id {
        CheckId::InitLoss => init_loss::judge(&read(id, value)?, ctx),
        CheckId::ClassBalance => class_balance::judge(&read(id, value)?, ctx),
        CheckId::LabelMask => {
            let mut m: label_mask::Measurement = read(id, value)?;
            m.labels = labels;
            label_mask::judge(&m, ctx)
        }
        CheckId::GradFlow => grad_flow::judge(&read(id, value)?, ctx),
        CheckId::NanTrace => nan_trace::judge(&read(id, value)?, ctx),
        CheckId::BatchLeak => batch_leak::judge(&read(id, value)?, ctx),
        CheckId::Overfit => overfit::judge(&read(id, value)?, ctx),
        CheckId::Memory => memory::judge(&read(id, value)?, ctx),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_ctx;
    use mldebug_report::{Status, Task};

    #[test]
    fn a_measurement_that_does_not_read_names_the_check() {
        let err = judge_json(
            CheckId::Overfit,
            serde_json::json!({"losses": "oops"}),
            label_mask::Labels::Shifted,
            &test_ctx(Task::Classification),
        )
        .unwrap_err();
        assert!(
            err.starts_with("the overfit measurement does not read"),
            "{err}"
        );
    }

    #[test]
    fn the_labels_convention_reaches_label_mask() {
        let v = serde_json::json!({"targets": [1, 2, 3, 4], "inputs": [1, 2, 3, 4], "seq_len": 4,
            "all_masked": {"loss": 0.0, "grads_move": false}, "masked_logits": null});
        let ctx = test_ctx(Task::CausalLm);
        let hf = judge_json(
            CheckId::LabelMask,
            v.clone(),
            label_mask::Labels::InModel,
            &ctx,
        );
        assert_eq!(hf.unwrap().status, Status::Pass);
        let candle = judge_json(CheckId::LabelMask, v, label_mask::Labels::Shifted, &ctx);
        assert_eq!(candle.unwrap().status, Status::Fail);
    }
}
