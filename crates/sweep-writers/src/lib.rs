//! Writers for the run-file formats the sweep readers (`mldebug-sweep`) read, so that tests
//! build their fixtures in a temporary directory: TensorBoard event files, W&B run logs, MLflow's
//! tables. Test support only, a dev-dependency of the sweep crate's integration tests and of the
//! mldebug binary's (the doctor, the fuzz seeds, the readers on the command line), which both
//! use it the same way, as a crate.
//!
//! The TFRecord/protobuf encoder here is written independently of the reader (a bitwise
//! CRC-32C, not the reader's table), so a shared mistake cannot hide.
//!
//! The event-file encoder was checked once against the official reader: files it wrote in each
//! of the three scalar encodings were loaded with TensorBoard 2.21.0's
//! `event_file_loader.LegacyEventFileLoader` (which checks the length CRC) and gave back the same
//! wall times, steps, tags and values. Its first record is also byte-identical to the one
//! tensorboardX writes (the sweep crate's test `a_file_written_by_tensorboardx`).

use std::path::{Path, PathBuf};

/// Writes `contents` to `dir/rel`, creating directories.
pub fn write(dir: &Path, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, contents).unwrap();
    p
}

/// CRC-32C, one bit at a time (reflected polynomial 0x82F63B78).
pub fn crc32c_bitwise(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// TFRecord's masked CRC-32C of `data`.
pub fn masked_crc(data: &[u8]) -> u32 {
    let c = crc32c_bitwise(data);
    c.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// One TFRecord: length, masked CRC of the length, data, masked CRC of the data.
pub fn tfrecord(data: &[u8]) -> Vec<u8> {
    let len = (data.len() as u64).to_le_bytes();
    let mut out = Vec::new();
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc(data).to_le_bytes());
    out
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(field: u32, wire: u32, out: &mut Vec<u8>) {
    varint(u64::from(field << 3 | wire), out);
}

fn bytes_field(field: u32, b: &[u8], out: &mut Vec<u8>) {
    key(field, 2, out);
    varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// `Event{wall_time=1, step=2, file_version=3}`: the first record of every event file.
pub fn file_version_event(wall_time: f64) -> Vec<u8> {
    let mut e = Vec::new();
    key(1, 1, &mut e);
    e.extend_from_slice(&wall_time.to_le_bytes());
    bytes_field(3, b"brain.Event:2", &mut e);
    e
}

/// How a scalar is encoded in a `Summary.Value`.
#[derive(Clone, Copy)]
pub enum Encoding {
    /// `simple_value` (field 2, fixed32): TF1, PyTorch, tensorboardX.
    Simple,
    /// A rank-0 DT_FLOAT tensor with `float_val` (TF2 `tf.summary.scalar`).
    TensorFloatVal,
    /// A rank-0 DT_DOUBLE tensor with 8 bytes of `tensor_content`.
    TensorDoubleContent,
}

/// `Event{wall_time, step, summary{value{tag, <scalar>}}}`.
pub fn scalar_event(wall_time: f64, step: i64, tag: &str, value: f64, enc: Encoding) -> Vec<u8> {
    let mut v = Vec::new();
    bytes_field(1, tag.as_bytes(), &mut v);
    match enc {
        Encoding::Simple => {
            key(2, 5, &mut v);
            v.extend_from_slice(&(value as f32).to_le_bytes());
        }
        Encoding::TensorFloatVal | Encoding::TensorDoubleContent => {
            let mut t = Vec::new();
            key(1, 0, &mut t);
            let double = matches!(enc, Encoding::TensorDoubleContent);
            varint(if double { 2 } else { 1 }, &mut t);
            bytes_field(2, &[], &mut t); // empty TensorShapeProto: rank 0
            if double {
                bytes_field(4, &value.to_le_bytes(), &mut t);
            } else {
                bytes_field(5, &(value as f32).to_le_bytes(), &mut t); // packed float_val
            }
            bytes_field(8, &t, &mut v);
        }
    }
    let mut summary = Vec::new();
    bytes_field(1, &v, &mut summary);
    let mut e = Vec::new();
    key(1, 1, &mut e);
    e.extend_from_slice(&wall_time.to_le_bytes());
    key(2, 0, &mut e);
    varint(step as u64, &mut e);
    bytes_field(5, &summary, &mut e);
    e
}

/// A whole event file: the version record, then one record per `(wall_time, step, tag, value)`.
pub fn event_file(points: &[(f64, i64, &str, f64)], enc: Encoding) -> Vec<u8> {
    let mut out = tfrecord(&file_version_event(points.first().map_or(0.0, |p| p.0)));
    for &(w, s, t, v) in points {
        out.extend(tfrecord(&scalar_event(w, s, t, v, enc)));
    }
    out
}

/// MLflow's tracking tables (the subset the reader uses, with MLflow's column types).
pub const MLFLOW_SCHEMA: &str = "
CREATE TABLE experiments (
    experiment_id INTEGER NOT NULL, name VARCHAR(256) NOT NULL, artifact_location VARCHAR(256),
    lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT,
    PRIMARY KEY (experiment_id), UNIQUE (name));
CREATE TABLE runs (
    run_uuid VARCHAR(32) NOT NULL, name VARCHAR(250), source_type VARCHAR(20),
    source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256),
    status VARCHAR(9), start_time BIGINT, end_time BIGINT, source_version VARCHAR(50),
    lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER,
    deleted_time BIGINT, PRIMARY KEY (run_uuid),
    FOREIGN KEY(experiment_id) REFERENCES experiments (experiment_id));
CREATE TABLE metrics (
    key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
    run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL,
    is_nan BOOLEAN DEFAULT '0' NOT NULL,
    PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan),
    FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid));
