//! Plain-text training logs (a script's stdout, pasted or captured): the shapes below are
//! recognised line by line, and every other line is passed over. Nothing is guessed: a line
//! counts only in one of these shapes, and [`ReadReport`] says how many lines of each were read,
//! and where.
//!
//! | shape | example |
//! |---|---|
//! | `hf-dict` | `{'loss': 2.3012, 'grad_norm': 1.87, 'learning_rate': 4.9e-05, 'epoch': 0.02}` |
//! | `step-line` | `step 100 \| loss 2.31 \| lr 3e-4`, `Step [100/1000], Loss: 2.31` |
//! | `tqdm` | `Epoch 0:  45%\|████▌     \| 45/100 [00:01<00:02, 25.31it/s, loss=0.693]` |
//! | `keras` | `100/100 [==============================] - 1s 5ms/step - loss: 0.3456` |
//!
//! Steps: a step line names its own; a bar's position is its step (counting on across epochs);
//! an HF dict, which carries no step, takes the position of the training bar drawn with it, or
//! else its order among the dicts (the report says which). Carriage returns split a line into
//! the bar redraws it holds, and terminal escape sequences are removed first.
//!
//! The reader is incremental: [`TextLog::feed`] takes bytes as a file grows, reads each record as
//! soon as it ends (a line at `\n`, a bar redraw at `\r`, so a bar redrawn without a newline is
//! read while it is drawn), keeps an unfinished one for the next call, and [`TextLog::finish`]
//! reads that at the end of the file. A segment longer than [`MAX_SEGMENT_BYTES`] is passed over.

mod keyvalue;
mod progress;
mod pydict;

use progress::{Bar, Shape};
use serde::Serialize;
use std::collections::BTreeMap;

/// The name of the series of rates read from progress bars.
pub const BAR_RATE: &str = "it/s";
/// The name of the series of step times read from Keras bars.
pub const BAR_STEP_TIME: &str = "step_time";

/// Where the steps of HF dicts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepSource {
    /// The log names its steps (step lines, bars).
    Logged,
    /// HF dicts placed at the position of the training bar drawn with them.
    ProgressBar,
    /// HF dicts numbered in the order they were printed (the log has no step numbers).
    LineOrder,
}

/// How much of the text was read, by shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadReport {
    /// Lines in the text.
    pub lines: usize,
    /// Lines read (in any shape).
    pub read: usize,
    /// The first and last line read (1-based).
    pub first_line: Option<usize>,
    /// The last line read (1-based).
    pub last_line: Option<usize>,
    /// Lines read per shape, in the order of the table in the module docs.
    pub shapes: Vec<ShapeCount>,
    /// Where the step numbers came from.
    pub step_source: StepSource,
}

/// How many lines of one shape were read, and where.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeCount {
    /// The shape's name (`hf-dict`, `step-line`, `tqdm`, `keras`).
    pub shape: &'static str,
    /// How many lines had it.
    pub lines: usize,
    /// The first of them (1-based).
    pub first_line: usize,
    /// The last of them (1-based).
    pub last_line: usize,
}

const SHAPES: [&str; 4] = ["hf-dict", "step-line", "tqdm", "keras"];

/// The longest segment (text between two `\r` or `\n`) read: a bar redraw, a step line or an
/// HF dict is a few hundred bytes, so this is far beyond any record, and a stream with no line
/// ends (a binary file, `/dev/zero`) costs no more memory than this.
pub const MAX_SEGMENT_BYTES: usize = 1 << 20;

/// The state of a text log being read.
#[derive(Debug, Default)]
pub struct TextLog {
    series: BTreeMap<String, Vec<(f64, f64)>>,
    counts: [Option<(usize, usize, usize)>; 4],
    lines: usize,
    read: usize,
    /// The bytes of the segment being written (up to the next `\r` or `\n`).
    partial: Vec<u8>,
    /// The segment being written is too long to be a record: passed over up to its end.
    skipping: bool,
    /// The line being written, once a segment of it has ended: the shapes read in it so far.
    open: Option<[bool; 4]>,
    /// The training bar's total, once one has been seen.
    main_total: Option<u64>,
    /// Position of the training bar: last n, steps counted before this loop, global step.
    bar_n: u64,
    bar_offset: u64,
    bar_step: Option<f64>,
    /// The epoch a Keras `Epoch 3/10` line announced (1-based as printed).
    keras_epoch: Option<u64>,
    /// HF dicts waiting for the next training-bar position.
    pending: Vec<Vec<(String, f64)>>,
    dicts: usize,
    dicts_by_bar: usize,
}

impl TextLog {
    /// An empty reader.
    pub fn new() -> TextLog {
        TextLog::default()
    }

