"""A bag-of-embeddings classifier."""

from torch import nn


class BagClassifier(nn.Module):
    def __init__(self, vocab, classes, dim=32, dropout=0.1):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(dim, classes)

    def forward(self, words):
        return self.head(self.dropout(self.embed(words)))
