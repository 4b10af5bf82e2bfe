//! TensorBoard event files: TFRecord framing (both CRCs checked) around `Event` protos, of
//! which the scalar summaries are kept: `simple_value` (TF1, PyTorch, tensorboardX) and rank-0
//! float/double tensors (TF2 `tf.summary.scalar`).
//!
//! Several event files in one run directory (restarts) are merged by (tag, step), the latest
//! `wall_time` winning. Hyperparameters logged through the HParams plugin (PyTorch's and
//! tensorboardX's `add_hparams`, TF's `hparams` API) become the run's config.

use super::crc32c::masked_crc32c;
use super::identity::{dir_run_name, seed_from_config, seed_from_dirs, task_from_config};
use super::protobuf::{each_fixed32, each_fixed64, DecodeError, Fields, Wire};
use super::series::Series;
use super::{read_file, Found};
use crate::record::RunRecord;
use crate::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bytes before a record's data: u64 length, u32 masked CRC of the length.
const HEADER_LEN: usize = 12;
/// Bytes after a record's data: u32 masked CRC of the data.
const FOOTER_LEN: usize = 4;

/// `Event` fields.
const EVENT_WALL_TIME: u32 = 1;
const EVENT_STEP: u32 = 2;
const EVENT_SUMMARY: u32 = 5;
/// `Summary.value` and `Summary.Value` fields.
const SUMMARY_VALUE: u32 = 1;
const VALUE_TAG: u32 = 1;
const VALUE_SIMPLE: u32 = 2;
const VALUE_TENSOR: u32 = 8;
const VALUE_METADATA: u32 = 9;
/// `SummaryMetadata.plugin_data`, `PluginData.plugin_name` and `.content`.
const METADATA_PLUGIN_DATA: u32 = 1;
const PLUGIN_NAME: u32 = 1;
const PLUGIN_CONTENT: u32 = 2;
/// `HParamsPluginData.session_start_info`, `SessionStartInfo.hparams` (a map: entry key 1,
/// value 2, a `google.protobuf.Value`).
const HPARAMS_SESSION_START: u32 = 3;
const SESSION_HPARAMS: u32 = 1;
const MAP_KEY: u32 = 1;
const MAP_VALUE: u32 = 2;
/// `google.protobuf.Value` kinds.
const PB_NUMBER: u32 = 2;
const PB_STRING: u32 = 3;
const PB_BOOL: u32 = 4;
/// `TensorProto` fields.
const TENSOR_DTYPE: u32 = 1;
const TENSOR_SHAPE: u32 = 2;
const TENSOR_CONTENT: u32 = 4;
const TENSOR_FLOAT_VAL: u32 = 5;
const TENSOR_DOUBLE_VAL: u32 = 6;
/// `TensorShapeProto.dim` and `Dim.size`.
const SHAPE_DIM: u32 = 2;
const DIM_SIZE: u32 = 1;
/// `DataType` values.
const DT_FLOAT: u64 = 1;
const DT_DOUBLE: u64 = 2;

/// One scalar point as logged.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarEvent {
    /// Which of the run's event files it came from (their order in the run's directory).
    pub file: usize,
    pub tag: String,
    pub step: i64,
    pub wall_time: f64,
    pub value: f64,
}

/// Whether `head` starts with a TFRecord header whose length CRC checks out.
pub fn looks_like_tfrecord(head: &[u8]) -> bool {
    head.len() >= HEADER_LEN
        && masked_crc32c(&head[..8]) == u32::from_le_bytes(head[8..12].try_into().expect("4"))
}

/// What the event files of one run hold.
#[derive(Debug, Default)]
pub struct Events {
    pub scalars: Vec<ScalarEvent>,
    pub hparams: BTreeMap<String, Value>,
}

