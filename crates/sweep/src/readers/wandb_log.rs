//! W&B's binary run log `run-<id>.wandb`: the only place an offline run keeps its history, and
//! the one file that has every logged row of an online run.
//!
//! Framing: a 7-byte header (`:W&B`, u16 LE 0xBEE1, version 0), then LevelDB-log blocks of
//! 32 KiB; each record is u32 LE CRC-32 (zlib; of the type byte, then the data), u16 LE length,
//! u8 type (1 full, 2 first, 3 middle, 4 last), data. A block tail shorter than a record header
//! is padding. Payloads are `wandb_internal.Record` protos; the fields read are listed below.

use super::cells::{nonfinite, sanitize_nonfinite};
use super::crc32::crc32_update;
use super::identity::flatten_into;
use super::protobuf::{DecodeError, Fields, Wire};
use super::series::Series;
use crate::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const FILE_HEADER: &[u8] = b":W&B\xe1\xbe\x00";
const BLOCK_LEN: usize = 32 * 1024;
const RECORD_HEADER_LEN: usize = 7;
const FULL: u8 = 1;
const FIRST: u8 = 2;
const MIDDLE: u8 = 3;
const LAST: u8 = 4;

/// `Record` fields.
const RECORD_HISTORY: u32 = 2;
const RECORD_SUMMARY: u32 = 3;
const RECORD_CONFIG: u32 = 5;
const RECORD_RUN: u32 = 17;
/// `HistoryRecord`: `item` (repeated `HistoryItem`), `step` (`HistoryStep{num = 1}`).
const HISTORY_ITEM: u32 = 1;
const HISTORY_STEP: u32 = 2;
/// `HistoryItem`, `SummaryItem`, `ConfigItem`: key, nested key, and the value (typed fields of
/// newer SDKs, or JSON text).
const ITEM_KEY: u32 = 1;
const ITEM_NESTED_KEY: u32 = 2;
const ITEM_BOOLEAN: u32 = 4;
const ITEM_INTEGER: u32 = 5;
const ITEM_NUMBER: u32 = 6;
const ITEM_TEXT: u32 = 7;
const ITEM_JSON: u32 = 8;
const ITEM_VALUE_JSON: u32 = 16;
/// `SummaryRecord` / `ConfigRecord`: `update` (repeated items), `remove`.
const UPDATE: u32 = 1;
const REMOVE: u32 = 2;
/// `RunRecord` fields.
const RUN_ID: u32 = 1;
const RUN_CONFIG: u32 = 4;
const RUN_SUMMARY: u32 = 5;
const RUN_GROUP: u32 = 6;
const RUN_DISPLAY_NAME: u32 = 8;

/// What a run log says about its run.
#[derive(Debug, Default)]
pub struct WandbLog {
    pub run_id: Option<String>,
    pub display_name: Option<String>,
    pub group: Option<String>,
    pub config: BTreeMap<String, Value>,
    pub summary: BTreeMap<String, f64>,
    pub history: Series,
}

