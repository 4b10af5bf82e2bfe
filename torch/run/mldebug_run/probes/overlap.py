"""Rows shared between the training loader's dataset and every other loader's: `overlap`
records, written once at the end of the observed run.

Each dataset is read in index order (`dataset[i]`, i < ITEMS_MAX, within TIME_BUDGET_S for all
datasets together): an item's fingerprint hashes its first element (a tensor's dtype, shape
and bytes; an array's bytes; a list of numbers or a string as text). Exact copies only:
augmentation drawn at random makes equal rows differ. Done at the end because reading items
may draw from the program's random streams, which then no longer matter. `complete` is false
when a dataset was longer than ITEMS_MAX or the time ran out.

Rows shared by construction, told apart from rows that happen to be equal: each dataset is
resolved through `Subset`s (nested ones too) to the dataset they index and the indices into it;
two loaders over one such dataset share the indices both hold (`construction: "indices"`, or
`"same_dataset"` when the two loaders iterate one dataset object). Over two datasets that are
not one object, the rows of a `TensorDataset`'s first tensor are compared by where they lie in
memory (`"storage"`: views of one tensor, such as `x[:800]` and `x[600:]`). `construction_rows`
counts the other loader's rows that are training rows by construction (None where neither
applies), `same_rows` says whether the two hold exactly the same rows (the training split
evaluated on purpose), and `within_train` whether every row of the other is a training row by
construction (the training split or a sample of it: a `Subset` of the training rows).

The loaders' map-style datasets are kept (data.py holds a reference to each) so that a program
that has returned from its training function still has them at its exit.

What it never does: read an iterable-style dataset (it has no index), or run before the end.
"""

import sys
import time

from .. import state as _state
from ..state import probe
from .tensors import new_hash, tensor_digest_into

ITEMS_MAX = 65536  # items read per dataset
INDICES_MAX = 1 << 24  # indices or row addresses compared per dataset (construction)
SUBSET_DEPTH = 16  # nested Subsets followed
TIME_BUDGET_S = 15.0  # all datasets together: the end of a run must stay prompt


def _first_element(item):
    if isinstance(item, dict):
        for key in ("input_ids", "pixel_values", "input", "inputs", "x", "image", "text"):
            if key in item:
                return item[key]
        return next(iter(item.values()), None)
    if isinstance(item, (tuple, list)) and item and not isinstance(item[0], (int, float)):
        return item[0]
    return item


def item_fingerprint(item):
    torch = sys.modules["torch"]
    value = _first_element(item)
    h = new_hash()
    if isinstance(value, torch.Tensor):
        tensor_digest_into(h, value)
    elif hasattr(value, "tobytes") and hasattr(value, "shape"):  # numpy array
        h.update(str(getattr(value, "dtype", "")).encode() + str(value.shape).encode())
        h.update(value.tobytes())
    elif hasattr(value, "tobytes") and hasattr(value, "size"):  # PIL image
        h.update(str(value.size).encode())
        h.update(value.tobytes())
    elif isinstance(value, (str, bytes, int, float, list, tuple)):
        h.update(repr(value).encode() if not isinstance(value, bytes) else value)
    else:
        return None
    return h.digest()


def _fingerprints(dataset, deadline):
    """Item fingerprints in index order (None where an item has none), and whether every item
    was read; (None, False) for a dataset without a length."""
    torch = sys.modules["torch"]
    try:
        length = len(dataset)
    except Exception:
        return None, False
    found = []
    with torch.no_grad():
        for i in range(min(length, ITEMS_MAX)):
            if time.monotonic() > deadline:
                return found, False
            found.append(item_fingerprint(dataset[i]))
    return found, length <= ITEMS_MAX


def _resolved(dataset):
    """(the dataset a chain of Subsets indexes, its indices into it or None for all rows)."""
    subset = sys.modules["torch"].utils.data.Subset
    indices = None
    for _ in range(SUBSET_DEPTH):
        if not isinstance(dataset, subset):
            break
        own = [int(i) for i in dataset.indices]
        indices = own if indices is None else [own[i] for i in indices]
        dataset = dataset.dataset
    return dataset, indices


def _all_rows(base, indices):
    if indices is not None:
        return indices
    try:
        return range(len(base))
    except Exception:
        return None


def _row_addresses(base, indices):
    """(storage address, byte offset) of each row of a TensorDataset-like dataset's first
    tensor (a `tensors` tuple), or None."""
    torch = sys.modules["torch"]
    tensors = getattr(base, "tensors", None)
    if not isinstance(tensors, (tuple, list)) or not tensors:
        return None
    t = tensors[0]
    if not isinstance(t, torch.Tensor) or t.dim() == 0 or t.is_meta or t.layout != torch.strided:
        return None
    rows = _all_rows(base, indices)
    if rows is None or len(rows) > INDICES_MAX:
        return None
    ptr = t.untyped_storage().data_ptr()
    offset, stride, size = t.storage_offset(), t.stride(0), t.element_size()
    return [(ptr, (offset + i * stride) * size) for i in rows]


def construction(train_set, dataset):
    """(how, shared rows, same rows, within) by construction between the training dataset and
    another: how is `same_dataset`, `indices`, `storage` or None (not known); within: every row
    of the other is a training row."""
    if dataset is train_set:
        return "same_dataset", None, True, True
    train_base, train_idx = _resolved(train_set)
    base, idx = _resolved(dataset)
    if base is train_base:
        train_rows, rows = _all_rows(train_base, train_idx), _all_rows(base, idx)
        if train_rows is None or rows is None or max(len(train_rows), len(rows)) > INDICES_MAX:
            return None, None, False, False
        how, train_keys, keys = "indices", set(train_rows), rows
    else:
        train_keys, keys = _row_addresses(train_base, train_idx), _row_addresses(base, idx)
        if train_keys is None or keys is None:
            return None, None, False, False
        how, train_keys = "storage", set(train_keys)
    shared = sum(1 for k in keys if k in train_keys)
    return how, shared, shared == len(train_keys) == len(set(keys)), len(keys) > 0 and shared == len(keys)


@probe("overlap")
def write_records():
    st = _state.STATE
    entries = getattr(st, "loader_list", [])
    train = next((e for e in entries if "train" in getattr(e, "roles", ())), None)
    train_set = train.dataset if train is not None else None
    if train_set is None:
        return
    others = [(e, e.dataset) for e in entries if e is not train and e.dataset is not None
              and "train" not in getattr(e, "roles", ())]
    if not others:
        return
    deadline = time.monotonic() + TIME_BUDGET_S
    train_rows, train_complete = _fingerprints(train_set, deadline)
    if train_rows is None:
        return
    train_digests = {d for d in train_rows if d is not None}
    for other, dataset in others:
        same = dataset is train_set
        rows, complete = (train_rows, train_complete) if same else _fingerprints(dataset, deadline)
        if rows is None:
            continue
        how, by_construction, same_rows, within = _construction(train_set, dataset) or (None, None, False, False)
        if how == "same_dataset":
            by_construction = len(rows)
        st.emit("overlap", step=st.step, train_loader=train.index, other_loader=other.index,
                train_rows=len(train_rows), other_rows=len(rows),
                shared_rows=sum(1 for d in rows if d is not None and d in train_digests),
                complete=bool(complete and train_complete), same_dataset=same,
                construction=how, construction_rows=by_construction, same_rows=same_rows,
                within_train=within)


@probe("overlap_construction")
def _construction(train_set, dataset):
    return construction(train_set, dataset)
