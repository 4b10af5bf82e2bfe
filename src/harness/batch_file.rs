//! `--batch FILE.safetensors`: the file is checked here, before anything is built, so a broken
//! one is bad input (exit 2, naming the file and the tensor) and never "the model returned an
//! error": the header (its length, JSON without duplicate names, every tensor's dtype, shape
//! and byte range covering the data exactly, as the safetensors format requires), `input` and
//! `targets` (dtypes mldebug reads, ranks, at least one row, rows that agree), and the integer
//! values (token ids and class ids not negative, targets `-100` where ignored, and below the
//! vocabulary or class count when `--vocab` or `--classes` gives it). The targets tell the task:
//! integer `[N, T]` is a causal LM, integer `[N]` a classifier, floats a regression.
//!
//! Not for: loading the tensors (the harness does that, `mldebug_diagnostics::harness`).

use crate::{Error, Result};
use mldebug_diagnostics::Task;
use serde::de::{Deserializer, MapAccess, Visitor};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The largest header a safetensors file may declare (its own format caps it at 100 MB).
const MAX_HEADER: u64 = 100_000_000;
/// How much tensor data is read at a time when the values are checked.
const CHUNK: usize = 1 << 20;
/// The target value that means "ignored".
const IGNORE_INDEX: i64 = -100;

/// What the limits on the values are, when the flags give them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds {
    /// `--vocab`: token ids (and a causal LM's targets) are below it.
    pub vocab: Option<usize>,
    /// `--classes`: a classifier's targets are below it.
    pub classes: Option<usize>,
}

/// One tensor of the header.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    name: String,
    dtype: Dtype,
    shape: Vec<u64>,
    begin: u64,
    end: u64,
}

/// The dtypes of the safetensors format that mldebug reads, and their widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    U8,
    U16,
    U32,
    I16,
    I32,
    I64,
    F16,
    Bf16,
    F32,
    F64,
}

impl Dtype {
    fn parse(s: &str) -> Option<Dtype> {
        Some(match s {
            "U8" => Dtype::U8,
            "U16" => Dtype::U16,
            "U32" => Dtype::U32,
            "I16" => Dtype::I16,
            "I32" => Dtype::I32,
            "I64" => Dtype::I64,
            "F16" => Dtype::F16,
            "BF16" => Dtype::Bf16,
            "F32" => Dtype::F32,
            "F64" => Dtype::F64,
            _ => return None,
        })
    }

    fn bytes(self) -> u64 {
        match self {
            Dtype::U8 => 1,
            Dtype::U16 | Dtype::I16 | Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Dtype::F16 | Dtype::Bf16 | Dtype::F32 | Dtype::F64)
    }

    /// One little-endian value as an integer (integer dtypes only).
    fn int(self, b: &[u8]) -> i64 {
        match self {
            Dtype::U8 => i64::from(b[0]),
            Dtype::U16 => i64::from(u16::from_le_bytes([b[0], b[1]])),
            Dtype::I16 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            Dtype::U32 => i64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            Dtype::I32 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => i64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])),
        }
    }
}

/// Checks the batch in `path` (see the module docs) and gives the task it implies; a usage
/// error names the file, the tensor and what is wrong.
pub fn validate(path: &Path, bounds: Bounds) -> Result<Task> {
    let mut file = std::fs::File::open(path)
        .map_err(|e| Error::usage(format!("--batch {}: cannot open it: {e}", path.display())))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(path.display(), &e))?
        .len();
    let (data_start, entries) = read_header(path, &mut file, len)?;
    check_offsets(path, &entries, len - data_start)?;
    let find = |name: &str| {
        entries.iter().find(|e| e.name == name).ok_or_else(|| {
            let mut names: Vec<String> = entries
                .iter()
                .map(|e| e.name.escape_debug().to_string())
                .collect();
            names.sort_unstable();
            Error::input(
                path,
                "header",
                format!(
                    "no tensor named `{name}` (it holds {}); save the model's input as `input` \
                     and its labels as `targets`",
                    names.join(", ")
                ),
            )
        })
    };
    let (input, targets) = (find("input")?, find("targets")?);
    let task = check_shapes(path, input, targets)?;
    let input_limit = bounds.vocab;
    let target_limit = match task {
        Task::CausalLm => bounds.vocab,
        _ => bounds.classes,
    };
    if !input.dtype.is_float() {
        check_values(path, &mut file, data_start, input, input_limit, false)?;
    }
    if !targets.dtype.is_float() {
        check_values(path, &mut file, data_start, targets, target_limit, true)?;
    }
    Ok(task)
}

