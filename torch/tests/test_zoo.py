"""The torch zoo against the protocol (torch/mldebug_model.py), without the driver or cargo:
every model builds, makes a deterministic batch, runs a forward and a backward; every twin
really has its bug (the unshifted LM's targets are its inputs, the detached layer gets no
gradient, ...) and its clean model really has not; the manifest zoo.json is consistent.

    python -m unittest discover -s torch/tests -t torch/tests -p test_zoo.py

The hf: and LoRA entries need transformers (and peft); they are skipped without them.
"""

import importlib.util
import json
import os
import sys
import unittest

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO = os.path.normpath(os.path.join(HERE, "..", "zoo"))
PROTOCOL_FILE = os.path.normpath(os.path.join(HERE, "..", "mldebug_model.py"))
CHECKS = {"init-loss", "class-balance", "label-mask", "grad-flow", "nan-trace", "batch-leak",
          "overfit", "memory"}
SEEDS = (0, 1, 2, 3, 4)
CPU = torch.device("cpu")


def has(module):
    return importlib.util.find_spec(module) is not None


def manifest():
    with open(os.path.join(ZOO, "zoo.json")) as f:
        return json.load(f)


def load_module(path):
    name = "zoo_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def protocol_object(target):
    """The object `FILE.py:NAME` names (a class is instantiated with no arguments)."""
    path, name = target.rsplit(":", 1)
    obj = getattr(load_module(os.path.join(ZOO, path)), name)
    return obj() if isinstance(obj, type) else obj


def zoo(target):
    return protocol_object(target)


def build(subject, seed=0):
    torch.manual_seed(seed)
    return subject.build()


def logits_of(output):
    return output.logits if hasattr(output, "logits") else output


def forward(model, inputs):
    return model(**inputs) if isinstance(inputs, dict) else model(inputs)


def loss_of(subject, output, targets):
    """The subject's loss, or the protocol's default (mean CE over the last dim, -100 ignored;
    logits shifted by one first for labels "in_model")."""
    if hasattr(subject, "loss"):
        return subject.loss(output, targets)
    logits = logits_of(output)
    if getattr(subject, "labels", "shifted") == "in_model":
        logits, targets = logits[..., :-1, :], targets[..., 1:]
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           ignore_index=-100)


def input_ids(inputs):
    return inputs["input_ids"] if isinstance(inputs, dict) else inputs


def grads(subject, seed=0):
    """{name: grad or None} after one forward and backward of a fresh model."""
    model = build(subject, seed)
    model.train()
    inputs, targets = subject.batch(seed, CPU)
    loss_of(subject, forward(model, inputs), targets).backward()
    return {n: p.grad for n, p in model.named_parameters()}


def eval_logits(model, inputs):
    model.eval()
    with torch.no_grad():
        return logits_of(forward(model, inputs))


def bump_sample(inputs, j, vocab):
    """The inputs with sample j changed (token ids +1 mod vocab, floats by noise)."""
    x = input_ids(inputs).clone()
    if x.is_floating_point():
        x[j] += torch.randn(x[j].shape, generator=torch.Generator().manual_seed(7))
    else:
        x[j] = (x[j] + 1) % vocab
    return x


def cross_sample_change(subject, seed=0):
    """Largest change of samples 0..n-2's outputs when sample n-1 changes (eval mode)."""
    model = build(subject, seed)
    inputs, _ = subject.batch(seed, CPU)
    before = eval_logits(model, inputs)
    after = eval_logits(model, bump_sample(inputs, -1, before.shape[-1]))
    return (after[:-1] - before[:-1]).abs().max().item()


def future_change(subject, seed=0):
    """Largest change of the logits at positions <= t when every token after t changes."""
    model = build(subject, seed)
    inputs, _ = subject.batch(seed, CPU)
    before = eval_logits(model, inputs)
    ids = input_ids(inputs).clone()
    t = ids.shape[1] // 2 - 1
    ids[:, t + 1:] = (ids[:, t + 1:] + 1) % before.shape[-1]
    after = eval_logits(model, ids)
    return (after[:, : t + 1] - before[:, : t + 1]).abs().max().item()


