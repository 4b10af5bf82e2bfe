//! TensorBoard event files: TFRecord framing (both CRCs checked) around `Event` protos, of
//! which the scalar summaries are kept: `simple_value` (TF1, PyTorch, tensorboardX) and rank-0
//! float/double tensors (TF2 `tf.summary.scalar`).
//!
//! Several event files in one run directory (restarts) are merged by (tag, step), the latest
//! `wall_time` winning.

use super::crc32c::masked_crc32c;
use super::identity::{dir_run_name, seed_from_name};
use super::protobuf::{each_fixed32, each_fixed64, DecodeError, Fields, Wire};
use super::series::Series;
use super::{read_file, Found};
use crate::sweep::record::RunRecord;
use crate::{Error, Result};
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

/// Every scalar in one event file. Any framing or CRC fault is an error naming the record and
/// its byte offset: a half-read file would silently shorten the run.
pub fn read_events(path: &Path, bytes: &[u8], out: &mut Vec<ScalarEvent>) -> Result<()> {
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
        let computed = masked_crc32c(len_bytes);
        if stored != computed {
            return Err(Error::input(
                path,
                place,
                format_args!(
                    "bad CRC of the record length (stored {stored:#010x}, computed \
                     {computed:#010x}): the file is corrupt"
                ),
            ));
        }
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
        let computed = masked_crc32c(data);
        if stored != computed {
            return Err(Error::input(
                path,
                place,
                format_args!(
                    "bad CRC of the record data (stored {stored:#010x}, computed \
                     {computed:#010x}): the file is corrupt"
                ),
            ));
        }
        decode_event(data, out).map_err(|e| {
            Error::input(path, &place, format_args!("malformed Event protobuf: {e}"))
        })?;
        off = data_end + FOOTER_LEN;
    }
    Ok(())
}

fn decode_event(data: &[u8], out: &mut Vec<ScalarEvent>) -> Result<(), DecodeError> {
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
            if let Some((tag, value)) = decode_value(b)? {
                out.push(ScalarEvent {
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

/// A `Summary.Value` holding a scalar: its tag and value. Images, histograms, text are `None`.
fn decode_value(data: &[u8]) -> Result<Option<(String, f64)>, DecodeError> {
    let mut tag = None;
    let mut value = None;
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (VALUE_TAG, Wire::Bytes(b)) => tag = Some(String::from_utf8_lossy(b).into_owned()),
            (VALUE_SIMPLE, Wire::Fixed32(x)) => value = Some(f64::from(f32::from_bits(x))),
            (VALUE_TENSOR, Wire::Bytes(b)) => value = scalar_tensor(b)?,
            _ => {}
        }
    }
    Ok(tag.zip(value))
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
    let mut events = Vec::new();
    for (prefix, files) in parts {
        let start = events.len();
        for file in files {
            read_events(file, &read_file(file)?, &mut events)?;
        }
        if let Some(prefix) = prefix {
            for e in &mut events[start..] {
                e.tag = format!("{prefix}/{}", e.tag);
            }
        }
    }
    let first = parts.iter().flat_map(|(_, f)| f).next();
    let source = match (first, parts.iter().map(|(_, f)| f.len()).sum::<usize>()) {
        (Some(f), 1) => f.clone(),
        _ => dir.to_path_buf(),
    };
    if events.is_empty() {
        return Ok(Found::NotARun(
            "TensorBoard event files with no scalar summaries".into(),
        ));
    }
    let name = dir_run_name(dir, root);
    let seed = dir
        .ancestors()
        .take(3)
        .filter_map(|d| d.file_name()?.to_str())
        .find_map(seed_from_name);
    let (metrics, history) = merge(events).finish();
    Ok(Found::Runs(vec![RunRecord {
        name,
        group: None,
        seed,
        task: None,
        config: Default::default(),
        metrics,
        history,
        source,
        place: String::new(),
    }]))
}

/// Merges points by (tag, step): of several at one step, the one written last wins.
fn merge(events: Vec<ScalarEvent>) -> Series {
    let mut by_tag: BTreeMap<String, Vec<(i64, f64, usize, f64)>> = BTreeMap::new();
    for (i, e) in events.into_iter().enumerate() {
        by_tag
            .entry(e.tag)
            .or_default()
            .push((e.step, e.wall_time, i, e.value));
    }
    let mut series = Series::default();
    for (tag, mut pts) in by_tag {
        pts.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        for (j, &(step, _, _, value)) in pts.iter().enumerate() {
            let superseded = pts.get(j + 1).is_some_and(|next| next.0 == step);
            if !superseded {
                series
                    .push(&tag, step as f64, value)
                    .expect("tags hold numbers only");
            }
        }
    }
    series
}