/// Reads a whole `.wandb` file; any framing or CRC fault is an error naming the byte offset.
pub fn read(path: &Path, bytes: &[u8]) -> Result<WandbLog> {
    if !bytes.starts_with(FILE_HEADER) {
        return Err(Error::input(
            path,
            "byte 0",
            "not a W&B run log: the file does not start with the `:W&B` header",
        ));
    }
    let mut log = WandbLog::default();
    let mut pos = FILE_HEADER.len();
    let mut pending: Vec<u8> = Vec::new();
    let mut pending_at = None;
    let mut index = 0usize;
    while pos < bytes.len() {
        let left_in_block = BLOCK_LEN - pos % BLOCK_LEN;
        if left_in_block < RECORD_HEADER_LEN {
            pos += left_in_block;
            continue;
        }
        let place = format!("record at byte {pos}");
        let left = bytes.len() - pos;
        if left < RECORD_HEADER_LEN {
            if bytes[pos..].iter().all(|&b| b == 0) {
                break;
            }
            return Err(truncated(path, &place, left));
        }
        let crc = u32::from_le_bytes(bytes[pos..pos + 4].try_into().expect("4 bytes"));
        let len = usize::from(u16::from_le_bytes([bytes[pos + 4], bytes[pos + 5]]));
        let kind = bytes[pos + 6];
        if crc == 0 && len == 0 && kind == 0 {
            // Zeroed space: the rest of the block is padding.
            pos += left_in_block;
            continue;
        }
        let start = pos + RECORD_HEADER_LEN;
        if len > bytes.len() - start {
            return Err(truncated(path, &place, left));
        }
        let data = &bytes[start..start + len];
        let computed = crc32_update(crc32_update(0, &[kind]), data);
        if computed != crc {
            return Err(Error::input(
                path,
                &place,
                format_args!(
                    "bad CRC (stored {crc:#010x}, computed {computed:#010x}): the file is corrupt"
                ),
            ));
        }
        pos = start + len;
        let whole: &[u8] = match kind {
            FULL => data,
            FIRST => {
                pending.clear();
                pending.extend_from_slice(data);
                pending_at = Some(place);
                continue;
            }
            MIDDLE | LAST if pending_at.is_some() => {
                pending.extend_from_slice(data);
                if kind == MIDDLE {
                    continue;
                }
                &pending
            }
            _ => {
                return Err(Error::input(
                    path,
                    &place,
                    format_args!("unexpected record type {kind}"),
                ))
            }
        };
        index += 1;
        let at = pending_at.take().unwrap_or(place);
        decode_record(whole, &mut log).map_err(|e| match e {
            Bad::Proto(e) => {
                Error::input(path, &at, format_args!("malformed Record protobuf: {e}"))
            }
            Bad::Mixed(m) => Error::input(path, format_args!("{at} (record {index})"), m),
        })?;
    }
    if pending_at.is_some() {
        return Err(Error::input(
            path,
            pending_at.unwrap_or_default(),
            "truncated: a record split across blocks has no last part",
        ));
    }
    Ok(log)
}

fn truncated(path: &Path, place: &str, left: usize) -> Error {
    Error::input(
        path,
        place,
        format_args!(
            "truncated record: only {left} bytes left (the file was cut short, or the run is \
             still writing it)"
        ),
    )
}

enum Bad {
    Proto(DecodeError),
    Mixed(String),
}

impl From<DecodeError> for Bad {
    fn from(e: DecodeError) -> Self {
        Bad::Proto(e)
    }
}

fn decode_record(data: &[u8], log: &mut WandbLog) -> Result<(), Bad> {
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        let Wire::Bytes(b) = v else { continue };
        match n {
            RECORD_HISTORY => decode_history(b, &mut log.history)?,
            RECORD_SUMMARY => decode_summary(b, &mut log.summary)?,
            RECORD_CONFIG => decode_config(b, &mut log.config)?,
            RECORD_RUN => decode_run(b, log)?,
            _ => {}
        }
    }
    Ok(())
}

/// One item's key and value.
struct Item {
    key: String,
    value: ItemValue,
}

enum ItemValue {
    Number(f64),
    Text(String),
    Json(Value),
    Nothing,
}

fn decode_item(data: &[u8]) -> Result<Item, DecodeError> {
    let mut key = String::new();
    let mut nested: Vec<String> = Vec::new();
    let mut value = ItemValue::Nothing;
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (ITEM_KEY, Wire::Bytes(b)) => key = String::from_utf8_lossy(b).into_owned(),
            (ITEM_NESTED_KEY, Wire::Bytes(b)) => {
                nested.push(String::from_utf8_lossy(b).into_owned())
            }
            (ITEM_BOOLEAN, Wire::Varint(x)) => value = ItemValue::Text((x != 0).to_string()),
            // sint64: zigzag-encoded.
            (ITEM_INTEGER, Wire::Varint(x)) => {
                value = ItemValue::Number(((x >> 1) as i64 ^ -((x & 1) as i64)) as f64)
            }
            (ITEM_NUMBER, Wire::Fixed64(x)) => value = ItemValue::Number(f64::from_bits(x)),
            (ITEM_TEXT, Wire::Bytes(b)) => {
                value = ItemValue::Text(String::from_utf8_lossy(b).into_owned())
            }
            (ITEM_JSON | ITEM_VALUE_JSON, Wire::Bytes(b)) => {
                value = match serde_json::from_slice::<Value>(&sanitize_nonfinite(b)) {
                    Ok(Value::String(s)) => {
                        nonfinite(&s).map_or(ItemValue::Text(s), ItemValue::Number)
                    }
                    Ok(Value::Number(n)) => ItemValue::Number(n.as_f64().unwrap_or(f64::NAN)),
                    Ok(v) => ItemValue::Json(v),
                    Err(_) => ItemValue::Text(String::from_utf8_lossy(b).into_owned()),
                }
            }
            _ => {}
        }
    }
    if key.is_empty() {
        key = nested.join(".");
    }
    Ok(Item { key, value })
}