/// Every scalar and hyperparameter in one event file. Any framing or CRC fault is an error
/// naming the record and its byte offset: a half-read file would silently shorten the run.
pub fn read_events(path: &Path, bytes: &[u8], out: &mut Events) -> Result<()> {
    let mut off = 0usize;
    let mut index = 0usize;
    while off < bytes.len() {
        index += 1;
        let place = format!("record {index} at byte {off}");
        let left = bytes.len() - off;
        if left < HEADER_LEN {
            return Err(Error::input(
                path,
                place,
                format_args!(
                    "truncated record: {left} bytes left where a {HEADER_LEN}-byte header \
                     should be (the file was cut short, or its writer is still running)"
                ),
            ));
        }
        let len_bytes = &bytes[off..off + 8];
        let stored = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().expect("4 bytes"));
        check_crc(path, &place, "length", stored, len_bytes)?;
        let len = u64::from_le_bytes(len_bytes.try_into().expect("8 bytes"));
        let data_start = off + HEADER_LEN;
        let body_left = (bytes.len() - data_start) as u64;
        if len.saturating_add(FOOTER_LEN as u64) > body_left {
            return Err(Error::input(
                path,
                place,
                format_args!(
                    "truncated record: the header announces {len} bytes of data and a \
                     {FOOTER_LEN}-byte CRC, but only {body_left} bytes are left (the file was \
                     cut short, or its writer is still running)"
                ),
            ));
        }
        let data_end = data_start + len as usize;
        let data = &bytes[data_start..data_end];
        let stored = u32::from_le_bytes(
            bytes[data_end..data_end + FOOTER_LEN]
                .try_into()
                .expect("4 bytes"),
        );
        check_crc(path, &place, "data", stored, data)?;
        decode_event(data, out).map_err(|e| {
            Error::input(path, &place, format_args!("malformed Event protobuf: {e}"))
        })?;
        off = data_end + FOOTER_LEN;
    }
    Ok(())
}

fn decode_event(data: &[u8], out: &mut Events) -> Result<(), DecodeError> {
    let mut wall_time = 0.0;
    let mut step = 0i64;
    let mut summary = None;
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (EVENT_WALL_TIME, Wire::Fixed64(x)) => wall_time = f64::from_bits(x),
            (EVENT_STEP, Wire::Varint(x)) => step = x as i64,
            (EVENT_SUMMARY, Wire::Bytes(b)) => summary = Some(b),
            _ => {}
        }
    }
    let Some(summary) = summary else {
        return Ok(());
    };
    let mut f = Fields::new(summary);
    while let Some((n, v)) = f.next_field()? {
        if let (SUMMARY_VALUE, Wire::Bytes(b)) = (n, v) {
            if let Some((tag, value)) = decode_value(b, &mut out.hparams)? {
                out.scalars.push(ScalarEvent {
                    file: 0,
                    tag,
                    step,
                    wall_time,
                    value,
                });
            }
        }
    }
    Ok(())
}

/// A `Summary.Value` holding a scalar: its tag and value. Images, histograms, text are `None`;
/// HParams plugin data is added to `hparams`.
fn decode_value(
    data: &[u8],
    hparams: &mut BTreeMap<String, Value>,
) -> Result<Option<(String, f64)>, DecodeError> {
    let mut tag = None;
    let mut value = None;
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (VALUE_TAG, Wire::Bytes(b)) => tag = Some(String::from_utf8_lossy(b).into_owned()),
            (VALUE_SIMPLE, Wire::Fixed32(x)) => value = Some(f64::from(f32::from_bits(x))),
            (VALUE_TENSOR, Wire::Bytes(b)) => value = scalar_tensor(b)?,
            (VALUE_METADATA, Wire::Bytes(b)) => decode_hparams_metadata(b, hparams)?,
            _ => {}
        }
    }
    Ok(tag.zip(value))
}

