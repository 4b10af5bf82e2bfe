"""Hugging Face twins: a model built from the tiny llama config, fed a batch the way a training
script would, with one mistake in how the labels are made."""

import os

import torch

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf", "llama-tiny")
BATCH, SEQ, PAD = 4, 32, 0


def token_rows(seed):
    """Rows of an arithmetic progression over the vocabulary (never the pad id)."""
    g = torch.Generator().manual_seed(seed)
    start = torch.randint(3, 200, (BATCH, 1), generator=g)
    step = torch.randint(1, 4, (BATCH, 1), generator=g)
    return (start + step * torch.arange(SEQ)) % 250 + 3


class LabelsShiftedTwice:
    """Twin: labels are shifted by one in the batch, and the HF model shifts them again inside."""

    task = "causal_lm"
    labels = "in_model"

    def build(self):
        from transformers import AutoConfig, AutoModelForCausalLM

        return AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(CONFIG))

    def batch(self, seed, device):
        ids = token_rows(seed)
        labels = torch.full_like(ids, -100)
        labels[:, :-1] = ids[:, 1:]  # the bug: HF models shift labels themselves; pass ids
        inputs = {"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids).to(device)}
        return inputs, labels.to(device)
