"""Tests of nbagent.render.codeview: code in questions, highlighted in cards, diffs, short cell
ids."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.render.codeview import (
    QUESTION_CHARS,
    capped,
    cell_diff,
    code_html,
    diff_counts,
    fenced,
    plain_text,
    question_parts,
    short_id,
    words_of,
)

KEYWORD = "font-weight:bold;color:var(--jp-mirror-editor-keyword-color)"
STRING = "color:var(--jp-mirror-editor-string-color)"
ADDED = "background:color-mix(in srgb,var(--jp-success-color1) 18%,transparent)"
REMOVED = "background:color-mix(in srgb,var(--jp-error-color1) 18%,transparent)"


def text_of(markup: str) -> str:
    """What a block of HTML reads as (block elements as lines)."""
    lines = re.sub(r'<span style="display:block[^"]*">', "\n", markup)
    return html.unescape(re.sub(r"<[^>]+>", "", lines)).lstrip("\n")


def test_a_cell_id_is_shown_by_its_first_eight_characters() -> None:
    assert short_id("0f3c9a2e-5b7d-4e1a-9c8b-2d4f6a8b0c1e") == "0f3c9a2e"
    assert short_id("load") == "load"


def test_a_question_splits_into_words_and_code_and_reads_plain_without_fences() -> None:
    question = "Outside the folder.\n\n" + fenced("x = 1\ny = 2", "python")
    assert question_parts(question) == [(None, "Outside the folder."), ("python", "x = 1\ny = 2")]
    assert words_of(question) == "Outside the folder."
    assert plain_text(question) == "Outside the folder.\n\nx = 1\ny = 2"
    assert question_parts("no code here") == [(None, "no code here")]
    assert question_parts("```python\nnever closed") == [(None, "```python\nnever closed")]


@given(st.text(alphabet="`ab \n+-@", max_size=60))
def test_a_fenced_block_reads_back_as_the_code_whatever_backticks_it_holds(code: str) -> None:
    assert question_parts("Words.\n\n" + fenced(code, "diff python"))[1:] == [("diff python", code)]


def test_long_code_is_cut_at_a_line_end_and_the_rest_counted() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(400))
    shown = capped(code)
    kept, note = shown.rsplit("\n", 1)
    assert len(kept) <= QUESTION_CHARS and code.startswith(kept + "\n")
    assert note == f"… ({len(code) - len(kept):,} more characters)"
    assert capped("short") == "short"


def test_the_diff_of_a_cell_has_its_hunks_and_no_file_header() -> None:
    old = "import math\nr = 2\nprint(math.pi * r)"
    new = "import math\nr = 3\nprint(math.pi * r)\nprint('done')"
    assert cell_diff(old, new) == (
        "@@ -1,3 +1,4 @@\n import math\n-r = 2\n+r = 3\n print(math.pi * r)\n+print('done')"
    )
    assert diff_counts(old, new) == (2, 1)
    assert cell_diff(old, old) == "" and diff_counts(old, old) == (0, 0)


def test_python_is_highlighted_in_the_colours_of_the_editor_magics_included() -> None:
    shown = code_html("%matplotlib inline\ndef f():\n    return 'a < b'  # why", "python")
    assert shown.startswith('<pre class="nbagent-code"><code>')
    assert f'<span style="{KEYWORD}">def</span>' in shown
    assert f'<span style="{STRING}">&#x27;a &lt; b&#x27;</span>' in shown
    assert "font-style:italic;color:var(--jp-mirror-editor-comment-color)" in shown
    assert "error" not in shown  # the magic is IPython's, not a syntax error
    assert text_of(shown) == "%matplotlib inline\ndef f():\n    return 'a < b'  # why"


def test_markdown_is_highlighted_and_unknown_languages_stay_plain() -> None:
    assert "var(--jp-mirror-editor-header-color)" in code_html("# Title\ntext", "markdown")
    plain = code_html("a <b> & $x \\n", "text")
    assert plain == ('<pre class="nbagent-code"><code>a &lt;b&gt; &amp; &#36;x &#92;n</code></pre>')
    assert code_html("x = 1", "no-such-language") == code_html("x = 1", "")


def test_a_diff_tints_added_and_removed_lines_and_highlights_each_side_whole() -> None:
    old = "def f():\n    return 1"
    new = 'def f():\n    """Says\n    two."""\n    return 2'
    shown = code_html(cell_diff(old, new), "diff python")
    blocks = shown.split('<span style="display:block')[1:]
    styles = [block.split('">', 1)[0].lstrip(";") for block in blocks]
    assert styles == ["color:var(--jp-ui-font-color2)", "", REMOVED, ADDED, ADDED, ADDED]
    assert text_of(shown) == (
        '@@ -1,2 +1,4 @@\n def f():\n-    return 1\n+    """Says\n+    two."""\n+    return 2'
    )
    # The docstring's second line is a string too: the new side was highlighted as a whole.
    assert f'+<span style="{STRING}">    two.&quot;&quot;&quot;</span>' in shown


def test_the_code_of_a_card_is_redacted_as_the_question_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "Zq9x7Wv-&<b>$x-Secret-0123456789"
    monkeypatch.setenv("SERVICE_API_KEY", secret)
    shown = code_html(f"token = {secret}\nprint(token)", "python")  # tokens split the secret
    assert "[redacted SERVICE_API_KEY]" in text_of(shown)
    for piece in ("Zq9x7W", "Secret-0123456789", html.escape(secret)):
        assert piece not in shown
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi1\n-----END"
    assert "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi1" in text_of(code_html(key, "text"))


def test_invisible_characters_show_as_escapes() -> None:
    assert text_of(code_html("x = 1\rprint('\x1b[8m')", "python")) == (
        "x = 1\\x0dprint('\\x1b[8m')"
    )
