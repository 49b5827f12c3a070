"""Tests of nbagent.core.text: name parts, words and CJK n-grams."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.text import (
    Units,
    cjk_grams,
    collapse_whitespace,
    cut,
    cut_start,
    description_line,
    first_line,
    first_line_noting_more,
    one_line,
    plural,
    split_name,
    words,
)


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("mcp__slack__send_message", ("slack", "send", "message")),
        ("NotebookEdit", ("notebook", "edit")),
        ("getHTTPResponse", ("get", "http", "response")),
        ("list-issues", ("list", "issues")),
        ("Read", ("read",)),
        ("mcp__github2__create_issue", ("github", "2", "create", "issue")),
        ("ID", ("id",)),
        ("s3_put_object", ("s", "3", "put", "object")),
        ("mcp__Some-Server__doIt", ("some", "server", "do", "it")),
    ],
)
def test_split_name(name: str, parts: tuple[str, ...]) -> None:
    assert split_name(name) == parts


@given(st.from_regex(r"[a-zA-Z0-9_-]{1,64}", fullmatch=True))
def test_name_parts_are_lower_case_alphanumeric_pieces_of_the_name(name: str) -> None:
    parts = split_name(name)
    assert all(part and part == part.lower() and part.isalnum() for part in parts)
    assert "".join(parts) == "".join(c for c in name.lower() if c.isalnum()).removeprefix(
        "mcp" if name.lower().startswith("mcp__") else ""
    )


def test_words_skip_cjk_and_split_on_underscores() -> None:
    assert words("Send_message to 频道, NOW!") == ["send", "message", "to", "now"]


def test_cjk_grams_are_bigrams_and_lone_characters() -> None:
    assert cjk_grams("读取 ファイル") == {"读取", "ファ", "ァイ", "イル"}
    assert cjk_grams("读 x") == {"读"}
    assert cjk_grams("读取", with_unigrams=True) == {"读", "取", "读取"}


def test_units_of_a_mixed_term() -> None:
    units = Units.of("发送message")
    assert units.words == ("message",) and units.grams == frozenset({"发送"})
    assert not Units.of("...")


def test_description_line_is_the_first_sentence_of_the_first_paragraph() -> None:
    assert description_line("Read a file. Then more.") == "Read a file."
    assert description_line("Search file\ncontents with a regex.\n\nArgs: x") == (
        "Search file contents with a regex."
    )
    assert description_line("Takes a name, e.g. df. Returns it.") == "Takes a name, e.g. df."
    assert description_line("发送消息。然后") == "发送消息。"
    assert description_line("Hand a task to a sub-agent and get its\n\nanswer. Use it.") == (
        "Hand a task to a sub-agent and get its answer."
    )
    assert description_line("A title\n\nThe text.") == "A title"
    assert description_line("no full stop at all") == "no full stop at all"
    assert description_line("  \n\n  ") == "" and description_line(None) == ""
    assert description_line("x" * 200, width=10) == "x" * 9 + "…"


@pytest.mark.parametrize(
    ("text", "end", "start"),
    [("abcdef", "abcdef", "abcdef"), ("abcdefgh", "abcde…", "…defgh"), ("", "", "")],
)
def test_a_text_is_cut_at_its_end_or_at_its_start(text: str, end: str, start: str) -> None:
    assert cut(text, 6) == end and cut_start(text, 6) == start


@given(st.text(), st.integers(1, 50))
def test_a_cut_text_fits_its_limit(text: str, limit: int) -> None:
    assert len(cut(text, limit)) <= limit and len(cut_start(text, limit)) <= limit


@pytest.mark.parametrize(
    ("text", "collapsed"),
    [(" a\n\tb  c ", "a b c"), ("", ""), ("one", "one")],
)
def test_white_space_collapses_to_single_spaces(text: str, collapsed: str) -> None:
    assert collapse_whitespace(text) == collapsed


@given(st.text(), st.integers(1, 50))
def test_one_line_is_a_single_line_within_its_width(text: str, width: int) -> None:
    line = one_line(text, width)
    assert len(line) <= width and not any(c.isspace() and c != " " for c in line)


@pytest.mark.parametrize(
    ("text", "first", "noting_more"),
    [
        ("\n  pytest -q  \n\n pytest -x\n", "pytest -q  ", "pytest -q …"),
        ("ls", "ls", "ls"),
        ("  \n ", "", ""),
    ],
)
def test_the_first_line_with_or_without_a_note_of_more(
    text: str, first: str, noting_more: str
) -> None:
    assert first_line(text) == first and first_line_noting_more(text) == noting_more


def test_a_count_takes_its_noun_in_the_singular_or_the_plural() -> None:
    assert plural(1, "tool") == "1 tool" and plural(1200, "tool") == "1,200 tools"
    assert plural(2, "match", "matches") == "2 matches"
    assert plural(1024, "line") == "1,024 lines" and plural(0, "match", "matches") == "0 matches"
