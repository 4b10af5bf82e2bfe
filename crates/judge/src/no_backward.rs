//! candle calls that have no backward, and a scanner that finds them in Rust source.
//!
//! The table is derived from candle-nn 0.11.1's source: every public function built with
//! `apply_op1_no_bwd` / `apply_op2_no_bwd` / `apply_op3_no_bwd`, plus the module constructors whose
//! `forward` takes one of those paths (`LayerNorm` with a bias on contiguous input,
//! `layer_norm.rs:117-121`; `RmsNorm` on contiguous input, `layer_norm.rs:219-222`). Left out:
//! `Tensor::arg_sort_last_dim` (`candle-core/src/sort.rs:279`, integer output) and `QMatMul`
//! (`quantized/mod.rs:1290`, quantized weights are not trained), which have no float gradient to
//! lose. Output of a call in the table has no backprop op: every parameter upstream of it gets no
//! gradient, with no error.
//!
//! Not for: reading files (the caller hands the text in) or judging a measurement.

/// One candle call without a backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoBackward {
    /// The text searched for, ending in `(`; matched at an identifier boundary.
    pub call: &'static str,
    /// Where candle builds it without a backward (candle-nn 0.11.1).
    pub source: &'static str,
    /// The differentiable replacement.
    pub replacement: &'static str,
    /// The candle issue that tracks it (`#NNNN`, huggingface/candle).
    pub issue: &'static str,
}

/// Every call in the table; longer, more specific spellings first (so `ops::layer_norm(` is
/// reported as itself, not as the module constructor `layer_norm(`).
pub const TABLE: &[NoBackward] = &[
    NoBackward {
        call: "ops::layer_norm(",
        source: "candle-nn ops.rs:944 (apply_op3_no_bwd)",
        replacement: "candle_nn::ops::layer_norm_slow(x, &w, &b, eps)",
        issue: "#3011",
    },
    NoBackward {
        call: "ops::rms_norm(",
        source: "candle-nn ops.rs:684 (apply_op2_no_bwd)",
        replacement: "candle_nn::ops::rms_norm_slow(x, &w, eps)",
        issue: "#2168",
    },
    NoBackward {
        call: "layer_norm(",
        source: "candle-nn layer_norm.rs:117-121: LayerNorm::forward with a bias on contiguous input calls ops::layer_norm",
        replacement: "in forward, when `ln.bias()` is `Some(b)` call candle_nn::ops::layer_norm_slow(x, ln.weight(), b, ln.eps() as f32) (without a bias LayerNorm::forward already takes the differentiable path)",
        issue: "#3011",
    },
    NoBackward {
        call: "LayerNorm::new(",
        source: "candle-nn layer_norm.rs:117-121: LayerNorm::forward with a bias on contiguous input calls ops::layer_norm",
        replacement: "call candle_nn::ops::layer_norm_slow(x, &weight, &bias, eps) in forward",
        issue: "#3011",
    },
    NoBackward {
        call: "rms_norm(",
        source: "candle-nn layer_norm.rs:219-222: RmsNorm::forward on contiguous input calls ops::rms_norm",
        replacement: "call RmsNorm::forward_diff(x) (or candle_nn::ops::rms_norm_slow) in forward",
        issue: "#2168",
    },
    NoBackward {
        call: "RmsNorm::new(",
        source: "candle-nn layer_norm.rs:219-222: RmsNorm::forward on contiguous input calls ops::rms_norm",
        replacement: "call RmsNorm::forward_diff(x) in forward",
        issue: "#2168",
    },
    NoBackward {
        call: "softmax_last_dim(",
        source: "candle-nn ops.rs:438 (apply_op1_no_bwd)",
        replacement: "candle_nn::ops::softmax(x, D::Minus1)",
        issue: "#3569",
    },
    NoBackward {
        call: "rope_thd(",
        source: "candle-nn rotary_emb.rs:855 (apply_op3_no_bwd)",
        replacement: "transpose to [b, h, t, d] and call candle_nn::rotary_emb::rope_slow",
        issue: "#3568",
    },
    NoBackward {
        call: "rope_i(",
        source: "candle-nn rotary_emb.rs:287 (apply_op3_no_bwd)",
        replacement: "candle_nn::rotary_emb::rope_i_slow(x, &cos, &sin)",
        issue: "#3568",
    },
    NoBackward {
        call: "rope(",
        source: "candle-nn rotary_emb.rs:580 (apply_op3_no_bwd)",
        replacement: "candle_nn::rotary_emb::rope_slow(x, &cos, &sin)",
        issue: "#3568",
    },
    NoBackward {
        call: "sdpa(",
        source: "candle-nn ops.rs:1317 (apply_op3_no_bwd; Metal only)",
        replacement: "attention written out: softmax(q·kᵀ·scale + mask)·v with candle_nn::ops::softmax",
        issue: "-",
    },
];

