"""init-loss: the loss of INIT_LOSS_INITS fresh inits (seeds seed+0..), each on its own batch,
in training mode without gradients, with the logits' class count and spread. Rust skips it for
regression and judges the loss against log(classes)."""

import torch

from ..tensors import call, logits_of

# init-loss: fresh inits (seeds seed+0..2), as the candle check.
INIT_LOSS_INITS = 3


def check_init_loss(run):
    samples = []
    for k in range(INIT_LOSS_INITS):
        model, inputs, targets = run.fresh(run.seed + k)
        model.train()
        with torch.no_grad():
            output = call(model, inputs)
            loss = run.subject.loss(output, targets)
            logits = logits_of(output).float()
        samples.append(
            {
                "loss": float(loss.float()),
                "classes": int(logits.shape[-1]) if logits.dim() else 1,
                "logit_std": float(logits.std(unbiased=False)) if logits.numel() else 0.0,
            }
        )
    return "measurement", {"samples": samples}
