"""Tensor arithmetic the probes share: bytes of a tensor for hashing, 16-hex-digit
fingerprints (blake2b), per-tensor L2 norms in one fused call per device and dtype, float64
sums, and reading a handful of 0-d results back with one transfer per device.

Everything here runs under `torch.no_grad()` on detached tensors, allocates only its own small
results (a sampled copy at most), and never draws from a random number generator.
"""

import ctypes
import hashlib
import math
import weakref

import torch

# Elements of one tensor hashed for a fingerprint: beyond this a strided sample (shape, dtype and
# every k-th element) stands for the tensor, so an image batch costs a bounded copy per step.
FINGERPRINT_ELEMENTS = 65536


def sample(t, limit=FINGERPRINT_ELEMENTS):
    """The flattened tensor, or every k-th element of it when it has more than `limit`."""
    flat = t.detach().reshape(-1)
    if flat.numel() > limit:
        flat = flat[:: math.ceil(flat.numel() / limit)]
    return flat


def raw_bytes(t):
    """The bytes of a dense tensor (copied to the CPU, contiguous), or None when it has none."""
    if t.layout != torch.strided or t.is_meta or t.is_quantized:
        return None
    if t.device.type != "cpu":
        t = t.to("cpu")
    t = t.contiguous()
    size = t.numel() * t.element_size()
    if size == 0:
        return b""
    return ctypes.string_at(t.data_ptr(), size)


def tensor_digest_into(h, t, limit=FINGERPRINT_ELEMENTS):
    """Feed a tensor's dtype, shape and (sampled) bytes into the hash `h`."""
    h.update(("%s%s" % (t.dtype, tuple(t.shape))).encode())
    data = raw_bytes(sample(t, limit))
    if data:
        h.update(data)


def new_hash():
    return hashlib.blake2b(digest_size=8)


# The last tensors digested, so that a batch hashed when the loader yields it is not hashed
# again when the model receives it: (weak reference, version counter, limit, digest).
_DIGESTS_KEPT = 4
_digests = []


def tensor_digest(t, limit=FINGERPRINT_ELEMENTS):
    """The 8-byte blake2b digest of a tensor's dtype, shape and (sampled) bytes, as
    `tensor_digest_into` feeds them. A tensor digested a moment ago (the same object, its
    version counter unchanged: no in-place write since) is not hashed again."""
    try:
        version = t._version
    except RuntimeError:  # an inference tensor has no version counter: no reuse
        version = None
    if version is not None:
        for ref, seen, kept_limit, digest in _digests:
            if ref() is t and seen == version and kept_limit == limit:
                return digest
    h = new_hash()
    tensor_digest_into(h, t, limit)
    digest = h.digest()
    if version is not None:
        if len(_digests) >= _DIGESTS_KEPT:
            del _digests[0]
        _digests.append((weakref.ref(t), version, limit, digest))
    return digest


def fingerprint_bytes(data):
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def tensors_in(value, depth=0):
    """Tensors in an argument: a tensor, or tensors inside tuples, lists and dicts (2 levels)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 2 and isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v, depth + 1)


def _groups(tensors):
    """Indices of `tensors` grouped by (device, dtype): fused kernels want one of each."""
    groups = {}
    for i, t in enumerate(tensors):
        groups.setdefault((t.device, t.dtype), []).append(i)
    return groups


def norms(tensors):
    """Per-tensor L2 norms as float32 0-d tensors (on each tensor's device), in input order."""
    out = [None] * len(tensors)
    for (_, dtype), idx in _groups(tensors).items():
        group = [tensors[i] for i in idx]
        if dtype.is_complex:
            # A complex tensor's norm is its real view's; a float32 result narrows no input.
            result = [torch.linalg.vector_norm(torch.view_as_real(t)).to(torch.float32)
                      for t in group]
        elif dtype in (torch.float64, torch.complex128):
            # A norm narrows no input (dtype=float32 raises on these): their own precision, then cast.
            result = [torch.linalg.vector_norm(t).to(torch.float32) for t in group]
        elif dtype.is_floating_point or dtype.is_complex:
            try:
                result = torch._foreach_norm(group, 2, dtype=torch.float32)
            except (RuntimeError, TypeError):
                result = [torch.linalg.vector_norm(t, dtype=torch.float32) for t in group]
        else:
            result = [torch.linalg.vector_norm(t.float()) for t in group]
        for i, r in zip(idx, result):
            out[i] = r
    return out


def sums64(tensors):
    """Per-tensor sums of elements in float64 (float32 where the device has no float64)."""
    out = []
    for t in tensors:
        dtype = torch.float32 if t.device.type == "mps" else torch.float64
        if t.is_complex():  # both parts, without torch's warning on dropping one
            t = torch.view_as_real(t)
        out.append(t.sum(dtype=dtype))
    return out


def to_floats(values):
    """Python floats of 0-d tensors, one stack-and-copy per device (one synchronisation each)."""
    result = [None] * len(values)
    by_device = {}
    for i, v in enumerate(values):
        if v is not None:
            by_device.setdefault(v.device, []).append(i)
    for device, idx in by_device.items():
        wide = torch.float32 if device.type == "mps" else torch.float64
        stacked, order = stack_as([values[i] for i in idx], wide)
        for k, x in zip(order, stacked.tolist()):
            result[idx[k]] = float(x)
    return result


def stack_as(values, dtype):
    """The 0-d tensors `values` (one device) as one 1-d tensor of `dtype`, and the index in
    `values` of each of its elements: a stack and a cast per input dtype, not a cast per value
    (each is a kernel launch on a GPU)."""
    groups = list(_groups(values).values())
    parts = [torch.stack([values[i] for i in group]).to(dtype) for group in groups]
    order = [i for group in groups for i in group]
    return (torch.cat(parts) if len(parts) > 1 else parts[0]), order


def dense(t):
    return isinstance(t, torch.Tensor) and t.layout == torch.strided and not t.is_meta


def measured_gradient(g):
    """A gradient as it is measured: a dense one as it is; a sparse one (an Embedding with
    sparse=True) as the values it holds, whose norm and sum are the gradient's; None for one
    that holds no data."""
    if not isinstance(g, torch.Tensor) or g.is_meta:
        return None
    if g.layout == torch.strided:
        return g
    if g.layout == torch.sparse_coo:
        return g.coalesce().values()
    return None
