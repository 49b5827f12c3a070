"""nbagent.mcp.content: MCP call results as tool_result content the API accepts."""

from __future__ import annotations

import base64
from typing import Any

import mcp_types as types
import pytest

from nbagent.mcp.content import MAX_BINARY_BYTES, resource_content, tool_result

PNG = base64.b64encode(b"\x89PNG fake").decode()
PDF = base64.b64encode(b"%PDF-1.4 fake").decode()
NOTE = "(3 bytes) omitted: not supported]"


def result(*content: Any, structured: Any = None, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=list(content), structured_content=structured, is_error=error
    )


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def embedded(**fields: Any) -> types.EmbeddedResource:
    contents = (
        types.TextResourceContents(**fields)
        if "text" in fields
        else types.BlobResourceContents(**fields)
    )
    return types.EmbeddedResource(type="resource", resource=contents)


def test_text_only_becomes_one_string() -> None:
    mapped = tool_result(result(text("one"), text("two")))
    assert (mapped.content, mapped.is_error) == ("one\ntwo", False)


def test_is_error_is_kept() -> None:
    mapped = tool_result(result(text("no such file"), error=True))
    assert (mapped.content, mapped.is_error) == ("no such file", True)
    assert tool_result(result(error=True)).content.startswith("(the tool reported an error")


def test_empty_results_say_so() -> None:
    assert tool_result(result()).content == "(no output)"
    assert tool_result(result(text("  \n"))).content == "(no output)"


def test_images_become_base64_image_blocks() -> None:
    mapped = tool_result(
        result(types.ImageContent(type="image", data=PNG, mime_type="image/png"), text("a pixel"))
    )
    assert mapped.content == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "text", "text": "a pixel"},
    ]


@pytest.mark.parametrize(
    ("item", "note"),
    [
        (
            types.ImageContent(type="image", data=PNG, mime_type="image/tiff"),
            "[image of type image/tiff (9 bytes) omitted: not supported]",
        ),
        (
            types.AudioContent(type="audio", data=PNG, mime_type="audio/wav"),
            "[audio of type audio/wav (9 bytes) omitted: not supported]",
        ),
        (
            types.ImageContent(
                type="image", data="A" * (MAX_BINARY_BYTES * 4 // 3 + 8), mime_type="image/png"
            ),
            "omitted: larger than the 5 MB limit]",
        ),
    ],
)
def test_what_the_api_cannot_take_becomes_a_note(item: Any, note: str) -> None:
    assert tool_result(result(item)).content.endswith(note)


def test_embedded_resources() -> None:
    mapped = tool_result(
        result(
            embedded(uri="file:///a.txt", mime_type="text/plain", text="hello"),
            embedded(
                uri="file:///b.md",
                mime_type="text/markdown",
                blob=base64.b64encode(b"# B").decode(),
            ),
            embedded(uri="file:///c.pdf", mime_type="application/pdf", blob=PDF),
            embedded(uri="file:///d.png", mime_type="image/png", blob=PNG),
            embedded(uri="file:///e.bin", mime_type="application/zip", blob="AAAA"),
        )
    )
    assert mapped.content == [
        {"type": "text", "text": "Resource file:///a.txt:\nhello"},
        {"type": "text", "text": "Resource file:///b.md:\n# B"},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
        },
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "text", "text": f"[resource file:///e.bin of type application/zip {NOTE}"},
    ]


def test_resource_links_are_described() -> None:
    link = types.ResourceLink(
        type="resource_link",
        name="report",
        uri="file:///r.csv",
        mime_type="text/csv",
        description="Q3",
    )
    assert (
        tool_result(result(link)).content == "Resource link: report <file:///r.csv> (text/csv, Q3)"
    )


def test_structured_content_is_sent_when_there_is_no_text() -> None:
    mapped = tool_result(result(structured={"temperature": 21, "unit": "C"}))
    assert mapped.content == '{"temperature": 21, "unit": "C"}'
    assert mapped.metadata == {"structured_content": {"temperature": 21, "unit": "C"}}
    both = tool_result(result(text("21 C"), structured={"temperature": 21}))
    assert both.content == "21 C"


def test_text_is_capped_over_the_whole_result() -> None:
    mapped = tool_result(result(text("a" * 60), text("b" * 60)), max_chars=100)
    assert (
        mapped.content
        == "a" * 60 + "\n" + "b" * 40 + "\n[output truncated: 20 more characters were cut]"
    )


def test_resource_reads() -> None:
    assert resource_content([]) == "(the resource is empty)"
    contents = [types.TextResourceContents(uri="note://x", mime_type="text/plain", text="hi")]
    assert resource_content(contents) == "Resource note://x:\nhi"