def memorise(subject, steps=200, seed=0):
    """The loss after `steps` Adam steps (lr 3e-3) on one batch."""
    model = build(subject, seed)
    inputs, targets = subject.batch(seed, CPU)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(subject, forward(model, inputs), targets)
        loss.backward()
        opt.step()
    return loss.item()


class Manifest(unittest.TestCase):
    def test_entries_are_complete_and_consistent(self):
        entries = manifest()
        names = [e["name"] for e in entries]
        self.assertEqual(len(names), len(set(names)), "duplicate names")
        clean = {e["name"] for e in entries if e["clean"]}
        for e in entries:
            with self.subTest(e["name"]):
                for key in ("name", "target", "lora", "clean", "breaks", "needs"):
                    self.assertIn(key, e)
                self.assertLessEqual(set(e["breaks"]), CHECKS)
                if e["clean"]:
                    self.assertEqual(e["breaks"], [])
                else:
                    self.assertTrue(e["breaks"], "a twin breaks something")
                    self.assertIn(e.get("twin_of"), clean)
                    self.assertTrue(e.get("bug"))
                target = e["target"]
                if target.startswith("hf:"):
                    config = os.path.join(ZOO, target[3:], "config.json")
                    self.assertTrue(os.path.isfile(config), config)
                    self.assertIn("transformers", e["needs"])
                else:
                    path, name = target.rsplit(":", 1)
                    self.assertTrue(os.path.isfile(os.path.join(ZOO, path)), path)
                    self.assertTrue(name.isidentifier())
                if e["lora"] is not None:
                    self.assertIn("peft", e["needs"])
                    keys = dict(kv.split("=", 1) for kv in e["lora"].split(",") if "=" in kv)
                    self.assertLessEqual({"r", "alpha", "targets"}, set(keys))

    def test_every_protocol_class_in_the_zoo_is_listed(self):
        listed = {e["target"] for e in manifest()}
        for file in sorted(os.listdir(ZOO)):
            if not file.endswith(".py"):
                continue
            module = load_module(os.path.join(ZOO, file))
            for name, obj in vars(module).items():
                if isinstance(obj, type) and obj.__module__ == module.__name__ \
                        and hasattr(obj, "build") and hasattr(obj, "batch"):
                    self.assertIn("%s:%s" % (file, name), listed)