CREATE TABLE latest_metrics (
    key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT, step BIGINT NOT NULL,
    is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
CREATE TABLE params (
    key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
    PRIMARY KEY (key, run_uuid));
CREATE TABLE tags (
    key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
    PRIMARY KEY (key, run_uuid));
";

/// CRC-32 (zlib), one bit at a time.
pub fn crc32_bitwise(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A W&B `.wandb` run log holding `records` (serialized `Record` protos), framed as LevelDB-log
/// blocks of 32 KiB after the 7-byte `:W&B` header, records split across blocks as needed.
pub fn wandb_log(records: &[Vec<u8>]) -> Vec<u8> {
    const BLOCK: usize = 32 * 1024;
    let mut out = b":W&B\xe1\xbe\x00".to_vec();
    for r in records {
        let mut rest = &r[..];
        let mut first = true;
        loop {
            let left = BLOCK - out.len() % BLOCK;
            if left < 7 {
                out.resize(out.len() + left, 0);
                continue;
            }
            let room = left - 7;
            let n = rest.len().min(room);
            let last = n == rest.len();
            let kind: u8 = match (first, last) {
                (true, true) => 1,
                (true, false) => 2,
                (false, false) => 3,
                (false, true) => 4,
            };
            let mut typed = vec![kind];
            typed.extend_from_slice(&rest[..n]);
            out.extend_from_slice(&crc32_bitwise(&typed).to_le_bytes());
            out.extend_from_slice(&(n as u16).to_le_bytes());
            out.push(kind);
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            first = false;
            if last {
                break;
            }
        }
    }
    out
}

fn item(key: &str, value_json: &str) -> Vec<u8> {
    let mut i = Vec::new();
    bytes_field(2, key.as_bytes(), &mut i);
    bytes_field(16, value_json.as_bytes(), &mut i);
    i
}

/// `Record{history{item{nested_key, value_json}…, step{num}}}`.
pub fn wandb_history_record(step: u64, items: &[(&str, &str)]) -> Vec<u8> {
    let mut h = Vec::new();
    for (k, v) in items {
        bytes_field(1, &item(k, v), &mut h);
    }
    let mut s = Vec::new();
    key(1, 0, &mut s);
    varint(step, &mut s);
    bytes_field(2, &s, &mut h);
    let mut r = Vec::new();
    bytes_field(2, &h, &mut r);
    r
}

/// `Record{run{run_id, config{update…}, run_group, display_name}}`.
pub fn wandb_run_record(id: &str, name: &str, group: &str, config: &[(&str, &str)]) -> Vec<u8> {
    let mut c = Vec::new();
    for (k, v) in config {
        bytes_field(1, &item(k, v), &mut c);
    }
    let mut run = Vec::new();
    bytes_field(1, id.as_bytes(), &mut run);
    bytes_field(4, &c, &mut run);
    bytes_field(6, group.as_bytes(), &mut run);
    bytes_field(8, name.as_bytes(), &mut run);
    let mut r = Vec::new();
    bytes_field(17, &run, &mut r);
    r
}