/// The header's tensors, and where the data starts.
fn read_header(path: &Path, f: &mut std::fs::File, len: u64) -> Result<(u64, Vec<Entry>)> {
    let mut n = [0u8; 8];
    f.read_exact(&mut n)
        .map_err(|_| Error::input(path, "byte 0", "too short to be a safetensors file"))?;
    let n = u64::from_le_bytes(n);
    if n > MAX_HEADER || n > len - 8 {
        return Err(Error::input(
            path,
            "byte 0",
            format!("declares a {n}-byte header in a {len}-byte file; not a safetensors file"),
        ));
    }
    let mut buf = Vec::with_capacity(n as usize);
    f.take(n)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path.display(), &e))?;
    let map: Pairs = serde_json::from_slice(&buf).map_err(|e| {
        Error::input(
            path,
            format!("header, column {}", e.column()),
            format!("not a JSON object: {e}"),
        )
    })?;
    let mut entries: Vec<Entry> = Vec::new();
    for (name, value) in map.0 {
        if entries.iter().any(|e| e.name == name) {
            return Err(Error::input(
                path,
                "header",
                format!("tensor `{}` is named twice", name.escape_debug()),
            ));
        }
        if name == "__metadata__" {
            continue;
        }
        entries.push(entry(path, name, &value)?);
    }
    Ok((8 + n, entries))
}

/// One tensor's dtype, shape and byte range, read strictly.
fn entry(path: &Path, name: String, v: &serde_json::Value) -> Result<Entry> {
    let place = format!("tensor `{}`", name.escape_debug());
    let bad = |why: String| Error::input(path, &place, why);
    let dtype_name = v["dtype"].as_str().unwrap_or("");
    let dtype = Dtype::parse(dtype_name).ok_or_else(|| {
        bad(format!(
            "dtype `{}` is not one mldebug reads (U8, U16, U32, I16, I32, I64 for ids; F16, BF16, \
             F32, F64 for values)",
            dtype_name.escape_debug()
        ))
    })?;
    let numbers = |key: &str| -> Option<Vec<u64>> {
        v[key]
            .as_array()?
            .iter()
            .map(serde_json::Value::as_u64)
            .collect()
    };
    let shape = numbers("shape")
        .ok_or_else(|| bad("`shape` is not a list of non-negative integers".into()))?;
    let offsets = numbers("data_offsets")
        .filter(|o| o.len() == 2)
        .ok_or_else(|| bad("`data_offsets` is not [begin, end]".into()))?;
    let bytes = shape
        .iter()
        .try_fold(dtype.bytes(), |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad(format!("shape {shape:?} is too large")))?;
    let (begin, end) = (offsets[0], offsets[1]);
    if end < begin || end - begin != bytes {
        return Err(bad(format!(
            "data_offsets [{begin}, {end}] do not hold its {bytes} bytes ({dtype_name} {shape:?})"
        )));
    }
    Ok(Entry {
        name,
        dtype,
        shape,
        begin,
        end,
    })
}

/// The tensors' byte ranges cover the data section exactly, without gaps or overlaps.
fn check_offsets(path: &Path, entries: &[Entry], data_len: u64) -> Result<()> {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by_key(|e| (e.begin, e.end));
    let mut at = 0;
    for e in sorted {
        if e.begin != at {
            return Err(Error::input(
                path,
                format!("tensor `{}`", e.name.escape_debug()),
                format!(
                    "data_offsets [{}, {}] start at byte {} of the data, not {at}: the tensors \
                     overlap or leave a gap",
                    e.begin, e.end, e.begin
                ),
            ));
        }
        at = e.end;
    }
    if at != data_len {
        return Err(Error::input(
            path,
            "header",
            format!("the tensors hold {at} bytes of data but the file has {data_len}: cut short or padded"),
        ));
    }
    Ok(())
}

