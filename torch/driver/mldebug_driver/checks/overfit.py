"""overfit: Adam on the one batch for up to `steps` steps, the loss before each, the relative
update of every weight after the first step, and the mean cross-entropy at the start and end."""

import math

import torch

from ..tensors import call, default_loss

# overfit: stop once the loss is at or below this share of its start, or (classification and
# LM) below this absolute cross-entropy. The verdict is Rust's; these only end the run early.
OVERFIT_PASS_RATIO = 0.05
OVERFIT_ABS_PASS = 0.05
# overfit: a progress event every this many steps.
PROGRESS_EVERY = 20


def mean_ce(run, output, targets):
    """Mean cross-entropy of the outputs (classification and LM), whatever loss the model uses."""
    if run.subject.task == "regression":
        return None
    try:
        with torch.no_grad():
            return float(default_loss(output, targets, "classification", run.subject.labels))
    except Exception:
        return None


def check_overfit(run):
    model, inputs, targets = run.fresh(run.seed)
    model.train()
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad and p.is_floating_point()]
    params = [p for _, p in named]
    weights = [(n, p) for n, p in named if p.dim() >= 2]
    before = [p.detach().clone() for _, p in weights]
    optimizer = torch.optim.Adam(params, lr=run.learning_rate) if params else None
    losses, updates, start_ce, end_ce = [], [], None, None
    total = run.steps
    for step in range(total + 1):
        output = call(model, inputs)
        loss = run.subject.loss(output, targets)
        value = float(loss.detach().float())
        losses.append(value)
        ce = mean_ce(run, output, targets)
        if step == 0:
            start_ce = ce
        end_ce = ce
        if step % PROGRESS_EVERY == 0:
            run.progress("overfit", step, total, value)
        first = losses[0]
        memorised = value <= OVERFIT_PASS_RATIO * first or (
            run.subject.task != "regression" and 0.0 <= value < OVERFIT_ABS_PASS
        )
        if (
            not math.isfinite(value)
            or step == total
            or (first > 0 and memorised)
            or first == 0
            or optimizer is None
            or not loss.requires_grad
        ):
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step == 0:
            for (name, p), w0 in zip(weights, before):
                norm = float(w0.double().norm())
                if norm > 0:
                    updates.append([name, float((p.detach() - w0).double().norm()) / norm])
            updates.sort(key=lambda u: u[1])
            before = None
    return "measurement", {
        "losses": losses,
        "updates": updates,
        "start_ce": start_ce,
        "end_ce": end_ce,
        "trainable": len(params),
        # Only LoRA adapters train: the wrap succeeded (a failed wrap trains the whole model).
        "adapters_only": run.subject.lora is not None and not run.subject.lora_failed,
    }
