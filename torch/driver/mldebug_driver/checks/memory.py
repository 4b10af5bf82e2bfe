"""memory: MEMORY_STEPS Adam steps on a fresh model with the bytes held at each stage (load,
data, forward, backward, optimizer step, end of step), from the profiler's memory events on CPU
or the CUDA allocator's counters, and each leaf module's output bytes."""

import gc

import torch

from ..rng import seed_all
from ..tensors import call, first_float_tensor

# memory: training steps measured (step 2 against step 1, growth over steps 2 to 4).
MEMORY_STEPS = 4


def module_outputs(model, inputs):
    """Bytes of each leaf module's output in one forward pass (no gradients kept)."""
    rows, handles = [], []
    for name, module in model.named_modules():
        if next(module.children(), None) is not None:
            continue

        def hook(mod, args, output, name=name, kind=type(module).__name__):
            t = first_float_tensor(output)
            if t is not None:
                rows.append(
                    {"module": name or "model", "kind": kind,
                     "bytes": float(t.numel() * t.element_size())}
                )

        handles.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad():
            call(model, inputs)
    finally:
        for h in handles:
            h.remove()
    return rows


class CpuMemoryTimeline:
    """Tensor storages over a few training steps, from the profiler's memory events
    (profile_memory=True): every storage the CPU allocator hands out or takes back,
    timestamped, between named marks."""

    def __init__(self):
        from torch.profiler import ProfilerActivity, profile

        self.profile = profile(activities=[ProfilerActivity.CPU], profile_memory=True)

    def __enter__(self):
        self.profile.__enter__()
        return self

    def __exit__(self, *exc):
        return self.profile.__exit__(*exc)

    def mark(self, name):
        """A moment: a zero-length profiler range (its start is the moment)."""
        from torch.profiler import record_function

        with record_function("mldebug:" + name):
            pass

    def read(self):
        """The Levels of the run."""
        events = self.profile.profiler.kineto_results.events()
        mem, marks = [], {}
        for e in events:
            name = e.name()
            if name == "[memory]":
                if str(e.device_type()).endswith("CPU"):
                    mem.append((e.start_ns(), e.nbytes()))
            elif name.startswith("mldebug:"):
                marks[name[len("mldebug:"):]] = e.start_ns()
        mem.sort()
        return Levels(mem, marks)


class Levels:
    """Level at a moment, peak and largest allocation between two moments."""

    def __init__(self, events, marks):
        self.times = [t for t, _ in events]
        self.sizes = [b for _, b in events]
        self.levels = []
        level = 0
        for b in self.sizes:
            level += b
            self.levels.append(level)
        self.marks = marks

    def _index(self, mark):
        import bisect

        return bisect.bisect_left(self.times, self.marks[mark])

    def at(self, mark):
        i = self._index(mark)
        return float(self.levels[i - 1]) if i > 0 else 0.0

    def peak(self, start, end):
        i, k = self._index(start), self._index(end)
        return float(max([self.at(start)] + self.levels[i:k]))

    def largest(self, start, end):
        i, k = self._index(start), self._index(end)
        return float(max([0] + [b for b in self.sizes[i:k] if b > 0]))


def train_steps(run, mark):
    """Fresh model, its batch and MEMORY_STEPS Adam steps, calling `mark(name)` at each stage
    boundary. Returns (model, inputs, optimizer)."""
    mark("start")
    seed_all(run.seed)
    model = run.subject.build().to(run.device)
    model.train()
    mark("built")
    inputs, targets = run.subject.batch(run.seed, run.device)
    mark("data")
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = None
    for step in range(MEMORY_STEPS):
        s = str(step)
        mark(s + ":forward")
        output = call(model, inputs)
        loss = run.subject.loss(output, targets)
        mark(s + ":backward")
        loss.backward()
        mark(s + ":backward_end")
        del output, loss
        mark(s + ":optimizer")
        if optimizer is None and params:
            optimizer = torch.optim.Adam(params, lr=run.learning_rate)
        if optimizer is not None:
            optimizer.step()
        mark(s + ":optimizer_end")
        if optimizer is not None:
            optimizer.zero_grad(set_to_none=True)
        mark(s + ":end")
    return model, inputs, optimizer


def check_memory(run):
    """MEMORY_STEPS Adam steps under the profiler's memory events: every tensor storage the
    allocator hands out or takes back, so a clean step ends at exactly the bytes it started with
    and anything kept from one step into the next shows."""
    if run.device.type == "cuda":
        return "measurement", memory_cuda(run)
    timeline = CpuMemoryTimeline()
    with timeline:
        model, inputs, optimizer = train_steps(run, timeline.mark)
    levels = timeline.read()
    base = levels.at("start")
    steps = []
    for step in range(MEMORY_STEPS):
        s = str(step)
        steps.append(
            {
                "forward": levels.peak(s + ":forward", s + ":backward") - base,
                "forward_end": levels.at(s + ":backward") - base,
                "backward": levels.peak(s + ":backward", s + ":backward_end") - base,
                "after_backward": levels.at(s + ":optimizer") - base,
                "optimizer_step": levels.peak(s + ":optimizer", s + ":optimizer_end") - base,
                "end": levels.at(s + ":end") - base,
                "forward_largest": levels.largest(s + ":forward", s + ":backward"),
            }
        )
    state = 0.0
    if optimizer is not None:
        state = float(sum(
            t.numel() * t.element_size()
            for per_param in optimizer.state.values()
            for t in per_param.values()
            if torch.is_tensor(t)
        ))
    source = ("CPU, this process: bytes of live tensor storages as the CPU allocator hands "
              "them out and takes them back (PyTorch profiler memory events, profile_memory=True); "
              "autograd graph nodes, tensor headers and Python objects are not counted")
    return "measurement", {
        "source": source,
        "load": levels.at("built") - base,
        "data": levels.at("data") - levels.at("built"),
        "optimizer_state": state,
        "steps": steps,
        "modules": module_outputs(model, inputs),
    }