class Protocol(unittest.TestCase):
    """Every file target: build, batch, loss, forward and backward; deterministic per seed."""

    def file_targets(self):
        for e in manifest():
            if e["target"].startswith("hf:"):
                continue
            if any(not has(m) for m in e["needs"]):
                continue
            yield e["name"], e["target"]
        yield "mldebug_model.py:Example", None

    def subject(self, target):
        if target is None:
            return load_module(PROTOCOL_FILE).Example()
        return zoo(target)

    def test_build_batch_loss_backward(self):
        for name, target in self.file_targets():
            with self.subTest(name):
                subject = self.subject(target)
                model = build(subject)
                self.assertIsInstance(model, torch.nn.Module)
                self.assertLess(sum(p.numel() for p in model.parameters()), 500_000)
                inputs, targets = subject.batch(0, CPU)
                self.assertTrue(torch.is_tensor(targets))
                self.assertEqual(targets.dtype, torch.long)
                self.assertLessEqual(targets.numel(), 4096)
                loss = loss_of(subject, forward(model, inputs), targets)
                self.assertEqual(loss.dim(), 0)
                self.assertTrue(torch.isfinite(loss))
                loss.backward()
                moved = [p for p in model.parameters() if p.grad is not None
                         and p.grad.abs().sum() > 0]
                self.assertTrue(moved, "some parameter gets a gradient")

    def test_same_seed_same_model_and_batch(self):
        for name, target in self.file_targets():
            with self.subTest(name):
                subject = self.subject(target)
                a, b = build(subject, 3).state_dict(), build(subject, 3).state_dict()
                for k in a:
                    self.assertTrue(torch.equal(a[k], b[k]), k)
                (x1, y1), (x2, y2) = subject.batch(3, CPU), subject.batch(3, CPU)
                self.assertTrue(torch.equal(input_ids(x1), input_ids(x2)))
                self.assertTrue(torch.equal(y1, y2))
                x3, _ = subject.batch(4, CPU)
                self.assertFalse(torch.equal(input_ids(x1), input_ids(x3)))

    def test_clean_models_are_free_of_the_twins_bugs(self):
        for target in ("mlp.py:Mlp", "cnn.py:Cnn", "tiny_gpt.py:TinyGpt"):
            with self.subTest(target):
                subject = zoo(target)
                self.assertTrue(all(g is not None and g.abs().sum() > 0
                                    for g in grads(subject).values()))
                self.assertEqual(cross_sample_change(subject), 0.0)
        gpt = zoo("tiny_gpt.py:TinyGpt")
        self.assertEqual(future_change(gpt), 0.0)
        inputs, targets = gpt.batch(0, CPU)
        self.assertTrue(torch.equal(targets[:, :-1], inputs[:, 1:]))
        self.assertTrue((targets[:, -1] == -100).all())


class MlpTwins(unittest.TestCase):
    def test_softmax_before_cross_entropy(self):
        subject = zoo("mlp.py:SoftmaxBeforeCrossEntropy")
        inputs, targets = subject.batch(0, CPU)
        out = build(subject)(inputs)
        self.assertTrue((out >= 0).all())
        self.assertTrue(torch.allclose(out.sum(-1), torch.ones(out.shape[0])))
        # Probabilities used as logits: the loss cannot go below log(e + 3) - 1 = 0.74 for four
        # classes, so one batch is never memorised; the clean model memorises it.
        self.assertGreater(memorise(subject), 0.7)
        self.assertLess(memorise(zoo("mlp.py:Mlp")), 0.07)

    def test_frozen_layer(self):
        model = build(zoo("mlp.py:FrozenLayer"))
        frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
        self.assertEqual(frozen, ["fc2.weight", "fc2.bias"])

    def test_detached(self):
        g = grads(zoo("mlp.py:Detached"))
        self.assertIsNone(g["fc1.weight"])
        self.assertIsNone(g["fc1.bias"])
        self.assertGreater(g["head.weight"].abs().sum().item(), 0)

    def test_dead_relu(self):
        for seed in SEEDS:
            g = grads(zoo("mlp.py:DeadRelu"), seed)
            self.assertEqual(g["fc1.weight"].abs().sum().item(), 0.0)
            self.assertEqual(g["fc1.bias"].abs().sum().item(), 0.0)

    def test_imbalanced(self):
        _, y = zoo("mlp.py:Imbalanced").batch(0, CPU)
        counts = torch.bincount(y)
        self.assertGreaterEqual(counts.max().item() / counts[counts > 0].min().item(), 100)
        _, y = zoo("mlp.py:Mlp").batch(0, CPU)
        counts = torch.bincount(y, minlength=4)
        self.assertLess(counts.max().item() / max(1, counts.min().item()), 10)


