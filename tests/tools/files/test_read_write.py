"""Read, Write and Edit on real files in a temporary folder."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.core.tool import Tool
from nbagent.policy.combining import decide
from nbagent.policy.permissions import PermissionPolicy
from nbagent.tools import Limits, ToolContext
from nbagent.tools.files.read_write import binary_kind, image_type
from tests.tools.helpers import (
    LazyTools,
    call,
    error,
    save_around_the_swap,
    summary,
    text,
    without_file_note,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(40)


def make_tools(root: Path, **kwargs: object) -> dict[str, Tool]:
    return LazyTools(ToolContext(root=root, **kwargs))  # type: ignore[arg-type]


def bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


# Read ----------------------------------------------------------------------------------


def test_read_numbers_lines_like_cat_n(root: Path, tools: dict[str, Tool]) -> None:
    (root / "a.txt").write_text("first\n\tsecond\nthird")
    assert (
        text(tools["Read"], file_path="a.txt") == "     1\tfirst\n     2\t\tsecond\n     3\tthird"
    )
    assert summary(tools["Read"], file_path="a.txt") == "3 lines"


def test_read_window_says_how_to_read_on(root: Path, tools: dict[str, Tool]) -> None:
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert text(tools["Read"], file_path="a.txt", offset=3, limit=2) == (
        "     3\tline 3\n     4\tline 4\n[Showing lines 3-4 of 10. Read on with offset=5.]"
    )
    assert summary(tools["Read"], file_path="a.txt", offset=3, limit=2) == "lines 3-4 of 10"


def test_read_default_limit_comes_from_the_limits(root: Path) -> None:
    (root / "a.txt").write_text("x\n" * 5)
    read = make_tools(root, limits=Limits(read_lines=2))["Read"]
    assert text(read, file_path="a.txt").endswith(
        "[Showing lines 1-2 of 5. Read on with offset=3.]"
    )
    assert "Without `limit`, 2 lines are shown." in read.description


def test_read_cuts_long_lines_and_stops_at_the_character_limit(root: Path) -> None:
    (root / "long.txt").write_text("a" * 30 + "\n" + "b\n" * 20)
    read = make_tools(root, limits=Limits(line_chars=10, read_chars=80))["Read"]
    out = text(read, file_path="long.txt")
    lines = out.split("\n")
    assert lines[0] == "     1\taaaaaaaaaa… [line cut: 20 more characters]"
    assert lines[1:4] == ["     2\tb", "     3\tb", "     4\tb"] and len(lines) == 5
    assert lines[-1] == (
        "[Stopped after line 4: one Read returns at most 80 characters. Read on with offset=5.]"
    )
    assert summary(read, file_path="long.txt") == "lines 1-4 of 21"


def test_read_empty_missing_folder_and_bad_offsets(root: Path, tools: dict[str, Tool]) -> None:
    (root / "empty.txt").write_text("")
    (root / "sub").mkdir()
    (root / "two.txt").write_text("1\n2\n")
    read = tools["Read"]
    assert text(read, file_path="empty.txt") == "(The file empty.txt is empty.)"
    assert summary(read, file_path="empty.txt") == "empty file"
    assert error(read, file_path="nope.txt") == "File does not exist: nope.txt"
    assert error(read, file_path="sub") == "sub is a folder, not a file: list it with Glob."
    assert (
        error(read, file_path="two.txt", offset=3)
        == "two.txt has 2 lines; offset 3 is past its end."
    )
    assert error(read, file_path="two.txt", offset=0) == "offset is a line number: it starts at 1."
    assert error(read, file_path="two.txt", limit=0) == "limit must be at least 1."


def test_read_refuses_binary_files_clearly(root: Path, tools: dict[str, Tool]) -> None:
    (root / "data.bin").write_bytes(b"abc\x00def")
    (root / "doc.pdf").write_bytes(b"%PDF-1.7\n...")
    assert error(tools["Read"], file_path="data.bin") == (
        "data.bin is a binary file (binary data); Read shows text files, images (PNG, JPEG, "
        "GIF, WebP) and notebooks. Inspect it with Bash (`file`, `xxd | head`) or load it "
        "with Python."
    )
    assert "doc.pdf is a binary file (a PDF document)" in error(tools["Read"], file_path="doc.pdf")


def test_read_shows_undecodable_bytes_with_a_note(root: Path, tools: dict[str, Tool]) -> None:
    (root / "latin.txt").write_bytes("café\n".encode("latin-1"))
    assert text(tools["Read"], file_path="latin.txt") == (
        "     1\tcaf�\n[The file is not valid UTF-8: bytes that are not are shown as �.]"
    )


def test_read_returns_images_as_image_blocks(root: Path, tools: dict[str, Tool]) -> None:
    (root / "plot.png").write_bytes(PNG)
    result = call(tools["Read"], file_path="plot.png")
    assert not result.is_error
    caption, image = result.content
    assert caption == {"type": "text", "text": f"Image plot.png (image/png, {len(PNG)} bytes)"}
    assert image["type"] == "image" and image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == PNG
    assert result.metadata["summary"] == "PNG image, 56 B"


def test_read_refuses_images_over_the_limit(root: Path) -> None:
    (root / "big.png").write_bytes(PNG)
    read = make_tools(root, limits=Limits(image_bytes=10))["Read"]
    assert error(read, file_path="big.png") == (
        "big.png is a 0.0 MB image; Read returns images up to 0.00 MB. Save a smaller copy "
        "(e.g. with PIL) and read that."
    )


@pytest.mark.parametrize(
    ("head", "media_type"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"GIF89a\x01\x00", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"<svg xmlns=", None),
    ],
)
def test_image_types_come_from_the_bytes(head: bytes, media_type: str | None) -> None:
    assert image_type(head) == media_type


@given(
    st.text(
        alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]),
        max_size=200,
    )
)
def test_text_is_never_taken_for_binary(content: str) -> None:
    assert binary_kind(content.encode("utf-8")[:8192]) is None or content.startswith(
        ("%PDF-", "PK\x03\x04", "\x7fELF", "SQLite format 3")
    )


def test_read_renders_a_notebook_as_cells(root: Path, tools: dict[str, Tool]) -> None:
    notebook = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("print(1)", id="c1", execution_count=1)
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    notebook.cells = [nbformat.v4.new_markdown_cell("# Title", id="m1"), code]
    nbformat.write(notebook, root / "nb.ipynb")
    assert without_file_note(text(tools["Read"], file_path="nb.ipynb")) == (
        "Notebook nb.ipynb: 2 cells.\n"
        '<cell index="0" id="m1" type="markdown">\n# Title\n</cell>\n'
        '<cell index="1" id="c1" type="code" execution_count="1">\nprint(1)\n</cell>\n'
        '<output type="stream stdout">\n1\n</output>'
    )
    assert summary(tools["Read"], file_path="nb.ipynb") == "2 cells"
    assert summary(tools["Read"], file_path="nb.ipynb", offset=2) == "cells 2-2 of 2"
    # Reading the notebook counts as reading its cells: NotebookEdit may change them.
    out = text(tools["NotebookEdit"], notebook_path="nb.ipynb", cell_id="m1", new_source="# New")
    assert out == "Replaced cell m1 in nb.ipynb (markdown, 1 line)."


def test_paths_outside_the_root_need_permission(root: Path, tools: dict[str, Tool]) -> None:
    outside = root.parent / "outside.txt"
    outside.write_text("secret")
    (root / "link").symlink_to(outside)
    (root / "inside.txt").write_text("ok")
    policy = PermissionPolicy(root=root)
    for tool_name in ("Read", "Write", "Edit"):
        tool = tools[tool_name]
        for raw in ("../outside.txt", "link", str(outside)):
            decision = decide(tool, {"file_path": raw, "content": ""}, policy)
            assert decision.behavior == "ask" and decision.rule == "outside the working folder"
            assert str(outside) in decision.message and str(root) in decision.message
        for raw in ("inside.txt", str(root / "inside.txt")):
            decision = decide(tool, {"file_path": raw}, policy)
            assert decision.rule != "outside the working folder"
            assert decision.behavior == ("allow" if tool.read_only else "ask")
    decision = decide(tools["Read"], {"file_path": "../outside.txt"}, policy)
    assert decision.message == (
        f"Allow the agent to read {outside}? It is outside the working folder {root}."
    )


# Write ---------------------------------------------------------------------------------


def test_write_creates_files_and_folders(root: Path, tools: dict[str, Tool]) -> None:
    result = call(tools["Write"], file_path="sub/dir/new.txt", content="one\ntwo\n")
    assert result.content == "Created sub/dir/new.txt (2 lines, 8 bytes)."
    assert result.metadata["summary"] == "created, 2 lines"
    assert (root / "sub/dir/new.txt").read_text() == "one\ntwo\n"


def test_write_over_a_file_needs_a_fresh_read(root: Path, tools: dict[str, Tool]) -> None:
    target = root / "a.txt"
    target.write_text("old\n")
    assert error(tools["Write"], file_path="a.txt", content="new") == (
        "a.txt has not been read yet. Read it first, then write over it."
    )
    text(tools["Read"], file_path="a.txt")
    target.write_text("changed by the user\n")
    bump_mtime(target)
    assert error(tools["Write"], file_path="a.txt", content="new") == (
        "a.txt has changed on disk since it was last read (by the user or another program). "
        "Read it again, then write over it."
    )
    text(tools["Read"], file_path="a.txt")
    result = call(tools["Write"], file_path="a.txt", content="new")
    assert result.content == "Wrote a.txt (1 line, 3 bytes)."
    assert result.metadata["summary"] == "replaced, 1 line"
    assert target.read_text() == "new"


def test_a_new_mtime_with_the_same_content_is_no_change(root: Path, tools: dict[str, Tool]) -> None:
    target = root / "a.txt"
    target.write_text("same\n")
    text(tools["Read"], file_path="a.txt")
    bump_mtime(target)
    assert text(tools["Write"], file_path="a.txt", content="x") == "Wrote a.txt (1 line, 1 byte)."


def test_file_tools_refuse_the_open_notebook(root: Path) -> None:
    notebook = root / "analysis.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    tools = make_tools(root, notebook_path=lambda: notebook)
    text(tools["Read"], file_path="analysis.ipynb")
    expected = (
        "analysis.ipynb is the open notebook: change its cells with NotebookEdit (after "
        "NotebookRead), not {}, so that the notebook editor's copy and the cells' outputs stay "
        "intact."
    )
    assert error(tools["Write"], file_path="analysis.ipynb", content="{}") == expected.format(
        "Write"
    )
    assert error(
        tools["Edit"], file_path="analysis.ipynb", old_string="cells", new_string="x"
    ) == expected.format("Edit")
    # Another notebook is a file like any other.
    assert text(tools["Write"], file_path="other.ipynb", content="{}").startswith("Created")


# Edit ----------------------------------------------------------------------------------


def test_edit_replaces_a_unique_string_and_shows_the_result(
    root: Path, tools: dict[str, Tool]
) -> None:
    (root / "code.py").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    text(tools["Read"], file_path="code.py")
    result = call(
        tools["Edit"], file_path="code.py", old_string="line5\n", new_string="five\nFIVE\n"
    )
    assert result.metadata["summary"] == "1 replacement"
    assert result.content == (
        "Edited code.py: replaced 1 occurrence.\n"
        "     2\tline2\n     3\tline3\n     4\tline4\n     5\tfive\n     6\tFIVE\n"
        "     7\tline6\n     8\tline7\n     9\tline8"
    )
    assert (root / "code.py").read_text().count("FIVE") == 1


def test_edit_errors_quote_what_was_not_found_or_found_twice(
    root: Path, tools: dict[str, Tool]
) -> None:
    (root / "a.txt").write_text("x = 1\nx = 1\ny = 2\n")
    edit = tools["Edit"]
    assert error(edit, file_path="a.txt", old_string="y = 2", new_string="y = 3") == (
        "a.txt has not been read yet. Read it first, then edit it."
    )
    text(tools["Read"], file_path="a.txt")
    assert error(edit, file_path="a.txt", old_string="z = 3", new_string="z = 4") == (
        "old_string was not found in a.txt. Copy it exactly from Read's output, whitespace and "
        "indentation included.\nString: z = 3"
    )
    assert error(edit, file_path="a.txt", old_string="x = 1", new_string="x = 0") == (
        "old_string was found 2 times in a.txt, but replace_all is false. Include more "
        "surrounding lines to make it unique, or set replace_all to true to replace every "
        "occurrence.\nString: x = 1"
    )
    assert error(edit, file_path="a.txt", old_string="y", new_string="y") == (
        "old_string and new_string are the same: there is nothing to change."
    )
    assert error(edit, file_path="a.txt", old_string="", new_string="new") == (
        "old_string is empty, but a.txt is not: give the text to replace, or use Write to "
        "replace the whole file."
    )
    assert error(edit, file_path="gone.txt", old_string="a", new_string="b") == (
        "File does not exist: gone.txt"
    )
    result = call(edit, file_path="a.txt", old_string="x = 1", new_string="x = 0", replace_all=True)
    assert str(result.content).startswith("Edited a.txt: replaced 2 occurrences.\n")
    assert result.metadata["summary"] == "2 replacements"
    assert (root / "a.txt").read_text() == "x = 0\nx = 0\ny = 2\n"


def test_edit_quotes_long_strings_cut(root: Path, tools: dict[str, Tool]) -> None:
    (root / "a.txt").write_text("short\n")
    text(tools["Read"], file_path="a.txt")
    message = error(tools["Edit"], file_path="a.txt", old_string="q" * 700, new_string="")
    assert message.endswith("String: " + "q" * 500 + "… (200 more characters)")


def test_edit_after_its_own_write_needs_no_new_read(root: Path, tools: dict[str, Tool]) -> None:
    text(tools["Write"], file_path="n.txt", content="alpha beta\n")
    text(tools["Edit"], file_path="n.txt", old_string="beta", new_string="gamma")
    text(tools["Edit"], file_path="n.txt", old_string="alpha", new_string="delta")
    assert (root / "n.txt").read_text() == "delta gamma\n"


def test_edit_with_empty_old_string_creates_a_file(root: Path, tools: dict[str, Tool]) -> None:
    result = call(tools["Edit"], file_path="new.py", old_string="", new_string="x = 1\n")
    assert result.content == "Created new.py." and result.metadata["summary"] == "created"
    assert (root / "new.py").read_text() == "x = 1\n"


def test_edit_matches_across_windows_line_endings(root: Path, tools: dict[str, Tool]) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    text(tools["Read"], file_path="w.txt")
    text(tools["Edit"], file_path="w.txt", old_string="a\nb", new_string="A\nB")
    assert (root / "w.txt").read_bytes() == b"A\r\nB\r\nc\r\n"


def test_edit_refuses_files_that_are_not_utf8(root: Path, tools: dict[str, Tool]) -> None:
    (root / "l.txt").write_bytes("café".encode("latin-1"))
    text(tools["Read"], file_path="l.txt")
    assert error(tools["Edit"], file_path="l.txt", old_string="caf", new_string="CAF") == (
        "l.txt is not UTF-8 text; Edit would damage it. Change it with Bash instead."
    )


def test_edit_refuses_a_file_changed_since_it_was_read(root: Path, tools: dict[str, Tool]) -> None:
    target = root / "a.txt"
    target.write_text("one\n")
    text(tools["Read"], file_path="a.txt")
    target.write_text("two\n")
    bump_mtime(target)
    assert error(tools["Edit"], file_path="a.txt", old_string="two", new_string="2") == (
        "a.txt has changed on disk since it was last read (by the user or another program). "
        "Read it again, then edit it."
    )


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Tool]]:
    """One folder and one set of tools for every example of a property test."""
    folder = tmp_path_factory.mktemp("shared")
    return folder, make_tools(folder)


_TEXT = st.text(alphabet=st.characters(blacklist_characters="\x00\r", blacklist_categories=["Cs"]))


@settings(max_examples=60, deadline=None)
@given(
    prefix=_TEXT.filter(lambda t: len(t) <= 30),
    old=_TEXT.filter(lambda t: 1 <= len(t) <= 10),
    suffix=_TEXT.filter(lambda t: len(t) <= 30),
    new=_TEXT.filter(lambda t: len(t) <= 10),
)
def test_edit_equals_a_single_str_replace(
    shared: tuple[Path, dict[str, Tool]], prefix: str, old: str, suffix: str, new: str
) -> None:
    folder, tools = shared
    content = prefix + old + suffix
    if content.count(old) != 1 or old == new:
        return
    path = folder / "f.txt"
    path.write_bytes(content.encode("utf-8"))
    text(tools["Read"], file_path="f.txt")
    text(tools["Edit"], file_path="f.txt", old_string=old, new_string=new)
    assert path.read_bytes().decode("utf-8") == content.replace(old, new, 1)


def test_a_save_landing_while_edit_writes_is_never_overwritten(
    root: Path, tools: dict[str, Tool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user saves after Edit's check, right before the new file goes in: refused."""
    target = root / "a.txt"
    target.write_text("one\n")
    text(tools["Read"], file_path="a.txt")
    save_around_the_swap(target, monkeypatch, b"the user's save\n", None)
    assert error(tools["Edit"], file_path="a.txt", old_string="one", new_string="1") == (
        "a.txt has changed on disk since it was last read (by the user or another program). "
        "Read it again, then edit it."
    )
    assert target.read_text() == "the user's save\n"


def test_a_save_over_the_new_content_in_its_instant_is_reported(
    root: Path, tools: dict[str, Tool], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "a.txt"
    target.write_text("one\n")
    text(tools["Read"], file_path="a.txt")
    save_around_the_swap(target, monkeypatch, b"first save\n", b"second save\n")
    assert error(tools["Write"], file_path="a.txt", content="new") == (
        "The change may not be in a.txt: another program saved it at the moment the change was "
        "written, and the file now holds that save. Read it again to see, then write over it."
    )
    assert target.read_text() == "second save\n"
