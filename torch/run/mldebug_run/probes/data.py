"""DataLoaders as the training loop sees them: the `loader` record at a loader's first batch,
one `epoch` record each time its iterator is exhausted or abandoned (and at the end), and the
time the loop waits in `__next__` (the step record's `data_wait_s`).

Per batch fingerprinted (the first ORDER_BATCHES of an epoch, a distributed run's, and those
of measured steps: cadence.py): a fingerprint of its first tensor (dtype, shape and a strided
sample of at most 65,536 elements; of every tensor in it when the batch is a list of samples a
collate_fn left uncollated), in a distributed run row fingerprints of that tensor (blake2b of
each row's bytes, a strided sample of ROW_ELEMENTS per row, at most ROWS_MAX rows per loader
over the run; only the comparison across ranks reads them, and a hash per row costs more than
the rest of a batch's probes together on a small step), the class counts of a 1-D integer
tensor that is not the first one (none when it holds the lengths of the padded sequences in the
first, or the batch is a list of samples), and statistics of a floating-point first tensor
over the first INPUT_BATCHES batches of an epoch. For the comparison across ranks (in a
distributed run, unless `MLDEBUG_RUN_RANKS=0`): a sample of the epoch's distinct row
fingerprints chosen by their value (those whose first `row_sample_bits` bits are zero, at most
ROW_SAMPLE_MAX), so that every rank samples the same rows. A loader's role in an epoch: `train` when an
optimizer stepped after one of its batches (before another loader's), `eval` when all its
batches were drawn with gradients disabled or all the root forwards after them ran without
gradients or in eval mode, else `unknown`.

What it never does: draw from a random number generator, change a batch, or reorder anything.
"""

import os
import sys
import time
import weakref

from .. import state as _state
from .. import window
from ..state import probe
from ..where import where
from ..world import distributed
from .tensors import (fingerprint_bytes, new_hash, raw_bytes, tensor_digest, tensor_digest_into,
                      tensors_in)

ROWS_MAX = 65536  # row fingerprints per loader over the run: 0.5 MB of digests at most
ROW_ELEMENTS = 4096  # elements hashed per row; an image row is sampled, a token row is whole
ORDER_BATCHES = 8  # batches whose fingerprints make an epoch's order fingerprint (always taken)
INPUT_BATCHES = 3  # batches whose float input makes the `input` statistics
CLASSES_MAX = 1000  # beyond this many classes the counts are not kept
BATCH_SET_MAX = 65536  # batch fingerprints kept per epoch for duplicate_batches
ROW_SAMPLE_MAX = 2048  # row fingerprints an epoch record carries: about 40 kB of JSON
# The cross-rank probes (row samples here, probes/batchnorm.py) are on unless this is "0".
RANKS = os.environ.get("MLDEBUG_RUN_RANKS", "1") != "0"


class Epoch:
    def __init__(self, index):
        self.index = index
        self.batches = self.rows = self.rows_fingerprinted = self.batches_fingerprinted = 0
        self.duplicate_rows = self.duplicate_batches = 0
        self.row_seen, self.batch_seen = set(), set()
        self.order = new_hash()
        self.input = None  # [count, sum, sum of squares, min, max]
        self.classes = {}  # None once more than CLASSES_MAX classes appear
        self.draws = self.nograd_draws = self.forwards = self.eval_forwards = 0
        self.stepped = False
        self.sample, self.sample_bits = set(), 0  # digests whose first sample_bits bits are 0
        # Rows are compared across ranks only (a hash per row is the costliest part of a
        # batch): fingerprinted in a distributed run with the cross-rank probes on.
        self.rows_wanted = RANKS and distributed()


class Loader:
    def __init__(self, index, loader, where_text):
        self.index = index
        self.ref = weakref.ref(loader)
        self.where = where_text
        # A strong reference: the overlap is computed at the end, when a program that returned
        # from its training function has dropped its datasets. Iterable datasets are not kept.
        dataset = loader.dataset
        self.dataset = None if _iterable(dataset) else dataset
        self.recorded = False
        self.epochs = 0
        self.current = None
        self.rows_fingerprinted = 0


