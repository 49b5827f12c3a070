"""Tests of nbagent.policy.permission_rules: permission rules as written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.errors import ConfigurationError
from nbagent.policy.permission_rules import Rule


@pytest.mark.parametrize("text", ["", "Bash(", "Bash()", "Two words", "(x)"])
def test_malformed_rules_are_clear_errors(text: str) -> None:
    with pytest.raises(ConfigurationError, match="is not of the form Tool or Tool"):
        Rule(text)


@given(st.from_regex(r"[A-Za-z_*][A-Za-z0-9_*-]{0,20}(\([^()]{1,20}\))?", fullmatch=True))
def test_every_well_formed_rule_parses(text: str) -> None:
    rule = Rule(text)
    assert rule.tool and (rule.specifier is None or rule.specifier)
