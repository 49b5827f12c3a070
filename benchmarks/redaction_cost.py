"""What redaction costs: per text of each size, per streamed refresh, per unchanged view.

With four secrets in the environment (an API key, a URL with a password, a GitHub token and a
short password), it measures with ``time.perf_counter``:

- a first redaction of texts of 100 B to 100 kB (code and prose, no secret in them): the
  environment's secrets in all their forms plus detect-secrets' shape scan; then the shape
  scan alone, and the environment alone (``shapes=False``, what escaped text gets again);
- the same text again (a view drawn again: remembered);
- streaming: an answer of 4,000 characters arriving 4 characters at a time, rendered as the
  live view does it at each refresh (:func:`~nbagent.core.secrets.streamable`, then
  :func:`~nbagent.core.markup.model_html`, which redacts the whole text before escaping it),
  beside markdown-it rendering the same text alone;
- the check that ``os.environ`` did not change, which every call makes;
- the first use, nbagent already imported: importing detect-secrets and working out the forms
  of the secrets.

Run ``python benchmarks/redaction_cost.py`` from the repo root (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue import markdown_table, run_line  # noqa: E402

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "Zx9" * 30,
    "DATABASE_URL": "postgres://app:s3cr3t-pw@db.internal:5432/sales",
    "GH_PAT": "ghp_" + "aB3" * 12,
    "DB_PASSWORD": "abc12",
}
"""The environment's secrets during the measurements."""

WORDS = (
    "import pandas as pd\n",
    'df = pd.read_csv("data/sales.csv")\n',
    "for row in df.itertuples():\n    print(row.region, row.total)\n",
    "The quarterly totals rose by 12% in the north and fell in the south. ",
    "/home/user/project/notebooks/analysis.ipynb ",
    "https://example.org/docs/api?page=2 ",
    "df.groupby('region')['total'].sum().sort_values(ascending=False)\n",
)


def sample(size: int, seed: int) -> str:
    """Code and prose of about ``size`` characters, no secret in it."""
    rng = random.Random(seed)
    parts, length = [], 0
    while length < size:
        parts.append(rng.choice(WORDS))
        length += len(parts[-1])
    return "".join(parts)[:size]


def per_call(work: Callable[[], object], repeat: int) -> float:
    """The median seconds of one call, over ``repeat`` rounds of a few calls."""
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        rounds.append(time.perf_counter() - start)
    return statistics.median(rounds)


def micro(seconds: float) -> str:
    """Seconds as microseconds or milliseconds."""
    return f"{seconds * 1e6:,.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:,.2f} ms"


def main() -> None:
    """Measure, and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    repeat = 5 if args.quick else 30
    os.environ.update(SECRETS)

    from nbagent.core import markup, secrets

    start = time.perf_counter()
    secrets.redact("warm-up: AKIAIOSFODNN7EXAMPLE")
    first_use = time.perf_counter() - start

    rows = []
    for size in (100, 1_000, 10_000, 100_000):
        texts = iter(sample(size, seed) for seed in range(10_000))
        cold = per_call(lambda texts=texts: secrets.redact(next(texts)), repeat)
        shapes = per_call(lambda texts=texts: secrets._shape_spans(next(texts)), repeat)
        env = per_call(lambda texts=texts: secrets.redact(next(texts), shapes=False), repeat)
        text = sample(size, -1)
        secrets.redact(text)
        again = per_call(lambda text=text: secrets.redact(text), repeat)
        rows.append([f"{size:,} B", micro(cold), micro(shapes), micro(env), micro(again)])
    print(run_line(sys.argv))
    print()
    print(
        markdown_table(
            ["text", "first redaction", "shape scan alone", "environment alone", "again"],
            rows,
            "lrrrr",
        )
    )

    answer = sample(4_000, 7)
    refreshes, alone = [], []
    for end in range(4, len(answer) + 1, 4):
        began = time.perf_counter()
        markup.model_html(secrets.streamable(answer[:end]))
        refreshes.append(time.perf_counter() - began)
        began = time.perf_counter()
        markup._MARKDOWN.render(answer[:end])
        alone.append(time.perf_counter() - began)
    check = per_call(secrets.secret_values, repeat * 100)
    print()
    print(
        markdown_table(
            ["measure", "time"],
            [
                [
                    "live refresh of a streaming answer, median (≤ 4,000 chars)",
                    micro(statistics.median(refreshes)),
                ],
                ["live refresh, longest", micro(max(refreshes))],
                ["markdown-it alone, same texts, median", micro(statistics.median(alone))],
                ["environment unchanged: secret_values()", micro(check)],
                ["first use (import detect-secrets, forms of 4 secrets)", micro(first_use)],
            ],
            "lr",
        )
    )


if __name__ == "__main__":
    main()
