"""WebFetch against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from nbagent.tool import Tool
from nbagent.tools import Limits, ToolContext
from tests.tools.helpers import LazyTools, error, summary, text

PAGE = (
    "<html><head><title>Demo page</title><script>var x = 1;</script></head><body>"
    "<h1>Welcome</h1><p>Read the <a href='/docs'>docs</a>.</p><ul><li>one</li><li>two</li></ul>"
    "</body></html>"
)

ROUTES: dict[str, tuple[int, str, bytes]] = {
    "/page": (200, "text/html; charset=utf-8", PAGE.encode()),
    "/plain": (200, "text/plain", b"just text\n"),
    "/data.json": (200, "application/json", b'{"a": 1}'),
    "/latin": (200, "text/plain; charset=iso-8859-1", "café".encode("latin-1")),
    "/meta": (200, "text/html", '<meta charset="latin-1"><p>né</p>'.encode("latin-1")),
    "/image.png": (200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(20)),
    "/missing": (404, "text/html", b"<h1>Not here</h1>"),
    "/big": (200, "text/plain", b"0123456789" * 1000),
}


class Handler(BaseHTTPRequestHandler):
    """Serves ROUTES, a redirect and a page that trickles too slowly."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.end_headers()
            return
        if self.path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            try:
                for _ in range(30):
                    self.wfile.write(b"x" * 10)
                    self.wfile.flush()
                    time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up, as the test wants
            return
        status, kind, body = ROUTES[self.path]
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Keep the test output quiet."""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def fetcher(root: Path, **limits: float) -> Tool:
    return LazyTools(ToolContext(root=root, limits=Limits(**limits)))["WebFetch"]  # type: ignore[arg-type]


def test_html_becomes_markdown(base_url: str, tools: dict[str, Tool]) -> None:
    assert text(tools["WebFetch"], url=f"{base_url}/page") == (
        f"URL: {base_url}/page\nTitle: Demo page\n\n# Welcome\n\n"
        f"Read the [docs]({base_url}/docs).\n\n- one\n- two"
    )
    page = f"# Welcome\n\nRead the [docs]({base_url}/docs).\n\n- one\n- two"
    assert summary(tools["WebFetch"], url=f"{base_url}/page") == f"{len(page)} characters"


def test_redirects_are_followed_and_named(base_url: str, tools: dict[str, Tool]) -> None:
    out = text(tools["WebFetch"], url=f"{base_url}/redirect")
    assert out.startswith(f"URL: {base_url}/page (redirected from {base_url}/redirect)\n")


def test_text_types_come_back_as_they_are(base_url: str, tools: dict[str, Tool]) -> None:
    assert (
        text(tools["WebFetch"], url=f"{base_url}/plain") == f"URL: {base_url}/plain\n\njust text\n"
    )
    assert text(tools["WebFetch"], url=f"{base_url}/data.json").endswith('\n\n{"a": 1}')
    assert text(tools["WebFetch"], url=f"{base_url}/latin").endswith("\n\ncafé")
    assert text(tools["WebFetch"], url=f"{base_url}/meta").endswith("\n\nné")


def test_long_pages_are_paged(base_url: str, root: Path) -> None:
    fetch = fetcher(root, output_chars=4000)
    first = text(fetch, url=f"{base_url}/big")
    assert first.endswith("\n[Characters 0-4,000 of 10,000. Call again with offset=4000 for more.]")
    last = text(fetch, url=f"{base_url}/big", offset=8000)
    assert last.endswith("0123456789\n\n[Characters 8,000-10,000 of 10,000.]")
    assert summary(fetch, url=f"{base_url}/big") == "characters 0-4,000 of 10,000"
    assert summary(fetch, url=f"{base_url}/big", offset=8000) == "characters 8,000-10,000 of 10,000"
    assert error(fetch, url=f"{base_url}/big", offset=20000) == (
        "offset 20000 is past the end of the text (10,000 characters)."
    )


def test_downloads_stop_at_the_size_cap(base_url: str, root: Path) -> None:
    out = text(fetcher(root, web_bytes=100), url=f"{base_url}/big")
    assert out == (
        f"URL: {base_url}/big\n\n" + "0123456789" * 10 + "\n[The download stopped at 100 bytes: "
        "the rest of the page is missing.]"
    )
    assert summary(fetcher(root, web_bytes=100), url=f"{base_url}/big") == (
        "100 characters, download cut"
    )


def test_errors_the_model_sees(base_url: str, root: Path, tools: dict[str, Tool]) -> None:
    fetch = tools["WebFetch"]
    assert (
        error(fetch, url=f"{base_url}/missing")
        == f"{base_url}/missing answered HTTP 404.\n# Not here"
    )
    assert error(fetch, url=f"{base_url}/image.png") == (
        f"{base_url}/image.png is image/png, not text: WebFetch returns web pages and text only. "
        "Download it with Bash (curl) to work with it."
    )
    assert error(fetch, url="ftp://example.org/x") == (
        "WebFetch fetches http and https URLs only, not 'ftp://example.org/x'."
    )
    assert error(fetch, url="http://127.0.0.1:1/closed").startswith(
        "Could not fetch http://127.0.0.1:1/closed: "
    )
    started = time.monotonic()
    assert error(fetcher(root, web_timeout=0.5), url=f"{base_url}/slow") == (
        f"Fetching {base_url}/slow took longer than 0.5 s."
    )
    assert time.monotonic() - started < 2.5


def test_webfetch_is_deferred_and_read_only(tools: dict[str, Tool]) -> None:
    fetch = tools["WebFetch"]
    assert fetch.should_defer and fetch.read_only and fetch.check_permission is None