/// One call found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// 1-based line and column.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// Which known op it calls.
    pub entry: NoBackward,
}

/// Every call from [`TABLE`] in `source`, in order; `//` comments and `fn name(` definitions are
/// skipped, and each position is reported once (by the most specific entry).
pub fn scan(source: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    for (i, raw) in source.lines().enumerate() {
        let code = raw.split("//").next().unwrap_or("");
        let mut taken: Vec<(usize, usize)> = Vec::new();
        for entry in TABLE {
            let mut from = 0;
            while let Some(at) = code[from..].find(entry.call).map(|p| p + from) {
                from = at + entry.call.len();
                let end = at + entry.call.len();
                if !at_boundary(code, at) || defines(code, at) {
                    continue;
                }
                if taken.iter().any(|&(s, e)| at < e && s < end) {
                    continue;
                }
                taken.push((at, end));
                hits.push(Hit {
                    line: i + 1,
                    column: code[..at].chars().count() + 1,
                    entry: *entry,
                });
            }
        }
    }
    hits.sort_by_key(|h| (h.line, h.column));
    hits
}

/// The match starts a name: the character before it is not part of an identifier.
fn at_boundary(code: &str, at: usize) -> bool {
    code[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
}

/// `fn layer_norm(`: the user's own function of that name, not a call.
fn defines(code: &str, at: usize) -> bool {
    code[..at].trim_end().ends_with("fn")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_calls_are_found_with_line_column_and_replacement() {
        let src = "use candle_nn::{layer_norm, LayerNorm};\n\
                   fn new(vb: VarBuilder) -> Result<Self> {\n    \
                   let ln = layer_norm(DIM, 1e-5, vb.pp(\"ln\"))?;\n    \
                   let p = candle_nn::ops::softmax_last_dim(&x)?; // not softmax_last_dim(\n    \
                   let y = candle_nn::ops::layer_norm(&x, &w, &b, 1e-5)?;\n}\n";
        let hits = scan(src);
        let got: Vec<(usize, usize, &str)> = hits
            .iter()
            .map(|h| (h.line, h.column, h.entry.call))
            .collect();
        assert_eq!(
            got,
            [
                (3, 14, "layer_norm("),
                (4, 29, "softmax_last_dim("),
                (5, 24, "ops::layer_norm("),
            ]
        );
        assert_eq!(
            hits[1].entry.replacement,
            "candle_nn::ops::softmax(x, D::Minus1)"
        );
    }

    #[test]
    fn differentiable_spellings_and_definitions_are_not_hits() {
        let src = "let a = ops::layer_norm_slow(&x, &w, &b, 1e-5)?;\n\
                   let b = layer_norm_no_bias(8, 1e-5, vb)?;\n\
                   let c = rope_slow(&x, &c, &s)?;\n\
                   let d = my_rms_norm(&x)?;\n\
                   fn layer_norm(x: &Tensor) -> Result<Tensor> { todo!() }\n\
                   let e = norm.forward_diff(&x)?;\n";
        assert_eq!(scan(src), []);
    }

    #[test]
    fn the_layer_norm_suggestion_handles_the_optional_bias() {
        // `LayerNorm::bias()` is an `Option<&Tensor>` and `eps()` an f64; layer_norm_slow takes
        // a `&Tensor` bias and an f32 epsilon (the same call as diagnostics/src/nn.rs makes).
        let e = TABLE.iter().find(|e| e.call == "layer_norm(").unwrap();
        assert!(e.replacement.contains("`ln.bias()` is `Some(b)`"), "{e:?}");
        assert!(
            e.replacement
                .contains("layer_norm_slow(x, ln.weight(), b, ln.eps() as f32)"),
            "{e:?}"
        );
    }

    #[test]
    fn every_entry_names_a_source_a_replacement_and_an_issue() {
        for e in TABLE {
            assert!(e.call.ends_with('('), "{e:?}");
            assert!(e.source.starts_with("candle-nn "), "{e:?}");
            assert!(!e.replacement.is_empty(), "{e:?}");
            assert!(e.issue == "-" || e.issue.starts_with('#'), "{e:?}");
        }
    }
}
