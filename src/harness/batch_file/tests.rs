//! Every way a `--batch` file can be malformed is bad input (exit 2) naming the file and, where
//! there is one, the tensor; a good file gives its task.

use super::*;
use crate::Exit;

/// A tensor to write: name, dtype, shape, and its values as little-endian bytes.
struct T(&'static str, &'static str, Vec<u64>, Vec<u8>);

fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A well-formed file of `tensors`, in order.
fn write(tensors: &[T]) -> tempfile::NamedTempFile {
    let mut header = Vec::new();
    let mut data = Vec::new();
    for T(name, dtype, shape, bytes) in tensors {
        let begin = data.len();
        data.extend_from_slice(bytes);
        header.push(format!(
            r#""{name}":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[{begin},{}]}}"#,
            data.len()
        ));
    }
    raw(&format!("{{{}}}", header.join(",")), &data)
}

/// A file of this header text and data, as given.
fn raw(header: &str, data: &[u8]) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(f.path(), bytes).unwrap();
    f
}

fn lm(input: &[u32], targets: &[i64], shape: Vec<u64>) -> tempfile::NamedTempFile {
    write(&[
        T("input", "U32", shape.clone(), u32s(input)),
        T("targets", "I64", shape, i64s(targets)),
    ])
}

fn refused(f: &tempfile::NamedTempFile, bounds: Bounds, says: &[&str]) {
    let e = validate(f.path(), bounds).unwrap_err();
    assert_eq!(e.exit(), Exit::Usage, "{}", e.message);
    assert!(
        e.message.contains(&f.path().display().to_string()),
        "names the file: {}",
        e.message
    );
    for s in says {
        assert!(e.message.contains(s), "`{s}` in: {}", e.message);
    }
}

#[test]
fn the_targets_tell_the_task() {
    let f = lm(&[1, 2, 3, 4, 5, 6], &[2, 3, -100, 5, 6, 7], vec![2, 3]);
    assert_eq!(
        validate(f.path(), Bounds::default()).unwrap(),
        Task::CausalLm
    );
    let cls = write(&[
        T("input", "F32", vec![2, 3], f32s(&[0.0; 6])),
        T("targets", "I64", vec![2], i64s(&[1, 0])),
    ]);
    let bounds = Bounds {
        classes: Some(2),
        vocab: None,
    };
    assert_eq!(validate(cls.path(), bounds).unwrap(), Task::Classification);
    let reg = write(&[
        T("input", "F32", vec![2, 3], f32s(&[0.0; 6])),
        T("targets", "F32", vec![2], f32s(&[0.5, -1.5])),
    ]);
    assert_eq!(validate(reg.path(), bounds).unwrap(), Task::Regression);
}

#[test]
fn a_broken_header_names_the_file() {
    refused(
        &raw("{not json", &[]),
        Bounds::default(),
        &["not a JSON object"],
    );
    let short = tempfile::NamedTempFile::new().unwrap();
    refused(&short, Bounds::default(), &["too short"]);
    // A header length past the end of the file.
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), 1000u64.to_le_bytes()).unwrap();
    refused(&f, Bounds::default(), &["1000-byte header"]);
    let missing = write(&[T("x", "F32", vec![1], f32s(&[1.0]))]);
    refused(
        &missing,
        Bounds::default(),
        &["no tensor named `input` (it holds x)"],
    );
}

