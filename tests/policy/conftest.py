"""Fixtures of the permission tests: a home folder with credentials, a working folder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own, holding an SSH key and AWS credentials."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = x")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working folder with a denied ``secrets`` folder beside open data."""
    root = tmp_path / "project"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "db.txt").write_text("password=hunter2")
    (root / "secrets" / "nb.ipynb").write_text("{}")
    (root / "data").mkdir()
    (root / "data" / "a.csv").write_text("x\n1\n")
    return root