def _iterable(dataset):
    torch = sys.modules["torch"]
    return isinstance(dataset, torch.utils.data.IterableDataset)


def _weakrefable(obj):
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False


_iterators = weakref.WeakKeyDictionary()  # DataLoader iterator -> Loader
_constructed = weakref.WeakKeyDictionary()  # DataLoader -> where it was constructed


def loaders():
    st = _state.STATE
    if not hasattr(st, "loaders"):
        st.loaders, st.loader_list, st.current_loader, st.set_epochs = {}, [], None, {}
        st.train_loader = None  # the loader whose batch optimizer 0's first step followed
    return st


@probe("data")
def constructed(loader):
    _constructed[loader] = where(3)


@probe("data")
def iteration_started(loader, iterator):
    st = loaders()
    entry = st.loaders.get(id(loader))
    if entry is None or entry.ref() is not loader:
        entry = Loader(len(st.loader_list), loader, _constructed.get(loader) or where(3))
        st.loaders[id(loader)] = entry
        st.loader_list.append(entry)
    if entry.current is not None:
        _finish(entry, exhausted=False)
    _iterators[iterator] = entry


def _entry_of(iterator):
    try:
        return _iterators.get(iterator)
    except TypeError:
        return None


@probe("data")
def exhausted(iterator):
    entry = _entry_of(iterator)
    if entry is not None and entry.current is not None:
        _finish(entry, exhausted=True)


@probe("data")
def drawn(iterator, batch, waited):
    st = loaders()
    st.interval.data_wait += waited
    entry = _entry_of(iterator)
    if entry is None:
        return
    torch = sys.modules["torch"]
    loader = entry.ref()
    if not entry.recorded and loader is not None:
        entry.recorded = True
        _loader_record(entry, loader)
    if entry.current is None:
        entry.current = Epoch(entry.epochs)
        entry.epochs += 1
        if entry.epochs > 1 and entry is st.train_loader:
            window.note_epoch(st)
    ep = entry.current
    st.current_loader = entry
    ep.draws += 1
    if not torch.is_grad_enabled():
        ep.nograd_draws += 1
    first = next(tensors_in(batch), None)
    if first is None:
        return
    ep.batches += 1
    samples = _samples(batch)
    ep.rows += len(batch) if samples else (first.shape[0] if first.dim() > 0 else 1)
    # The first batches of an epoch (its order), a distributed run's (rows compared across
    # ranks) and a measured step's (cadence.py) are fingerprinted and their classes counted.
    if ep.batches <= ORDER_BATCHES or ep.rows_wanted or st.measuring:
        started = time.perf_counter()
        with torch.no_grad():
            _batch_stats(entry, ep, list(tensors_in(batch)), samples)
        st.interval.measure_s += time.perf_counter() - started


def _samples(batch):
    """Whether a batch is a list of samples left uncollated (a collate_fn that returns its
    list: each element a tuple, list or dict of one sample's tensors), not tensors of rows."""
    return (isinstance(batch, list) and len(batch) > 0
            and isinstance(batch[0], (tuple, list, dict)))


def _lengths_of(first, target):
    """Whether a 1-D integer `target` holds the lengths of the padded integer sequences in
    `first` ((B, T) or (T, B)): past each row's length, one padding value throughout."""
    torch = sys.modules["torch"]
    if first.dim() != 2 or first.is_floating_point() or target.numel() == 0:
        return False
    b = target.numel()
    rows = first if first.shape[0] == b else (first.t() if first.shape[1] == b else None)
    if rows is None or int(target.min()) < 0 or int(target.max()) > rows.shape[1]:
        return False
    past = torch.arange(rows.shape[1], device=rows.device)[None, :] \
        >= target.to(rows.device)[:, None]
    if not bool(past.any()):
        return False
    padding = rows[past]
    return bool((padding == padding[0]).all())