fn decode_history(data: &[u8], series: &mut Series) -> Result<(), Bad> {
    let mut items = Vec::new();
    let mut step = 0i64;
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (HISTORY_ITEM, Wire::Bytes(b)) => items.push(decode_item(b)?),
            (HISTORY_STEP, Wire::Bytes(b)) => {
                let mut s = Fields::new(b);
                while let Some((k, v)) = s.next_field()? {
                    if let (1, Wire::Varint(x)) = (k, v) {
                        step = x as i64;
                    }
                }
            }
            _ => {}
        }
    }
    for item in items {
        if item.key.starts_with('_') {
            continue;
        }
        let r = match item.value {
            ItemValue::Number(x) => series.push(&item.key, step as f64, x),
            ItemValue::Text(t) => series.note_text(&item.key, &format!("{t:?}"), "history"),
            ItemValue::Json(Value::Object(m)) if !m.contains_key("_type") => {
                let mut flat = BTreeMap::new();
                flatten_into(&item.key, Value::Object(m), &mut flat);
                flat.iter()
                    .filter_map(|(k, v)| Some((k, v.as_f64()?)))
                    .try_for_each(|(k, x)| series.push(k, step as f64, x))
            }
            ItemValue::Json(_) | ItemValue::Nothing => Ok(()),
        };
        r.map_err(|m| Bad::Mixed(m.message))?;
    }
    Ok(())
}

fn decode_summary(data: &[u8], summary: &mut BTreeMap<String, f64>) -> Result<(), DecodeError> {
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        let Wire::Bytes(b) = v else { continue };
        let item = decode_item(b)?;
        if item.key.starts_with('_') {
            continue;
        }
        match (n, item.value) {
            (UPDATE, ItemValue::Number(x)) => {
                summary.insert(item.key, x);
            }
            (UPDATE, ItemValue::Json(Value::Object(m))) if !m.contains_key("_type") => {
                let mut flat = BTreeMap::new();
                flatten_into(&item.key, Value::Object(m), &mut flat);
                summary.extend(flat.into_iter().filter_map(|(k, v)| Some((k, v.as_f64()?))));
            }
            (REMOVE, _) => {
                summary.remove(&item.key);
            }
            _ => {}
        }
    }
    Ok(())
}

fn decode_config(data: &[u8], config: &mut BTreeMap<String, Value>) -> Result<(), DecodeError> {
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        let Wire::Bytes(b) = v else { continue };
        let item = decode_item(b)?;
        if item.key.starts_with('_') {
            continue;
        }
        if n == REMOVE {
            config.retain(|k, _| k != &item.key && !k.starts_with(&format!("{}.", item.key)));
            continue;
        }
        let value = match item.value {
            ItemValue::Number(x) => {
                serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
            }
            ItemValue::Text(t) => Value::String(t),
            // Older SDKs wrap each value as {"desc": …, "value": …}.
            ItemValue::Json(Value::Object(mut m))
                if m.contains_key("value")
                    && m.len() <= 2
                    && (m.len() == 1 || m.contains_key("desc")) =>
            {
                m.remove("value").unwrap_or(Value::Null)
            }
            ItemValue::Json(v) => v,
            ItemValue::Nothing => Value::Null,
        };
        if n == UPDATE {
            flatten_into(&item.key, value, config);
        }
    }
    Ok(())
}

fn decode_run(data: &[u8], log: &mut WandbLog) -> Result<(), DecodeError> {
    let text = |b: &[u8]| Some(String::from_utf8_lossy(b).into_owned()).filter(|s| !s.is_empty());
    let mut f = Fields::new(data);
    while let Some((n, v)) = f.next_field()? {
        let Wire::Bytes(b) = v else { continue };
        match n {
            RUN_ID => log.run_id = text(b),
            RUN_GROUP => log.group = text(b),
            RUN_DISPLAY_NAME => log.display_name = text(b),
            RUN_CONFIG => decode_config(b, &mut log.config)?,
            RUN_SUMMARY => decode_summary(b, &mut log.summary)?,
            _ => {}
        }
    }
    Ok(())
}
