//! grad-flow's judgement on hand-made measurements.

use super::*;
use crate::common::test_ctx;
use mldebug_report::Task;

fn row(name: &str, grad: Grad, depth: usize) -> ParamRow {
    ParamRow {
        name: name.into(),
        shape: vec![4, 4],
        param_norm: 1.0,
        grad,
        depth: Some(depth),
        order: None,
    }
}

fn norm(x: f64) -> Grad {
    Grad::Norm { norm: x }
}

fn judged(m: &Measurement) -> Finding {
    judge(m, &test_ctx(Task::Classification))
}

#[test]
fn each_gradient_state_and_the_layer_ratio() {
    let mut m = Measurement {
        loss_requires_grad: true,
        params: vec![
            row("a", norm(1.0), 3),
            row("b", norm(1.0), 2),
            row("c", norm(1.0), 1),
            row("head", norm(1.0), 0),
        ],
        ..Measurement::default()
    };
    assert_eq!(judged(&m).status, Status::Pass);
    m.params[0].grad = norm(1e-4);
    let f = judged(&m);
    assert!(f.summary.starts_with("vanishing"), "{}", f.summary);
    m.params[0].grad = Grad::None;
    assert!(judged(&m)
        .summary
        .starts_with("1 of 4 parameters gets no gradient: a"));
    m.params[0].grad = Grad::Zero;
    assert!(judged(&m).summary.contains("all-zero"));
    m.params[0].grad = Grad::NonFinite { count: 3 };
    assert!(judged(&m).summary.contains("NaN/inf"));
    m.loss_requires_grad = false;
    assert!(judged(&m).summary.starts_with("the loss does not depend"));
}

#[test]
fn frozen_by_hand_fails_but_lora_base_weights_do_not() {
    let frozen = Untrained {
        name: "fc1.weight".into(),
        shape: vec![4, 4],
        kind: "frozen: requires_grad=False".into(),
    };
    let mut m = Measurement {
        loss_requires_grad: true,
        params: vec![row("fc2.weight", norm(1.0), 0)],
        frozen: vec![frozen],
        ..Measurement::default()
    };
    let f = judged(&m);
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary.contains("frozen (requires_grad=False)"),
        "{}",
        f.summary
    );
    m.params = vec![
        row("q.lora_A.default.weight", Grad::Zero, 1),
        row("q.lora_B.default.weight", norm(0.5), 0),
    ];
    m.lora = Some(Lora {
        targets: vec!["q".into()],
        matched_modules: vec!["layers.0.q".into()],
        adapter_params: m.params.iter().map(|r| r.name.clone()).collect(),
        ..Lora::default()
    });
    let f = judged(&m);
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert!(
        f.summary.contains("exactly the 2 LoRA adapter tensors"),
        "{}",
        f.summary
    );
}

#[test]
fn lora_targets_that_match_nothing_fail_and_name_the_layers() {
    let m = Measurement {
        loss_requires_grad: true,
        lora: Some(Lora {
            targets: vec!["q_prj".into()],
            error: Some("Target modules {'q_prj'} not found in the base model.".into()),
            linear_modules: vec!["q_proj".into(), "v_proj".into()],
            ..Lora::default()
        }),
        ..Measurement::default()
    };
    let f = judged(&m);
    assert_eq!(f.status, Status::Fail);
    assert!(f.summary.contains("q_prj match no module"), "{}", f.summary);
    assert!(f.summary.contains("q_proj, v_proj"), "{}", f.summary);
}

#[test]
fn a_cut_without_traced_layers_is_named_from_the_creation_order() {
    // Created embed, ln_f, head; the alphabet would put head first.
    let mut rows = vec![
        row("embed.weight", Grad::None, 2),
        row("head.weight", norm(0.5), 0),
        row("ln_f.weight", Grad::None, 1),
    ];
    for (r, order) in rows.iter_mut().zip([0, 2, 1]) {
        r.order = Some(order);
    }
    let m = Measurement {
        loss_requires_grad: true,
        params: rows,
        ..Measurement::default()
    };
    let f = judged(&m);
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary
            .starts_with("2 of 3 parameters get no gradient: everything up to `ln_f`"),
        "{}",
        f.summary
    );
    assert!(f.summary.contains("`head` does"), "{}", f.summary);
    assert!(!f.metrics.contains_key("graph_cuts"), "not traced is not 0");
    assert!(f.details.iter().any(|d| d == NOT_TRACED), "{:?}", f.details);
    let live = f
        .details
        .iter()
        .position(|d| d == "get a gradient (1 of 3):");
    let dead = f
        .details
        .iter()
        .position(|d| d == "get no gradient (2 of 3):");
    assert!(live.unwrap() < dead.unwrap(), "{:?}", f.details);
    assert!(f.details[live.unwrap() + 1].starts_with("  head.weight"));
    // Dead rows in creation order: embed before ln_f.
    assert!(f.details[dead.unwrap() + 1].starts_with("  embed.weight"));
    let traced = Measurement {
        traced: true,
        ..m.clone()
    };
    assert_eq!(judged(&traced).metrics["graph_cuts"], 0.0);
}

#[test]
fn reads_the_drivers_rows() {
    let j = r#"{"loss_requires_grad":true,"params":[{"name":"w","shape":[2,2],"param_norm":1.0,"grad":{"kind":"norm","norm":"inf"},"depth":0,"order":0},{"name":"b","shape":[2],"param_norm":0.0,"grad":{"kind":"none"},"depth":null,"order":1}],"frozen":[],"buffers":[{"name":"bn.running_mean","shape":[2]}],"lora":null}"#;
    let m: Measurement = serde_json::from_str(j).unwrap();
    assert_eq!(
        m.params[0].grad,
        Grad::Norm {
            norm: f64::INFINITY
        }
    );
    assert_eq!(m.buffers[0].kind, "buffer: not trained");
}

#[test]
fn the_summary_the_rows_and_the_profile_share_the_creation_order() {
    // Created z, then a; the head's order is unknown, so it goes last. By name, a would lead.
    let mut z = row("z.weight", Grad::None, 2);
    z.order = Some(0);
    let mut a = row("a.weight", Grad::None, 1);
    a.order = Some(1);
    let m = Measurement {
        loss_requires_grad: true,
        params: vec![a, row("head.weight", norm(0.5), 0), z],
        ..Measurement::default()
    };
    let f = judged(&m);
    assert!(f.summary.contains("z.weight, a.weight"), "{}", f.summary);
    let labels = &f.series[0].labels;
    assert_eq!(
        labels,
        &[
            "z.weight (no gradient)".to_string(),
            "a.weight (no gradient)".to_string(),
            "head.weight".to_string()
        ]
    );
    let dead = f
        .details
        .iter()
        .position(|d| d == "get no gradient (2 of 3):")
        .unwrap();
    assert!(
        f.details[dead + 1].starts_with("  z.weight"),
        "{:?}",
        f.details
    );
    assert!(
        f.details[dead + 2].starts_with("  a.weight"),
        "{:?}",
        f.details
    );
    assert!(f.details.iter().any(|d| d == NOT_TRACED));
}

#[test]
fn a_pass_says_nothing_about_tracing() {
    let m = Measurement {
        loss_requires_grad: true,
        params: vec![row("w", norm(1.0), 1), row("head", norm(1.0), 0)],
        ..Measurement::default()
    };
    let f = judged(&m);
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert!(
        f.details.iter().all(|d| !d.contains("traced")),
        "{:?}",
        f.details
    );
}
