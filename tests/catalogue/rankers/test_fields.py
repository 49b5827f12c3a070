"""Tests of nbagent.catalogue.rankers.fields: tokens, stemming, the fields of a tool, required
terms."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue.rankers.fields import FIELDS, ToolFields, has_term, stem, tokens
from nbagent.catalogue.toolsearch import parse_terms
from nbagent.core.tool import Tool


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [
        ("issues", "issue"),
        ("queries", "query"),
        ("files", "file"),
        ("branches", "branche"),  # -es -> -e, as the S-stemmer does (both sides agree)
        ("status", "status"),
        ("access", "access"),
        ("gas", "gas"),
        ("read", "read"),
    ],
)
def test_s_stemmer(word: str, stemmed: str) -> None:
    assert stem(word) == stemmed


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12))
def test_plural_and_singular_meet(word: str) -> None:
    """A word of three letters or more and its -s plural stem alike (endings the S-stemmer
    treats specially, -s, -u, -e and -i, left out)."""
    if len(word) >= 3 and not word.endswith(("s", "u", "e", "i")):
        assert stem(word + "s") == stem(word)


def test_cjk_text_becomes_characters_and_bigrams_without_word_boundaries() -> None:
    assert set(tokens("发送消息")) == {"发", "送", "消", "息", "发送", "送消", "消息"}
    assert set(tokens("ファイル")) >= {"ファ", "イル"}
    assert tokens("Send Messages") == ["send", "message"]


def test_fields_of_an_mcp_tool() -> None:
    tool = Tool(
        name="mcp__github__list_pull_requests",
        description="List pull requests in a repository.",
        input_schema={
            "type": "object",
            "properties": {"repo": {"type": "string", "description": "Repository name"}},
        },
        search_hint="prs",
        is_mcp=True,
    )
    fields = dict(zip(FIELDS, ToolFields.of(tool).fields, strict=True))
    assert fields["name"] == ("list", "pull", "request")
    assert fields["server"] == ("github",)
    assert fields["hint"] == ("prs",)
    assert fields["params"] == ("repo",)
    assert fields["param_docs"] == ("repository", "name")
    assert ToolFields.of(tool).text.startswith("github: list pull requests.")


def test_required_terms_need_every_word_or_a_third_of_the_cjk_grams() -> None:
    tool = Tool(name="Post", description="向频道发送一条消息 now")
    vocabulary = ToolFields.of(tool).vocabulary
    [now, zh, missing] = parse_terms("+now +发送消息给 +later")
    assert has_term(vocabulary, now)
    assert has_term(vocabulary, zh)
    assert not has_term(vocabulary, missing)