class TinyGptTwins(unittest.TestCase):
    def test_unshifted(self):
        inputs, targets = zoo("tiny_gpt.py:Unshifted").batch(0, CPU)
        self.assertTrue(torch.equal(inputs, targets))

    def test_no_causal_mask_sees_the_future(self):
        for seed in SEEDS:
            self.assertGreater(future_change(zoo("tiny_gpt.py:NoCausalMask"), seed), 1e-4)
        self.assertEqual(cross_sample_change(zoo("tiny_gpt.py:NoCausalMask")), 0.0)

    def test_view_not_transpose_mixes_the_batch(self):
        for seed in SEEDS:
            self.assertGreater(cross_sample_change(zoo("tiny_gpt.py:ViewNotTranspose"), seed),
                               1e-4)

    def test_padding_is_labelled(self):
        inputs, targets = zoo("tiny_gpt.py:PadLabelled").batch(0, CPU)
        module = load_module(os.path.join(ZOO, "tiny_gpt.py"))
        pad_inputs = inputs[:, 1:] == module.PAD
        self.assertTrue(pad_inputs.any(), "the batch has padding")
        self.assertTrue((targets[:, :-1][pad_inputs] == module.PAD).all())
        self.assertFalse((targets[:, :-1][pad_inputs] == -100).any())

    def test_keeps_loss_holds_every_step(self):
        subject = zoo("tiny_gpt.py:KeepsLoss")
        model = build(subject)
        inputs, targets = subject.batch(0, CPU)
        for _ in range(3):
            loss_of(subject, model(inputs), targets).backward(retain_graph=False)
        self.assertEqual(len(subject.history), 3)
        kept_loss, kept_logits = subject.history[0]
        self.assertIsNotNone(kept_loss.grad_fn)
        self.assertIsNotNone(kept_logits.grad_fn)


@unittest.skipUnless(has("transformers"), "needs transformers")
class HfZoo(unittest.TestCase):
    def hf_model(self, rel, seed=0):
        from transformers import AutoConfig, AutoModelForCausalLM

        torch.manual_seed(seed)
        config = AutoConfig.from_pretrained(os.path.join(ZOO, rel))
        return AutoModelForCausalLM.from_config(config)

    def test_tiny_configs_build_and_train(self):
        for e in manifest():
            if not e["target"].startswith("hf:") or e["lora"]:
                continue
            with self.subTest(e["name"]):
                model = self.hf_model(e["target"][3:])
                self.assertLess(sum(p.numel() for p in model.parameters()), 500_000)
                ids = torch.randint(3, model.config.vocab_size, (2, 16),
                                    generator=torch.Generator().manual_seed(0))
                out = model(input_ids=ids, labels=ids)
                self.assertTrue(torch.isfinite(out.loss))
                out.loss.backward()

    def test_labels_shifted_twice(self):
        subject = zoo("hf_twins.py:LabelsShiftedTwice")
        self.assertEqual(subject.labels, "in_model")
        inputs, labels = subject.batch(0, CPU)
        ids = inputs["input_ids"]
        self.assertTrue(torch.equal(labels[:, :-1], ids[:, 1:]))
        model = build(subject)
        loss = loss_of(subject, forward(model, inputs), labels)
        self.assertTrue(torch.isfinite(loss))
        loss.backward()

    @unittest.skipUnless(has("peft"), "needs peft")
    def test_lora_targets(self):
        import peft

        for e in manifest():
            if not e["lora"]:
                continue
            spec = dict(kv.split("=", 1) for kv in e["lora"].split(",targets=")[0].split(","))
            targets = e["lora"].split("targets=", 1)[1].split(",")
            config = peft.LoraConfig(r=int(spec["r"]), lora_alpha=int(spec["alpha"]),
                                     target_modules=targets)
            with self.subTest(e["name"]):
                model = self.hf_model(e["target"][3:])
                if e["clean"]:
                    wrapped = peft.get_peft_model(model, config)
                    trainable = [n for n, p in wrapped.named_parameters() if p.requires_grad]
                    self.assertTrue(trainable)
                    self.assertTrue(all("lora_" in n for n in trainable))
                else:
                    with self.assertRaises(ValueError):
                        peft.get_peft_model(model, config)


if __name__ == "__main__":
    torch.set_num_threads(min(2, torch.get_num_threads()))
    unittest.main(argv=sys.argv)