    /// Reads the complete records in `bytes` (after any unfinished one from the last call): a
    /// line ends at `\n`, and a bar redraw at `\r`, so a bar redrawn all epoch long without a
    /// newline is read redraw by redraw, as the file grows.
    pub fn feed(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|b| *b == b'\n' || *b == b'\r') {
            let (body, end) = match piece.split_last() {
                Some((&e, body)) if e == b'\n' || e == b'\r' => (body, Some(e)),
                _ => (piece, None),
            };
            self.append(body);
            match end {
                Some(b'\r') => self.end_segment(),
                Some(_) => {
                    self.end_segment();
                    self.end_line();
                }
                None => {}
            }
        }
    }

    /// Reads an unfinished last line and places dicts still waiting for a bar position.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() || self.skipping || self.open.is_some() {
            self.end_segment();
            self.end_line();
        }
        self.place_pending();
    }

    /// Keeps the bytes of an unfinished segment; one longer than [`MAX_SEGMENT_BYTES`] is no
    /// record mldebug reads, and is passed over up to its end.
    fn append(&mut self, body: &[u8]) {
        if self.skipping {
            return;
        }
        if self.partial.len() + body.len() > MAX_SEGMENT_BYTES {
            self.partial = Vec::new();
            self.skipping = true;
            return;
        }
        self.partial.extend_from_slice(body);
    }

    /// Reads the segment that just ended (at `\r` or `\n`).
    fn end_segment(&mut self) {
        let seg = std::mem::take(&mut self.partial);
        self.open.get_or_insert([false; 4]);
        if std::mem::take(&mut self.skipping) {
            return;
        }
        let text = strip_escapes(&String::from_utf8_lossy(&seg));
        if text.trim().is_empty() {
            return;
        }
        if let Some(shape) = self.segment(&text) {
            if let Some(open) = &mut self.open {
                open[shape] = true;
            }
        }
    }

    /// Counts the line that just ended (at `\n`) under the shapes its segments were read as.
    fn end_line(&mut self) {
        let shapes = self.open.take().unwrap_or_default();
        self.lines += 1;
        if shapes.iter().any(|x| *x) {
            self.read += 1;
            for (k, hit) in shapes.iter().enumerate() {
                if *hit {
                    let line = self.lines;
                    let c = self.counts[k].get_or_insert((0, line, line));
                    c.0 += 1;
                    c.2 = line;
                }
            }
        }
    }

    /// The series read so far (dicts still waiting for a bar position not included).
    pub fn history(&self) -> &BTreeMap<String, Vec<(f64, f64)>> {
        &self.series
    }

    /// Mutable access for capping long series while watching.
    pub fn history_mut(&mut self) -> &mut BTreeMap<String, Vec<(f64, f64)>> {
        &mut self.series
    }

    /// What was read, by shape (a line still being written counts, with what it read so far).
    pub fn report(&self) -> ReadReport {
        let open = self.open.unwrap_or_default();
        let (mut lines, mut read, mut counts) = (self.lines, self.read, self.counts);
        if self.open.is_some() || !self.partial.is_empty() {
            lines += 1;
        }
        if open.iter().any(|x| *x) {
            read += 1;
            for (k, hit) in open.iter().enumerate() {
                if *hit {
                    let c = counts[k].get_or_insert((0, lines, lines));
                    c.0 += 1;
                    c.2 = lines;
                }
            }
        }
        let shapes: Vec<ShapeCount> = SHAPES
            .iter()
            .zip(&counts)
            .filter_map(|(shape, c)| {
                c.map(|(lines, first_line, last_line)| ShapeCount {
                    shape,
                    lines,
                    first_line,
                    last_line,
                })
            })
            .collect();
        ReadReport {
            lines,
            read,
            first_line: shapes.iter().map(|s| s.first_line).min(),
            last_line: shapes.iter().map(|s| s.last_line).max(),
            shapes,
            step_source: if self.dicts == 0 {
                StepSource::Logged
            } else if self.dicts_by_bar * 2 >= self.dicts {
                StepSource::ProgressBar
            } else {
                StepSource::LineOrder
            },
        }
    }

    /// Reads one segment; the index of the shape it was read as.
    fn segment(&mut self, seg: &str) -> Option<usize> {
        if let Some(bar) = progress::parse(seg) {
            let shape = if bar.shape == Shape::Tqdm { 2 } else { 3 };
            let dict = pydict::parse(&seg[seg.find(']').map_or(0, |i| i + 1)..]);
            let used = self.bar(bar);
            if let Some(d) = dict {
                self.dict(d);
                return Some(0);
            }
            return used.then_some(shape);
        }
        if let Some(d) = pydict::parse(seg) {
            self.dict(d);
            return Some(0);
        }
        if let Some(line) = keyvalue::parse(seg) {
            for (k, v) in line.values {
                self.push(&k, line.step, v);
            }
            return Some(1);
        }
        if let Some(e) = keras_epoch(seg) {
            self.keras_epoch = Some(e);
        }
        None
    }

    /// Takes a bar update; whether it was the training bar.
    fn bar(&mut self, bar: Bar) -> bool {
        if bar.eval || bar.total == 0 {
            return false;
        }
        let main = *self.main_total.get_or_insert(bar.total);
        if bar.total != main {
            return false; // another loop's bar (evaluation without a description)
        }
        let epoch = match bar.shape {
            Shape::Tqdm => bar.epoch,
            Shape::Keras => self.keras_epoch.map(|e| e.saturating_sub(1)),
        };
        let step = match epoch {
            Some(e) => e * bar.total + bar.n,
            None => {
                if bar.n < self.bar_n {
                    self.bar_offset += self.bar_n;
                }
                self.bar_offset + bar.n
            }
        };
        self.bar_n = bar.n;
        let step = step as f64;
        self.bar_step = Some(step);
        self.place_pending();
        if let Some(r) = bar.rate {
            self.push(BAR_RATE, step, r);
        }
        if let Some(t) = bar.step_time {
            self.push(BAR_STEP_TIME, step, t);
        }
        for (k, v) in bar.values {
            // A validation metric in a training bar is carried from one evaluation to the next:
            // only a new value is a new point.
            let carried = crate::names::is_eval(&k)
                && self
                    .series
                    .get(&k)
                    .and_then(|s| s.last())
                    .is_some_and(|l| l.1 == v);
            if !carried {
                self.push(&k, step, v);
            }
        }
        true
    }

    fn dict(&mut self, d: Vec<(String, f64)>) {
        self.dicts += 1;
        let own_step = d
            .iter()
            .find(|(k, _)| k == "step" || k == "global_step")
            .map(|p| p.1);
        match own_step {
            Some(s) => self.push_all(d, s),
            None if self.main_total.is_some() => self.pending.push(d),
            None => {
                let step = self.dicts as f64;
                self.push_all(d, step);
            }
        }
    }

    /// Dicts printed before the bar's next redraw are placed at its position then.
    fn place_pending(&mut self) {
        let Some(step) = self.bar_step else { return };
        for d in std::mem::take(&mut self.pending) {
            self.dicts_by_bar += 1;
            self.push_all(d, step);
        }
    }

    fn push_all(&mut self, d: Vec<(String, f64)>, step: f64) {
        for (k, v) in d {
            if k != "step" && k != "global_step" {
                self.push(&k, step, v);
            }
        }
    }

    /// Appends a point; a bar redrawn at the same step replaces its last point.
    fn push(&mut self, key: &str, step: f64, value: f64) {
        let s = self.series.entry(key.to_string()).or_default();
        match s.last_mut() {
            Some(last) if last.0 == step && !last.1.is_nan() && !value.is_nan() => last.1 = value,
            _ => s.push((step, value)),
        }
    }
}

