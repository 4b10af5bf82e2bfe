"""Synthetic "documents": word ids drawn from a topic's vocabulary mixed with common words."""

import torch
from torch.utils.data import Dataset

VOCAB = 200
TOPICS = 4
COMMON = 40  # word ids below this are shared by every topic


class TopicDocuments(Dataset):
    def __init__(self, n, seed, length=20):
        g = torch.Generator().manual_seed(seed)
        self.topics = torch.randint(0, TOPICS, (n,), generator=g)
        span = (VOCAB - COMMON) // TOPICS
        topical = COMMON + self.topics.unsqueeze(1) * span + torch.randint(0, span, (n, length), generator=g)
        common = torch.randint(0, COMMON, (n, length), generator=g)
        pick = torch.rand(n, length, generator=g) < 0.3
        self.words = torch.where(pick, topical, common)

    def __len__(self):
        return len(self.topics)

    def __getitem__(self, i):
        return self.words[i], self.topics[i]
