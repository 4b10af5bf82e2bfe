//! Progress bars: tqdm's (`Epoch 0:  45%|████▌     | 45/100 [00:01<00:02, 25.31it/s, loss=0.693]`,
//! used by the HF Trainer, Lightning and most scripts) and Keras'
//! (`45/100 [=====>....] - ETA: 1s - loss: 0.6931`, `100/100 [====] - 1s 5ms/step - loss: 0.35`).
//! A bar gives a position (n of total), a rate, and the metrics in its postfix.

use super::keyvalue;

/// Bars whose description names one of these are evaluation loops, not training steps.
const EVAL_DESCRIPTIONS: [&str; 6] = ["valid", "eval", "test", "predict", "sanity", "infer"];

/// What one bar update shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub shape: Shape,
    pub n: u64,
    pub total: u64,
    /// The epoch the description names (`Epoch 3:` in tqdm), 0-based.
    pub epoch: Option<u64>,
    /// Whether the description names an evaluation loop.
    pub eval: bool,
    /// Iterations per second.
    pub rate: Option<f64>,
    /// Seconds per step (Keras' `5ms/step`).
    pub step_time: Option<f64>,
    /// Postfix metrics (`loss=0.69`, `- loss: 0.69`).
    pub values: Vec<(String, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Tqdm,
    Keras,
}

/// The bar in one carriage-return segment of a line, if there is one.
pub fn parse(seg: &str) -> Option<Bar> {
    let (pos, n, total) = fraction(seg)?;
    let after = seg[pos..].trim_start();
    let inner = after.strip_prefix('[')?;
    if inner.starts_with(['=', '.', '>']) {
        return keras(seg, inner, n, total);
    }
    tqdm(seg, inner, n, total)
}

/// The first `n/total` followed by ` [` (or `[`): its end offset, n and total.
fn fraction(seg: &str) -> Option<(usize, u64, u64)> {
    let b = seg.as_bytes();
    let mut i = 0;
    while let Some(off) = seg[i..].find('/') {
        let slash = i + off;
        let mut a = slash;
        while a > 0 && b[a - 1].is_ascii_digit() {
            a -= 1;
        }
        let mut z = slash + 1;
        while z < b.len() && b[z].is_ascii_digit() {
            z += 1;
        }
        let boundary = a == 0 || !b[a - 1].is_ascii_alphanumeric();
        if a < slash && z > slash + 1 && boundary && seg[z..].trim_start().starts_with('[') {
            let n = seg[a..slash].parse().ok()?;
            let total = seg[slash + 1..z].parse().ok()?;
            return Some((z, n, total));
        }
        i = slash + 1;
    }
    None
}

fn tqdm(seg: &str, inner: &str, n: u64, total: u64) -> Option<Bar> {
    let body = inner.split(']').next().unwrap_or(inner);
    let mut parts = body.splitn(3, ", ");
    let time = parts.next()?;
    if !time.contains(':') {
        return None; // tqdm always shows elapsed time as mm:ss
    }
    let rate = parts.next().and_then(rate);
    let postfix = parts.next().unwrap_or("");
    let desc = seg.split('%').next().unwrap_or("");
    Some(Bar {
        shape: Shape::Tqdm,
        n,
        total,
        epoch: epoch_in(desc),
        eval: is_eval(desc),
        rate,
        step_time: None,
        values: values(postfix),
    })
}

fn keras(seg: &str, inner: &str, n: u64, total: u64) -> Option<Bar> {
    let close = inner.find(']')?;
    if !inner[..close].bytes().all(|b| b"=.>".contains(&b)) {
        return None;
    }
    let rest = &inner[close + 1..];
    let step_time = rest
        .split_whitespace()
        .find_map(|w| w.strip_suffix("/step"))
        .and_then(duration);
    let _ = seg;
    Some(Bar {
        shape: Shape::Keras,
        n,
        total,
        epoch: None,
        eval: false,
        rate: None,
        step_time,
        values: values(rest),
    })
}

/// `4.62it/s` → 4.62; `1.23s/it` → 1/1.23; `?it/s` → none.
fn rate(text: &str) -> Option<f64> {
    let t = text.trim();
    if let Some(x) = t.strip_suffix("s/it") {
        return x
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| *v > 0.0)
            .map(|v| 1.0 / v);
    }
    let slash = t.find("/s")?;
    let num_end = t[..slash]
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(slash);
    t[..num_end].parse().ok()
}

/// `5ms` → 0.005, `1s` → 1, `300us` → 0.0003.
fn duration(text: &str) -> Option<f64> {
    for (unit, scale) in [("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("s", 1.0)] {
        if let Some(x) = text.strip_suffix(unit) {
            return x.parse::<f64>().ok().map(|v| v * scale);
        }
    }
    None
}

/// `Epoch 3` in a description → 3.
fn epoch_in(desc: &str) -> Option<u64> {
    let pairs = keyvalue::pairs(desc);
    pairs
        .iter()
        .find(|(k, v, _)| k == "epoch" && v.fract() == 0.0 && *v >= 0.0)
        .map(|p| p.1 as u64)
}

fn is_eval(desc: &str) -> bool {
    let d = desc.to_ascii_lowercase();
    EVAL_DESCRIPTIONS.iter().any(|w| d.contains(w))
}

/// Postfix metrics, `v_num` (Lightning's version number) and `eta` left out.
fn values(text: &str) -> Vec<(String, f64)> {
    keyvalue::pairs(text)
        .into_iter()
        .filter(|(k, _, _)| k != "v_num" && k != "eta")
        .map(|(k, v, _)| (k, v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tqdm_bars_parse() {
        let b = parse(
            "Epoch 2:  45%|████▌     | 45/100 [00:01<00:02, 25.31it/s, v_num=0, train_loss=0.693]",
        )
        .unwrap();
        assert_eq!((b.n, b.total, b.epoch), (45, 100, Some(2)));
        assert_eq!(b.rate, Some(25.31));
        assert_eq!(b.values, vec![("train_loss".to_string(), 0.693)]);
        let b = parse("  2%|▏         | 10/500 [00:01<00:49,  1.25s/it]").unwrap();
        assert_eq!(b.rate, Some(0.8));
        assert!(!b.eval);
        let b =
            parse("Validation DataLoader 0: 100%|██████████| 8/8 [00:00<00:00, 90.1it/s]").unwrap();
        assert!(b.eval);
        assert_eq!(
            parse("  0%|          | 0/13 [00:00<?, ?it/s]")
                .unwrap()
                .rate,
            None
        );
    }

    #[test]
    fn keras_bars_parse() {
        let b = parse(
            "100/100 [==============================] - 1s 5ms/step - loss: 0.3456 - val_loss: 0.4",
        )
        .unwrap();
        assert_eq!((b.n, b.total), (100, 100));
        assert_eq!(b.step_time, Some(0.005));
        assert_eq!(b.values[0], ("loss".to_string(), 0.3456));
        assert_eq!(b.values[1], ("val_loss".to_string(), 0.4));
    }

    #[test]
    fn fractions_elsewhere_are_not_bars() {
        assert!(parse("Epoch 1/10").is_none());
        assert!(parse("lr 1/100 [note]").is_none());
        assert!(parse("read 3/4 files").is_none());
    }
}