/// The hyperparameters in a `SummaryMetadata` of the `hparams` plugin, if it is one.
fn decode_hparams_metadata(
    data: &[u8],
    hparams: &mut BTreeMap<String, Value>,
) -> Result<(), DecodeError> {
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        let (METADATA_PLUGIN_DATA, Wire::Bytes(plugin)) = (n, v) else {
            continue;
        };
        let mut name: &[u8] = &[];
        let mut content: &[u8] = &[];
        let mut p = Fields::new(plugin);
        while let Some((k, v)) = p.next_field()? {
            match (k, v) {
                (PLUGIN_NAME, Wire::Bytes(b)) => name = b,
                (PLUGIN_CONTENT, Wire::Bytes(b)) => content = b,
                _ => {}
            }
        }
        if name != b"hparams" {
            continue;
        }
        for_each_bytes(content, HPARAMS_SESSION_START, |start| {
            for_each_bytes(start, SESSION_HPARAMS, |entry| {
                let mut key = None;
                let mut value = Value::Null;
                let mut e = Fields::new(entry);
                while let Some((k, v)) = e.next_field()? {
                    match (k, v) {
                        (MAP_KEY, Wire::Bytes(b)) => {
                            key = Some(String::from_utf8_lossy(b).into_owned())
                        }
                        (MAP_VALUE, Wire::Bytes(b)) => value = protobuf_value(b)?,
                        _ => {}
                    }
                }
                if let Some(key) = key {
                    hparams.insert(key, value);
                }
                Ok(())
            })
        })?;
    }
    Ok(())
}

/// Calls `f` on every length-delimited field number `field` of a message.
fn for_each_bytes(
    data: &[u8],
    field: u32,
    mut f: impl FnMut(&[u8]) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut r = Fields::new(data);
    while let Some((n, v)) = r.next_field()? {
        if let (true, Wire::Bytes(b)) = (n == field, v) {
            f(b)?;
        }
    }
    Ok(())
}

/// A `google.protobuf.Value` holding a number, string or boolean (others become null).
fn protobuf_value(data: &[u8]) -> Result<Value, DecodeError> {
    let mut out = Value::Null;
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        out = match (n, v) {
            (PB_NUMBER, Wire::Fixed64(x)) => {
                let x = f64::from_bits(x);
                if x.fract() == 0.0 && x.abs() < 1e15 {
                    Value::from(x as i64)
                } else {
                    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
                }
            }
            (PB_STRING, Wire::Bytes(b)) => Value::String(String::from_utf8_lossy(b).into_owned()),
            (PB_BOOL, Wire::Varint(x)) => Value::Bool(x != 0),
            _ => continue,
        };
    }
    Ok(out)
}

/// The value of a one-element float or double tensor.
fn scalar_tensor(data: &[u8]) -> Result<Option<f64>, DecodeError> {
    let mut dtype = 0;
    let mut elements = 1u64;
    let mut content: &[u8] = &[];
    let mut values = Vec::new();
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (TENSOR_DTYPE, Wire::Varint(x)) => dtype = x,
            (TENSOR_SHAPE, Wire::Bytes(b)) => elements = shape_elements(b)?,
            (TENSOR_CONTENT, Wire::Bytes(b)) => content = b,
            (TENSOR_FLOAT_VAL, v) => each_fixed32(v, |x| values.push(f64::from(f32::from_bits(x)))),
            (TENSOR_DOUBLE_VAL, v) => each_fixed64(v, |x| values.push(f64::from_bits(x))),
            _ => {}
        }
    }
    if elements != 1 {
        return Ok(None);
    }
    Ok(match dtype {
        DT_FLOAT if content.len() == 4 => Some(f64::from(f32::from_le_bytes(
            content.try_into().expect("4 bytes"),
        ))),
        DT_DOUBLE if content.len() == 8 => {
            Some(f64::from_le_bytes(content.try_into().expect("8 bytes")))
        }
        DT_FLOAT | DT_DOUBLE => values.first().copied(),
        _ => None,
    })
}

/// The number of elements a `TensorShapeProto` describes (1 for a scalar).
fn shape_elements(data: &[u8]) -> Result<u64, DecodeError> {
    let mut n = 1u64;
    let mut f = Fields::new(data);
    while let Some((field, v)) = f.next_field()? {
        if let (SHAPE_DIM, Wire::Bytes(dim)) = (field, v) {
            let mut size = 0u64;
            let mut d = Fields::new(dim);
            while let Some((k, v)) = d.next_field()? {
                if let (DIM_SIZE, Wire::Varint(x)) = (k, v) {
                    size = x;
                }
            }
            n = n.saturating_mul(size);
        }
    }
    Ok(n)
}