def _batch_stats(entry, ep, tensors, samples=False):
    torch = sys.modules["torch"]
    first = tensors[0]
    ep.batches_fingerprinted += 1
    if samples:  # every sample's tensors: the first is one sample, not the batch
        h = new_hash()
        for t in tensors:
            tensor_digest_into(h, t)
        digest = h.digest()
    else:
        digest = tensor_digest(first)  # the model's forward reuses it for the step's `batch`
    if digest in ep.batch_seen:
        ep.duplicate_batches += 1
    elif len(ep.batch_seen) < BATCH_SET_MAX:
        ep.batch_seen.add(digest)
    if ep.batches <= ORDER_BATCHES:
        ep.order.update(digest)
    if ep.rows_wanted and entry.rows_fingerprinted < ROWS_MAX and first.dim() > 0 \
            and not samples:
        _rows(entry, ep, first)
    if ep.batches <= INPUT_BATCHES and first.is_floating_point():
        f = first.detach().float()
        stats = [f.numel(), float(f.sum()), float((f * f).sum()), float(f.min()), float(f.max())]
        if ep.input is None:
            ep.input = stats
        else:
            ep.input = [ep.input[0] + stats[0], ep.input[1] + stats[1], ep.input[2] + stats[2],
                        min(ep.input[3], stats[3]), max(ep.input[4], stats[4])]
    if ep.classes is not None and samples:
        ep.classes = None  # per-sample tensors are no per-row class targets
    if ep.classes is not None:
        target = next((t for t in tensors[1:] if t.dim() == 1 and not t.is_floating_point()
                       and not t.is_complex() and t.dtype != torch.bool), None)
        if target is not None and _lengths_of(first, target):
            ep.classes = None  # the lengths of padded sequences, not classes
        elif target is not None and target.numel():
            counts = torch.bincount(target.detach().to("cpu", torch.int64).clamp_min(0),
                                    minlength=0) if int(target.min()) >= 0 else None
            if counts is None or counts.numel() > CLASSES_MAX:
                ep.classes = None
            else:
                for c, n in enumerate(counts.tolist()):
                    if n:
                        ep.classes[c] = ep.classes.get(c, 0) + n
        elif target is None and ep.batches == 1:
            ep.classes = None


