"""Fixtures of the ranker tests: a tiny deterministic embedder (test modules take it as a
fixture rather than importing this file, whose module name other test folders share)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest

from nbagent.rankers.fields import tokens


class HashingEmbedder:
    """A bag-of-tokens embedder: texts sharing tokens are similar. Counts its calls."""

    model_id = "test/hashing"
    dimension = 64
    multilingual = False

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += texts
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokens(text):
                digest = hashlib.blake2b(token.encode(), digest_size=2).digest()
                out[row, int.from_bytes(digest) % self.dimension] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


@pytest.fixture
def hashing() -> HashingEmbedder:
    """A fresh hashing embedder."""
    return HashingEmbedder()


@pytest.fixture
def new_hashing() -> type[HashingEmbedder]:
    """The hashing embedder's class, to make more of them."""
    return HashingEmbedder