/// One run from the event files of one directory (and its split sub-directories).
pub fn read_run(
    dir: &Path,
    parts: &[(Option<String>, Vec<PathBuf>)],
    root: Option<&Path>,
) -> Result<Found> {
    let mut events = Events::default();
    let mut file_index = 0;
    for (prefix, files) in parts {
        let start = events.scalars.len();
        for file in files {
            let from = events.scalars.len();
            read_events(file, &read_file(file)?, &mut events)?;
            for e in &mut events.scalars[from..] {
                e.file = file_index;
            }
            file_index += 1;
        }
        if let Some(prefix) = prefix {
            for e in &mut events.scalars[start..] {
                e.tag = format!("{prefix}/{}", e.tag);
            }
        }
    }
    let first = parts.iter().flat_map(|(_, f)| f).next();
    let source = match (first, parts.iter().map(|(_, f)| f.len()).sum::<usize>()) {
        (Some(f), 1) => f.clone(),
        _ => dir.to_path_buf(),
    };
    if events.scalars.is_empty() {
        return Ok(Found::NotARun(
            "TensorBoard event files with no scalar summaries".into(),
        ));
    }
    let name = dir_run_name(dir, root);
    // Lightning's TensorBoard logger writes hparams.yaml beside its event files.
    let mut config = super::lightning_csv::read_hparams_yaml(dir)?;
    config.extend(events.hparams);
    let seed = seed_from_config(&config).or_else(|| seed_from_dirs(dir, root));
    let (metrics, history) = merge(events.scalars).finish();
    Ok(Found::Runs(vec![RunRecord {
        name,
        group: None,
        seed,
        task: task_from_config(&config),
        config,
        metrics,
        history,
        source,
        place: String::new(),
    }]))
}

/// Merges the points of a run's event files. A restarted job (resumed from a checkpoint) writes a
/// new file that logs some steps again; as TensorBoard does, the older timeline's points from the
/// restart step on are dropped: for each tag, a point is dropped when another file logs the same
/// tag from an earlier-or-equal step but began logging it later in wall time. Of several points
/// left at one step, the one written last wins. Files that log different tags (two writers side
/// by side) do not touch each other.
fn merge(events: Vec<ScalarEvent>) -> Series {
    let mut by_tag: BTreeMap<String, Vec<Point>> = BTreeMap::new();
    for (order, e) in events.into_iter().enumerate() {
        by_tag.entry(e.tag).or_default().push(Point {
            file: e.file,
            step: e.step,
            wall_time: e.wall_time,
            order,
            value: e.value,
        });
    }
    let mut series = Series::default();
    for (tag, mut pts) in by_tag {
        // Per file: the first step and first wall time at which it logs this tag.
        let mut starts: BTreeMap<usize, (i64, f64)> = BTreeMap::new();
        for p in &pts {
            let s = starts.entry(p.file).or_insert((p.step, p.wall_time));
            s.0 = s.0.min(p.step);
            s.1 = s.1.min(p.wall_time);
        }
        if starts.len() > 1 {
            pts.retain(|p| {
                !starts
                    .iter()
                    .any(|(&f, &(step, wall))| f != p.file && wall > p.wall_time && step <= p.step)
            });
        }
        pts.sort_by(|a, b| {
            a.step
                .cmp(&b.step)
                .then(a.wall_time.total_cmp(&b.wall_time))
                .then(a.order.cmp(&b.order))
        });
        for (j, p) in pts.iter().enumerate() {
            let superseded = pts.get(j + 1).is_some_and(|next| next.step == p.step);
            if !superseded {
                series
                    .push(&tag, p.step as f64, p.value)
                    .expect("tags hold numbers only");
            }
        }
    }
    series
}

/// One scalar point of a tag while merging: where it came from and in what order it was read.
struct Point {
    file: usize,
    step: i64,
    wall_time: f64,
    order: usize,
    value: f64,
}

/// The masked CRC-32C stored after a record's length or data must match the bytes it covers.
fn check_crc(
    path: &Path,
    place: &impl std::fmt::Display,
    what: &str,
    stored: u32,
    bytes: &[u8],
) -> Result<()> {
    let computed = masked_crc32c(bytes);
    if stored == computed {
        return Ok(());
    }
    Err(Error::input(
        path,
        place,
        format_args!(
            "bad CRC of the record {what} (stored {stored:#010x}, computed {computed:#010x}): \
             the file is corrupt"
        ),
    ))
}
