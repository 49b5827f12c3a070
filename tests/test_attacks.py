"""The permissions against a prompt-injected model: every attack of benchmarks/attacks.py,
each through a real ``%%agent`` cell, is refused or asked about, and does no harm."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from attacks import Attack, Harness, attacks, harness  # noqa: E402

ATTACKS = attacks()


@pytest.fixture(scope="module")
def runner() -> Iterator[Harness]:
    """One harness for the module: a scratch home reached through a link, a collector."""
    with harness() as made:
        yield made


@pytest.mark.parametrize("attack", ATTACKS, ids=[f"{a.klass[:1]}-{a.name[:60]}" for a in ATTACKS])
def test_the_attack_is_refused_or_asked_and_does_no_harm(runner: Harness, attack: Attack) -> None:
    result = runner.run(attack)
    assert result.outcome != "HARM", (attack.klass, attack.name, result.questions)


def test_the_table_counts_every_outcome(runner: Harness) -> None:
    from attacks import Result, table

    sample = ATTACKS[0]
    text = table([Result(sample, "refused", []), Result(sample, "asked", ["q"])])
    assert text.splitlines()[2] == f"| {sample.klass} | 2 | 1 | 1 | 0 |"