/// Reads a whole text.
pub fn parse(bytes: &[u8]) -> TextLog {
    let mut t = TextLog::new();
    t.feed(bytes);
    t.finish();
    t
}

/// `Epoch 3/10` alone on a line (Keras) → 3.
fn keras_epoch(seg: &str) -> Option<u64> {
    let rest = seg.trim().strip_prefix("Epoch ")?;
    let (e, total) = rest.split_once('/')?;
    total.trim().parse::<u64>().ok()?;
    e.trim().parse().ok()
}

/// The text without terminal escape sequences (tqdm moves the cursor between nested bars).
fn strip_escapes(s: &str) -> String {
    if !s.contains('\u{1b}') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // CSI: parameters and intermediates, then one final byte in @..~.
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hf_stdout_takes_steps_from_the_bar() {
        let text = "  0%|          | 0/100 [00:00<?, ?it/s]\r  9%|▉         | 9/100 [00:01<00:09, 9.1it/s]\n\
                    {'loss': 2.3, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'epoch': 0.1}\n\
                    \r 10%|█         | 10/100 [00:01<00:09, 9.5it/s]\r 19%|█▉        | 19/100 [00:02<00:08, 9.6it/s]\n\
                    {'loss': 2.1, 'grad_norm': 1.2, 'learning_rate': 4e-05, 'epoch': 0.2}\n\
                    \r 20%|██        | 20/100 [00:02<00:08, 9.6it/s]\n";
        let t = parse(text.as_bytes());
        assert_eq!(t.history()["loss"], vec![(10.0, 2.3), (20.0, 2.1)]);
        assert_eq!(t.history()[BAR_RATE].last(), Some(&(20.0, 9.6)));
        let r = t.report();
        assert_eq!(r.step_source, StepSource::ProgressBar);
        assert_eq!(r.read, 5);
        assert_eq!((r.first_line, r.last_line), (Some(1), Some(5)));
    }

    #[test]
    fn dicts_without_bars_are_numbered_and_said_to_be() {
        let t = parse(b"hello\n{'loss': 1.0, 'epoch': 0.5}\nnoise\n{'loss': 0.5, 'epoch': 1.0}");
        assert_eq!(t.history()["loss"], vec![(1.0, 1.0), (2.0, 0.5)]);
        let r = t.report();
        assert_eq!(r.step_source, StepSource::LineOrder);
        assert_eq!((r.lines, r.read), (4, 2));
        assert_eq!(r.shapes[0].shape, "hf-dict");
    }

    #[test]
    fn step_lines_and_partial_lines_across_feeds() {
        let mut t = TextLog::new();
        t.feed(b"step 1 loss 2.0\nstep 2 lo");
        assert_eq!(t.history()["loss"].len(), 1);
        t.feed(b"ss 1.5\n");
        assert_eq!(t.history()["loss"], vec![(1.0, 2.0), (2.0, 1.5)]);
    }

    #[test]
    fn lightning_bars_count_on_across_epochs_and_skip_validation() {
        let text = "Epoch 0: 100%|██| 10/10 [00:01<00:00, 9.0it/s, v_num=0, train_loss=0.9]\n\
                    Validation DataLoader 0: 100%|██| 4/4 [00:00<00:00, 50.0it/s]\n\
                    Epoch 1:  50%|█ | 5/10 [00:00<00:00, 9.0it/s, v_num=0, train_loss=0.7]\n";
        let t = parse(text.as_bytes());
        assert_eq!(t.history()["train_loss"], vec![(10.0, 0.9), (15.0, 0.7)]);
        assert!(!t.history().contains_key("v_num"));
    }

    #[test]
    fn keras_epochs_number_the_steps() {
        let text = "Epoch 1/2\n10/10 [==========] - 1s 5ms/step - loss: 0.9\nEpoch 2/2\n10/10 [==========] - 1s 6ms/step - loss: 0.5\n";
        let t = parse(text.as_bytes());
        assert_eq!(t.history()["loss"], vec![(10.0, 0.9), (20.0, 0.5)]);
        assert_eq!(t.history()[BAR_STEP_TIME][1], (20.0, 0.006));
    }

    #[test]
    fn bar_redraws_are_read_before_their_line_ends() {
        let mut t = TextLog::new();
        t.feed(b"step 0 loss 2.0\n");
        t.feed("Epoch 0:  10%|█ | 1/10 [00:01<00:09, 9.0it/s, loss=0.9]\r".as_bytes());
        t.feed("Epoch 0:  20%|██ | 2/10 [00:01<00:09, 9.0it/s, loss=nan]\r".as_bytes());
        let loss = &t.history()["loss"];
        assert_eq!(loss.len(), 3, "{loss:?}");
        assert!(loss[2].1.is_nan());
        let r = t.report();
        assert_eq!((r.lines, r.read), (2, 2));
        // Fed whole, and fed byte by byte, the same text reads the same.
        let text =
            "a\rEpoch 0:  10%|█ | 1/10 [00:01<00:09, 9.0it/s, loss=0.9]\rstep 3 loss 1\r\nb\n";
        let whole = parse(text.as_bytes());
        let mut bytes = TextLog::new();
        for b in text.as_bytes() {
            bytes.feed(std::slice::from_ref(b));
        }
        bytes.finish();
        assert_eq!(whole.history(), bytes.history());
        assert_eq!(whole.report(), bytes.report());
        assert_eq!((whole.report().lines, whole.report().read), (2, 1));
    }

    #[test]
    fn a_segment_without_an_end_is_bounded() {
        let mut t = TextLog::new();
        let zeros = vec![0u8; MAX_SEGMENT_BYTES / 4];
        for _ in 0..8 {
            t.feed(&zeros);
            assert!(t.partial.len() <= MAX_SEGMENT_BYTES);
        }
        t.feed(b"\nstep 1 loss 2\n");
        assert_eq!(t.history()["loss"], vec![(1.0, 2.0)]);
        assert_eq!(t.report().lines, 2);
    }

    #[test]
    fn escapes_are_removed() {
        assert_eq!(
            strip_escapes("\u{1b}[Astep 1 loss 2\u{1b}[0m"),
            "step 1 loss 2"
        );
    }
}