/// Ranks, rows and dtypes of `input` and `targets`; the task they imply.
fn check_shapes(path: &Path, input: &Entry, targets: &Entry) -> Result<Task> {
    let bad = |e: &Entry, why: String| Error::input(path, format!("tensor `{}`", e.name), why);
    for e in [input, targets] {
        if e.shape.is_empty() || e.shape.contains(&0) {
            return Err(bad(
                e,
                format!(
                    "shape {:?}: needs at least one row and no empty dimension",
                    e.shape
                ),
            ));
        }
    }
    if !(1..=2).contains(&targets.shape.len()) {
        return Err(bad(
            targets,
            format!(
                "shape {:?}: expected [N] (one class id or value per row) or [N, T] (one per position)",
                targets.shape
            ),
        ));
    }
    if input.shape[0] != targets.shape[0] {
        return Err(bad(
            targets,
            format!(
                "{} rows, but `input` has {} (shape {:?})",
                targets.shape[0], input.shape[0], input.shape
            ),
        ));
    }
    Ok(match (targets.dtype.is_float(), targets.shape.len()) {
        (true, _) => Task::Regression,
        (false, 1) => Task::Classification,
        (false, _) => {
            if input.shape.len() < 2 || input.shape[..2] != targets.shape[..] {
                return Err(bad(
                    targets,
                    format!(
                        "shape {:?}: one target per position needs `input` to start with the \
                         same [N, T], but it is {:?}",
                        targets.shape, input.shape
                    ),
                ));
            }
            Task::CausalLm
        }
    })
}

/// Every integer value of `e` is an id: not negative (targets may be -100) and below `limit`
/// when it is known. Read in chunks: memory stays bounded whatever the file's size.
fn check_values(
    path: &Path,
    f: &mut std::fs::File,
    data_start: u64,
    e: &Entry,
    limit: Option<usize>,
    is_target: bool,
) -> Result<()> {
    f.seek(SeekFrom::Start(data_start + e.begin))
        .map_err(|err| Error::io(path.display(), &err))?;
    let width = e.dtype.bytes() as usize;
    let total = (e.end - e.begin) as usize / width;
    let limit = limit.map(|l| l as i64);
    let (mut bad, mut first) = (0usize, None);
    let mut reader = f.take(e.end - e.begin);
    let mut buf = vec![0u8; CHUNK - CHUNK % width];
    let mut index = 0usize;
    loop {
        let n = read_full(&mut reader, &mut buf).map_err(|err| Error::io(path.display(), &err))?;
        for value in buf[..n - n % width].chunks_exact(width) {
            let v = e.dtype.int(value);
            let ok = (v >= 0 && limit.is_none_or(|l| v < l)) || (is_target && v == IGNORE_INDEX);
            if !ok {
                bad += 1;
                first.get_or_insert((v, index));
            }
            index += 1;
        }
        if n < buf.len() {
            break;
        }
    }
    let Some((value, at)) = first else {
        return Ok(());
    };
    let range = match limit {
        Some(l) => format!("outside [0, {l})"),
        None => "negative".to_string(),
    };
    let what = if is_target {
        format!("{range} and not -100")
    } else {
        range
    };
    let flag = match (is_target, limit.is_some()) {
        (_, false) => "",
        (false, true) => " (--vocab)",
        (true, true) => " (--vocab or --classes)",
    };
    Err(Error::input(
        path,
        format!("tensor `{}`", e.name),
        format!(
            "{bad} of its {total} values are {what}{flag}: the first, {value}, at index {at}; ids \
             index the model's vocabulary or classes"
        ),
    ))
}

/// Fills `buf` as far as the stream allows; the count read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// A JSON object's members in order, duplicates kept (serde_json's maps keep only the last).
struct Pairs(Vec<(String, serde_json::Value)>);

impl<'de> serde::Deserialize<'de> for Pairs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Pairs, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Pairs;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of tensors")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Pairs, A::Error> {
                let mut pairs = Vec::new();
                while let Some(pair) = m.next_entry()? {
                    pairs.push(pair);
                }
                Ok(Pairs(pairs))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests;