class CudaAllocations:
    """Each block the CUDA caching allocator hands out, from its own history
    (torch.cuda.memory._record_memory_history): the largest block handed out in a stretch and
    given back before the step ends. A block never given back within the step (cuBLAS and
    cuDNN keep their workspaces for the life of the process, allocated at the first matmul or
    convolution) is not an intermediate of the forward pass, so it is left out."""

    def __init__(self, device):
        self.device = device
        self.index = torch.device(device).index or 0
        memory = getattr(torch.cuda, "memory", None)
        self.record = getattr(memory, "_record_memory_history", None)
        self.snapshot = getattr(memory, "_snapshot", None)
        self.on = False

    def __enter__(self):
        if self.record is not None and self.snapshot is not None:
            try:
                self.record(enabled="all", context=None, stacks="python", max_entries=1_000_000)
                self.on = True
            except (TypeError, RuntimeError):
                self.on = False
        return self

    def __exit__(self, *exc):
        if self.on:
            self.record(enabled=None)
        return False

    def events(self):
        """The allocator's events so far (alloc, free_requested, ...), oldest first."""
        if not self.on:
            return []
        torch.cuda.synchronize(self.device)
        traces = self.snapshot().get("device_traces", [])
        return list(traces[self.index]) if self.index < len(traces) else []

    def largest_transient(self, start, forward_end, events):
        """The largest block allocated between events[start] and events[forward_end] and given
        back before the end of `events`; 0 when the allocator's history is unavailable (the
        source then says so)."""
        if not self.on:
            return 0.0
        live, largest = {}, 0.0
        for i, e in enumerate(events[start:], start):
            action = e.get("action")
            if action == "alloc" and i < forward_end:
                live[e.get("addr")] = float(e.get("size", 0))
            elif action in ("free_requested", "free_completed") and e.get("addr") in live:
                largest = max(largest, live.pop(e.get("addr")))
        return largest


def warm_up(run):
    """One forward and backward pass on a throwaway copy of the model, before the baseline.
    cuBLAS keeps a workspace per thread and stream for the life of the process (32 MiB on a
    Hopper GPU), allocated through the caching allocator at its first matmul: the forward's on
    this thread, the backward's on autograd's device thread. Measured from a cold start, step 1
    would lack both and step 2 would seem to spike; they belong to the process, not the model,
    as the CUDA context does."""
    seed_all(run.seed)
    model = run.subject.build().to(run.device)
    model.train()
    inputs, targets = run.subject.batch(run.seed, run.device)
    run.subject.loss(call(model, inputs), targets).backward()
    del model, inputs, targets
    gc.collect()


def memory_cuda(run):
    """The same stages from the CUDA caching allocator's own counters, after a warm-up."""
    cuda = torch.cuda
    device = run.device
    warm_up(run)
    cuda.synchronize(device)
    gc.collect()
    base = cuda.memory_allocated(device)

    def level():
        cuda.synchronize(device)
        return float(cuda.memory_allocated(device) - base)

    def peak():
        cuda.synchronize(device)
        return float(cuda.max_memory_allocated(device) - base)

    seed_all(run.seed)
    model = run.subject.build().to(device)
    model.train()
    load = level()
    inputs, targets = run.subject.batch(run.seed, device)
    data = level() - load
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer, state, steps = None, 0.0, []
    with CudaAllocations(device) as allocations:
        for _ in range(MEMORY_STEPS):
            optimizer, state = cuda_step(run, model, inputs, targets, params, optimizer, state,
                                         steps, allocations, level, peak)
    history = ("" if allocations.on else
               "; largest forward block not measured (no allocator history in this torch)")
    return {
        "source": "torch.cuda allocator: memory_allocated and max_memory_allocated with "
        "reset_peak_memory_stats around each stage, the largest forward block from the "
        "allocator's history, %s%s" % (device, history),
        "load": load,
        "data": data,
        "optimizer_state": state,
        "steps": steps,
        "modules": module_outputs(model, inputs),
    }


def cuda_step(run, model, inputs, targets, params, optimizer, state, steps, allocations,
              level, peak):
    """One measured training step on CUDA; appends its row to `steps`."""
    cuda = torch.cuda
    device = run.device
    row = {}
    start = len(allocations.events())
    cuda.reset_peak_memory_stats(device)
    output = call(model, inputs)
    loss = run.subject.loss(output, targets)
    row["forward"] = peak()
    row["forward_end"] = level()
    forward_end = len(allocations.events())
    cuda.reset_peak_memory_stats(device)
    loss.backward()
    row["backward"] = peak()
    del output, loss
    gc.collect()
    row["after_backward"] = level()
    cuda.reset_peak_memory_stats(device)
    if optimizer is None and params:
        optimizer = torch.optim.Adam(params, lr=run.learning_rate)
        before_state = level()
        optimizer.step()
        state = level() - before_state
    elif optimizer is not None:
        optimizer.step()
    row["optimizer_step"] = peak()
    if optimizer is not None:
        optimizer.zero_grad(set_to_none=True)
    gc.collect()
    row["end"] = level()
    # The largest block of the forward pass that the step gave back: an intermediate, not
    # a library workspace kept for the process.
    row["forward_largest"] = allocations.largest_transient(
        start, forward_end, allocations.events())
    steps.append(row)
    return optimizer, state
