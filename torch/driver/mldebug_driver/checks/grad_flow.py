"""grad-flow: one forward and backward on a fresh model; per trainable parameter its gradient
(none, zero, non-finite or its norm), its norm and its depth from the loss in the autograd
graph; the frozen parameters, the buffers and what LoRA wrapping found."""

import torch

from ..tensors import call


def graph_depths(loss):
    """{id(parameter): rank}: parameters in the loss's autograd graph in topological order from
    the loss, 0 = closest to it. Kahn's order: a node comes once every node reading its output
    has come, first come first served; so the head's weight ranks first and an embedding read
    through the whole residual stream ranks after every block (a breadth-first distance would
    put it beside the head, through the residual shortcut)."""
    root = loss.grad_fn
    if root is None:
        return {}

    def inputs(node):
        return [c for c, _ in getattr(node, "next_functions", ()) if c is not None]

    readers, stack = {root: 0}, [root]
    while stack:
        node = stack.pop()
        for child in inputs(node):
            if child not in readers:
                readers[child] = 0
                stack.append(child)
            readers[child] += 1
    depths, queue, k = {}, [root], 0
    while k < len(queue):
        node = queue[k]
        k += 1
        var = getattr(node, "variable", None)
        if var is not None and id(var) not in depths:
            depths[id(var)] = len(depths)
        for child in inputs(node):
            readers[child] -= 1
            if readers[child] == 0:
                queue.append(child)
    return depths


def grad_row(name, p, order, depths):
    g = p.grad
    if g is None:
        grad = {"kind": "none"}
    else:
        non_finite = int((~torch.isfinite(g)).sum())
        if non_finite:
            grad = {"kind": "non_finite", "count": non_finite}
        elif not bool((g != 0).any()):
            grad = {"kind": "zero"}
        else:
            grad = {"kind": "norm", "norm": float(g.double().norm())}
    return {
        "name": name,
        "shape": list(p.shape),
        "param_norm": float(p.detach().double().norm()),
        "grad": grad,
        "depth": depths.get(id(p)),
        "order": order,
    }


def check_grad_flow(run):
    model, inputs, targets = run.fresh(run.seed)
    model.train()
    output = call(model, inputs)
    loss = run.subject.loss(output, targets)
    connected = bool(loss.requires_grad) and loss.grad_fn is not None
    depths = graph_depths(loss) if connected else {}
    if connected:
        loss.backward()
    params, frozen = [], []
    for order, (name, p) in enumerate(model.named_parameters()):
        if p.requires_grad:
            params.append(grad_row(name, p, order, depths))
        elif p.is_floating_point():
            frozen.append({"name": name, "shape": list(p.shape)})
    buffers = [{"name": n, "shape": list(b.shape)} for n, b in model.named_buffers()]
    return "measurement", {
        "loss_requires_grad": connected,
        "params": params,
        "frozen": frozen,
        "buffers": buffers,
        "lora": run.subject.lora_info,
    }
