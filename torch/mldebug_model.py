"""What `mldebug check <id|all> --torch FILE.py:NAME` needs from your model: copy this file beside
your training code and fill in the class at the bottom (nothing to install besides torch).

NAME is a class (mldebug instantiates it with no arguments) or an object with:

    build(self) -> torch.nn.Module
        A fresh model. mldebug seeds torch first, so the same --seed gives the same weights;
        every check builds its own, so nothing of yours is trained or changed.

    batch(self, seed: int, device) -> (inputs, targets)
        A small fixed batch (a few dozen samples is plenty), the same for the same seed.
        `inputs` is a tensor, or a dict of tensors passed as model(**inputs) (input_ids,
        attention_mask, ...). `targets` is a tensor of class ids (classification, causal LM;
        -100 = ignored) or of values (regression).

Optional:

    loss(self, output, targets) -> scalar tensor
        Default: mean cross-entropy over the last dim, targets equal to -100 ignored (mean
        squared error for task "regression"); an output with `.logits` (a Hugging Face
        ModelOutput) is read through `.logits`. Give yours to check the loss you train with.

    task = "classification" | "causal_lm" | "regression"      (default "classification")

    labels = "shifted" | "in_model"                            (default "shifted")
        "shifted": targets[t] is the token after inputs[t] (you shift them in the batch).
        "in_model": targets equal the input ids and the model shifts them itself, as every
        Hugging Face *ForCausalLM does (then label-mask checks they were not shifted twice).

Run it (`python mldebug_model.py` first runs one step of Example by itself):

    mldebug check all --torch mldebug_model.py:Example
    mldebug check all --torch mldebug_model.py:Example --python .venv/bin/python
"""

import torch
from torch import nn


class Example:
    """A complete example: a small MLP classifier on a learnable rule (replace with yours)."""

    task = "classification"

    def build(self):
        return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))

    def batch(self, seed, device):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(32, 16, generator=g)
        y = x[:, :4].argmax(dim=1)  # the class is the largest of the first four features
        return x.to(device), y.to(device)


if __name__ == "__main__":  # one training step by hand, as mldebug will take it
    example = Example()
    torch.manual_seed(0)
    model = example.build()
    inputs, targets = example.batch(0, "cpu")
    loss = nn.functional.cross_entropy(model(inputs), targets, ignore_index=-100)
    loss.backward()
    print("loss %.3f (ln 4 = 1.386 expected at init)" % loss.item())