def _rows(entry, ep, first):
    n = min(first.shape[0], ROWS_MAX - entry.rows_fingerprinted)
    rows = first.detach()[:n].reshape(n, -1)
    width = rows.shape[1]
    if width > ROW_ELEMENTS:
        rows = rows[:, :: -(-width // ROW_ELEMENTS)]
    data = raw_bytes(rows)
    if data is None:
        return
    size = len(data) // n if n else 0
    for i in range(n):
        digest = fingerprint_bytes(data[i * size:(i + 1) * size])
        if digest in ep.row_seen:
            ep.duplicate_rows += 1
        else:
            ep.row_seen.add(digest)
            if RANKS:
                _sample(ep, digest)
    ep.rows_fingerprinted += n
    entry.rows_fingerprinted += n


def _kept(digest, bits):
    return bits == 0 or int(digest[:8], 16) >> (32 - bits) == 0


def _sample(ep, digest):
    """Keep `digest` when its first `sample_bits` bits are zero; past ROW_SAMPLE_MAX, one bit
    more (half the sample). The choice depends on the value only: ranks sample the same rows."""
    if not _kept(digest, ep.sample_bits):
        return
    ep.sample.add(digest)
    while len(ep.sample) > ROW_SAMPLE_MAX and ep.sample_bits < 32:
        ep.sample_bits += 1
        ep.sample = {d for d in ep.sample if _kept(d, ep.sample_bits)}


def _loader_record(entry, loader):
    torch = sys.modules["torch"]
    sampler = getattr(loader, "sampler", None)
    batch_sampler = getattr(loader, "batch_sampler", None)
    if sampler is None or type(sampler).__name__ == "_InfiniteConstantSampler":
        sampler = getattr(batch_sampler, "sampler", sampler)
    st = loaders()
    data_mod = torch.utils.data
    distributed = isinstance(sampler, data_mod.distributed.DistributedSampler)
    if isinstance(sampler, (data_mod.RandomSampler, data_mod.SubsetRandomSampler,
                            data_mod.WeightedRandomSampler)):
        shuffle = True
    elif distributed:
        shuffle = bool(getattr(sampler, "shuffle", False))
    elif isinstance(sampler, data_mod.SequentialSampler):
        shuffle = False
    else:
        shuffle = None
    batch_size = loader.batch_size
    if batch_size is None:
        batch_size = getattr(batch_sampler, "batch_size", None)
    calls = st.set_epochs.get(id(sampler), (None, 0, None))[1] if sampler is not None else 0
    st.emit("loader", step=st.step, loader=entry.index, where=entry.where,
            dataset=type(loader.dataset).__name__, length=_length(loader.dataset),
            batch_size=batch_size, sampler=type(sampler).__name__ if sampler is not None else None,
            shuffle=shuffle, drop_last=bool(loader.drop_last),
            num_workers=loader.num_workers, worker_init_fn=loader.worker_init_fn is not None,
            persistent_workers=bool(getattr(loader, "persistent_workers", False)),
            distributed=distributed, set_epoch_calls=calls, iterable=_iterable(loader.dataset))
    entry.sampler = weakref.ref(sampler) if sampler is not None and _weakrefable(sampler) else None


def _length(dataset):
    try:
        return len(dataset)
    except Exception:
        return None


def _role(ep):
    if ep.stepped:
        return "train"
    if ep.draws and ep.nograd_draws == ep.draws:
        return "eval"
    if ep.forwards and ep.eval_forwards == ep.forwards:
        return "eval"
    return "unknown"


def _finish(entry, exhausted):
    ep, entry.current = entry.current, None
    if ep is None or ep.batches == 0:
        return
    st = loaders()
    entry.roles = getattr(entry, "roles", set()) | {_role(ep)}
    stats = None
    if ep.input is not None and ep.input[0]:
        n, s, s2, lo, hi = ep.input
        mean = s / n
        stats = {"mean": mean, "std": max(0.0, s2 / n - mean * mean) ** 0.5, "min": lo, "max": hi}
    sampler = entry.sampler() if getattr(entry, "sampler", None) is not None else None
    calls = st.set_epochs.get(id(sampler)) if sampler is not None else None
    st.emit("epoch", step=st.step, loader=entry.index, epoch=ep.index, role=_role(ep),
            batches=ep.batches, batches_fingerprinted=ep.batches_fingerprinted, rows=ep.rows,
            order=ep.order.hexdigest(),
            rows_fingerprinted=ep.rows_fingerprinted, duplicate_rows=ep.duplicate_rows,
            duplicate_batches=ep.duplicate_batches, input=stats,
            classes=None if ep.classes is None else {str(k): v for k, v in sorted(ep.classes.items())},
            set_epoch=calls[2] if calls else None, set_epoch_calls=calls[1] if calls else 0,
            exhausted=exhausted, **_sample_fields(ep))


def _sample_fields(ep):
    if not RANKS or not distributed():
        return {}
    return {"row_sample": sorted(ep.sample), "row_sample_bits": ep.sample_bits}


@probe("data")
def note_forward(grad_enabled, training):
    st = _state.STATE
    entry = getattr(st, "current_loader", None)
    if entry is not None and entry.current is not None:
        entry.current.forwards += 1
        if not grad_enabled or not training:
            entry.current.eval_forwards += 1


@probe("data")
def note_step():
    st = _state.STATE
    entry = getattr(st, "current_loader", None)
    if entry is not None and entry.current is not None:
        entry.current.stepped = True
        if getattr(st, "train_loader", None) is None:
            st.train_loader = entry


def training_batch():
    """Whether the last batch drawn was the training loader's."""
    st = _state.STATE
    entry = getattr(st, "current_loader", None)
    return entry is not None and entry is getattr(st, "train_loader", None)


@probe("data")
def set_epoch_called(sampler, epoch):
    st = loaders()
    _, calls, _ = st.set_epochs.get(id(sampler), (None, 0, None))
    st.set_epochs[id(sampler)] = (weakref.ref(sampler), calls + 1, _plain_int(epoch))


def _plain_int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@probe("data")
def finish_all():
    st = loaders()
    for entry in st.loader_list:
        if entry.current is not None:
            _finish(entry, exhausted=False)