#[test]
fn bad_offsets_unknown_dtypes_and_duplicate_names_name_the_tensor() {
    let dup = raw(
        r#"{"input":{"dtype":"U32","shape":[1],"data_offsets":[0,4]},
            "input":{"dtype":"U32","shape":[1],"data_offsets":[4,8]},
            "targets":{"dtype":"I64","shape":[1],"data_offsets":[8,16]}}"#,
        &[0; 16],
    );
    refused(&dup, Bounds::default(), &["tensor `input` is named twice"]);
    let unknown = raw(
        r#"{"input":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]},
            "targets":{"dtype":"I64","shape":[1],"data_offsets":[1,9]}}"#,
        &[0; 9],
    );
    refused(
        &unknown,
        Bounds::default(),
        &["tensor `input`", "dtype `Q4`"],
    );
    let wrong_size = raw(
        r#"{"input":{"dtype":"U32","shape":[2],"data_offsets":[0,4]},
            "targets":{"dtype":"I64","shape":[2],"data_offsets":[4,20]}}"#,
        &[0; 20],
    );
    refused(
        &wrong_size,
        Bounds::default(),
        &["tensor `input`", "[0, 4]"],
    );
    let overlap = raw(
        r#"{"input":{"dtype":"U32","shape":[2],"data_offsets":[0,8]},
            "targets":{"dtype":"U32","shape":[2],"data_offsets":[4,12]}}"#,
        &[0; 12],
    );
    refused(
        &overlap,
        Bounds::default(),
        &["tensor `targets`", "overlap"],
    );
    let past_end = raw(
        r#"{"input":{"dtype":"U32","shape":[2],"data_offsets":[0,8]},
            "targets":{"dtype":"U32","shape":[2],"data_offsets":[8,16]}}"#,
        &[0; 10],
    );
    refused(
        &past_end,
        Bounds::default(),
        &["16 bytes of data", "has 10"],
    );
    let bad_shape = raw(
        r#"{"input":{"dtype":"U32","shape":[-2],"data_offsets":[0,8]}}"#,
        &[0; 8],
    );
    refused(&bad_shape, Bounds::default(), &["tensor `input`", "shape"]);
}

#[test]
fn wrong_ranks_zero_rows_and_rows_that_disagree_are_refused() {
    let rank3 = lm(&[1; 8], &[1; 8], vec![2, 2, 2]);
    refused(
        &rank3,
        Bounds::default(),
        &["tensor `targets`", "[2, 2, 2]"],
    );
    let scalar = write(&[
        T("input", "F32", vec![1, 2], f32s(&[0.0; 2])),
        T("targets", "I64", vec![], i64s(&[0])),
    ]);
    refused(
        &scalar,
        Bounds::default(),
        &["tensor `targets`", "at least one row"],
    );
    let zero = lm(&[], &[], vec![0, 4]);
    refused(
        &zero,
        Bounds::default(),
        &["tensor `input`", "at least one row"],
    );
    let rows = write(&[
        T("input", "F32", vec![3, 2], f32s(&[0.0; 6])),
        T("targets", "I64", vec![2], i64s(&[0, 1])),
    ]);
    refused(
        &rows,
        Bounds::default(),
        &["tensor `targets`", "2 rows", "has 3"],
    );
    let positions = write(&[
        T("input", "U32", vec![2, 3], u32s(&[1; 6])),
        T("targets", "I64", vec![2, 2], i64s(&[1; 4])),
    ]);
    refused(
        &positions,
        Bounds::default(),
        &["tensor `targets`", "[2, 3]"],
    );
}

#[test]
fn ids_outside_the_vocabulary_are_refused_when_it_is_known() {
    let vocab = |v| Bounds {
        vocab: Some(v),
        classes: None,
    };
    let f = lm(&[1, 2, 3, 4], &[2, 3, 4, 60], vec![2, 2]);
    assert!(validate(f.path(), Bounds::default()).is_ok());
    refused(
        &f,
        vocab(48),
        &[
            "tensor `targets`",
            "1 of its 4 values",
            "outside [0, 48)",
            "60",
            "index 3",
        ],
    );
    let input = lm(&[1, 99, 3, 4], &[2, 3, 4, -100], vec![2, 2]);
    refused(&input, vocab(48), &["tensor `input`", "99"]);
    // Negative ids are wrong whatever the vocabulary; -100 only in the targets.
    let neg = lm(&[1, 2, 3, 4], &[2, -1, 4, -100], vec![2, 2]);
    refused(
        &neg,
        Bounds::default(),
        &["tensor `targets`", "negative", "-1"],
    );
    let classes = write(&[
        T("input", "F32", vec![2, 1], f32s(&[0.0; 2])),
        T("targets", "I64", vec![2], i64s(&[7, 9])),
    ]);
    let bounds = Bounds {
        vocab: None,
        classes: Some(8),
    };
    refused(
        &classes,
        bounds,
        &["tensor `targets`", "outside [0, 8)", "--classes"],
    );
}
