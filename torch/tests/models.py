"""Small models following the driver's protocol, each with one property the tests look for.

Not the zoo (torch/zoo/): these exist to exercise the driver's contract, not to calibrate checks.
"""

import torch
from torch import nn


def classification_batch(seed, device, n=16, features=8, classes=4):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    y = torch.randint(0, classes, (n,), generator=g)
    return x.to(device), y.to(device)


class TinyMlp:
    """A clean classifier. Prints from batch(): the driver must keep stdout JSON only."""

    def build(self):
        return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))

    def batch(self, seed, device):
        print("a user print from batch()")
        return classification_batch(seed, device)


class TorchMeanLoss(TinyMlp):
    """Its own loss is PyTorch's mean cross-entropy, which is 0/0 = NaN with every target ignored."""

    def loss(self, output, targets):
        return nn.functional.cross_entropy(output, targets, ignore_index=-100)


class Raises(nn.Module):
    def forward(self, x):
        raise RuntimeError("forward is broken on purpose")


class ForwardRaises:
    """Its forward raises: every check that runs the model errors, class-balance does not."""

    def build(self):
        return nn.Sequential(nn.Linear(8, 4), Raises())

    def batch(self, seed, device):
        return classification_batch(seed, device)


class DetachedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 32)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(torch.relu(self.first(x)).detach())


class Detached:
    """The first layer's output is detached: its parameters get no gradient."""

    def build(self):
        return DetachedNet()

    def batch(self, seed, device):
        return classification_batch(seed, device)


class Frozen:
    """The first layer's weight has requires_grad=False."""

    def build(self):
        model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
        model[0].weight.requires_grad_(False)
        return model

    def batch(self, seed, device):
        return classification_batch(seed, device)


class LogOfNegative(nn.Module):
    """log(x - 100): NaN for every input the layer before produces."""

    def forward(self, x):
        return torch.log(x - 100.0)


class NanNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 32)
        self.boom = LogOfNegative()
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.boom(self.first(x)))


class MakesNan:
    """The module `boom` produces the first NaN."""

    def build(self):
        return NanNet()

    def batch(self, seed, device):
        return classification_batch(seed, device)


class CausalMeanLm(nn.Module):
    """Each position sees the mean embedding of the tokens up to it: causal by construction."""

    def __init__(self, vocab=32, width=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.mix = nn.Linear(2 * width, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        e = self.embed(ids)
        steps = torch.arange(1, ids.shape[1] + 1, device=ids.device).view(1, -1, 1)
        past = e.cumsum(dim=1) / steps
        return self.head(torch.tanh(self.mix(torch.cat([e, past], dim=-1))))


class TinyLm:
    """A causal LM with shifted labels (the candle convention)."""

    task = "causal_lm"

    def build(self):
        return CausalMeanLm()

    def batch(self, seed, device):
        g = torch.Generator().manual_seed(seed)
        start = torch.randint(0, 32, (4, 1), generator=g)
        ids = (start + torch.arange(17)) % 32
        inputs, targets = ids[:, :-1], ids[:, 1:].clone()
        return inputs.to(device), targets.to(device)


class KeepsLosses:
    """Keeps every loss it computes, with its graph: memory grows step over step."""

    def __init__(self):
        self.kept = []

    def build(self):
        return nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))

    def batch(self, seed, device):
        return classification_batch(seed, device, n=64)

    def loss(self, output, targets):
        loss = nn.functional.cross_entropy(output, targets)
        self.kept.append(loss)
        return loss


class NoBatch:
    """Has build but not batch."""

    def build(self):
        return nn.Linear(2, 2)


instance = TinyMlp()


class SharedModel:
    """build() hands out the same model every time: the driver must put it back after a check."""

    def __init__(self):
        self.model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))

    def build(self):
        return self.model

    def batch(self, seed, device):
        return classification_batch(seed, device)


class ExitsInBuild(TinyMlp):
    """build() calls sys.exit with the driver's own former exit codes: an error of the user's
    code, never "cannot import torch" or a broken target."""

    code = 4

    def build(self):
        import sys

        sys.exit(self.code)


class ExitsThreeInBuild(ExitsInBuild):
    code = 3


class RaisesInBuild(TinyMlp):
    def build(self):
        raise ValueError("build is broken on purpose")


class VectorLoss(TinyMlp):
    """Its loss keeps one value per sample (no reduction): an error of its loss in every check,
    not a verdict on the mask."""

    def loss(self, output, targets):
        return nn.functional.cross_entropy(output, targets, reduction="none")


class TargetsOutOfRange(TinyMlp):
    """Every target is a class id past the 4 the model has."""

    def batch(self, seed, device):
        x, y = classification_batch(seed, device)
        return x, y + 10


class Outer:
    """Holds a protocol class: `models.py:Outer.Inner` is attribute access."""

    class Inner(TinyMlp):
        pass


class NoIgnoreIndex(TinyMlp):
    """Its loss has no ignore index: it scores class ids, and raises on the batch's -100s."""

    def batch(self, seed, device):
        x, y = classification_batch(seed, device)
        y[::4] = -100
        return x, y

    def loss(self, output, targets):
        return nn.functional.cross_entropy(output, targets, ignore_index=-1)


class HfCollateShifts:
    """A protocol object around a tiny GPT-2 whose batch carries labels already shifted (a
    collate written for a loss that does not shift), and no `labels` attribute: the driver must
    know that GPT-2 shifts them again."""

    task = "causal_lm"

    def build(self):
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(vocab_size=32, n_positions=16, n_embd=16, n_layer=1, n_head=2)
        return GPT2LMHeadModel(config)

    def batch(self, seed, device):
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, 32, (4, 17), generator=g)
        return ids[:, :-1].to(device), ids[:, 1:].to(device)
