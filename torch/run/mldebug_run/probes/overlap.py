"""Rows shared between the training loader's dataset and every other loader's: `overlap`
records, written once at the end of the observed run.

Each dataset is read in index order (`dataset[i]`, i < ITEMS_MAX, within TIME_BUDGET_S for all
datasets together): an item's fingerprint hashes its first element (a tensor's dtype, shape
and bytes; an array's bytes; a list of numbers or a string as text). Exact copies only:
augmentation drawn at random makes equal rows differ. Done at the end because reading items
may draw from the program's random streams, which then no longer matter. `complete` is false
when a dataset was longer than ITEMS_MAX or the time ran out.

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
        st.emit("overlap", step=st.step, train_loader=train.index, other_loader=other.index,
                train_rows=len(train_rows), other_rows=len(rows),
                shared_rows=sum(1 for d in rows if d is not None and d in train_digests),
                complete=bool(complete and train_complete), same_dataset=same)
