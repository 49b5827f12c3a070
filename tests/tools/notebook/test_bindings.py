"""The names a cell's code binds, read from its tree."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.tools.notebook.bindings import bindings


@pytest.mark.parametrize(
    ("code", "names"),
    [
        ("x = 1", {"x"}),
        ("a, (b, *c) = f()", {"a", "b", "c"}),
        ("x += 1\ndel y", {"x", "y"}),
        ("import os.path, numpy as np\nfrom a import b as c, d", {"os", "np", "c", "d"}),
        ("def f(a, b=1):\n    z = a\n    return z", {"f"}),
        ("class K(Base):\n    attr = 1", {"K"}),
        ("def f():\n    global g\n    g = 1", {"f", "g"}),
        ("for i, j in pairs:\n    total = i\nelse:\n    done = 1", {"i", "j", "total", "done"}),
        ("with open(p) as fh, lock:\n    pass", {"fh"}),
        ("try:\n    pass\nexcept ValueError as exc:\n    pass", {"exc"}),
        ("squares = [n * n for n in range(3)]", {"squares"}),
        ("[(last := n) for n in range(3)]", {"last"}),
        ("if (m := 3) > 2:\n    pass", {"m"}),
        (
            "match p:\n    case [a, *rest]:\n        pass\n"
            "    case {'k': v, **others}:\n        pass",
            {"a", "rest", "v", "others"},
        ),
        ("f = lambda q: q", {"f"}),
        ("print(1)", set()),
    ],
)
def test_top_level_names(code: str, names: set[str]) -> None:
    found = bindings(code)
    assert found.names == names
    assert not found.opaque


@pytest.mark.parametrize(
    "code",
    [
        "from math import *",
        "get_ipython().run_line_magic('time', 'x = 1')",
        "exec('x = 1')",
        "globals()['x'] = 1",
        "def f():\n    exec('y = 2')",
    ],
)
def test_code_that_binds_unseen_names_is_opaque(code: str) -> None:
    assert bindings(code).opaque


def test_code_that_does_not_parse_binds_nothing() -> None:
    found = bindings("x = (")
    assert found.names == frozenset() and not found.opaque


@given(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=8))
def test_every_assigned_name_is_found(names: list[str]) -> None:
    import keyword

    names = [
        n for n in names if not keyword.iskeyword(n) and n not in {"match", "case", "type", "_"}
    ]
    code = "\n".join(f"{name} = {i}" for i, name in enumerate(names))
    assert bindings(code).names == set(names)
