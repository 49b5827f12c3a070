"""WebFetch against real HTTP servers on 127.0.0.1, which an allow rule names; and WebFetch
refusing the local network where no rule names the host."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

import httpcore2
import httpx2
import pytest

from nbagent.core.access import Touch
from nbagent.core.tool import Tool
from nbagent.policy.addresses import literal
from nbagent.policy.permissions import PermissionPolicy
from nbagent.tools import Limits, ToolContext
from nbagent.tools.web.fetch import MAX_REDIRECTS, _PinnedBackend, _same_origin
from tests.tools.helpers import LazyTools, error, summary, text

LOOPBACK_NAMED = PermissionPolicy(allow=["WebFetch(domain:127.0.0.1)"])

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


REDIRECTS = {
    "/redirect": "/page",
    "/redirect-twice": "/redirect",
    "/loop": "/loop",
    "/metadata": "http://169.254.169.254/latest/meta-data/",
    "/other-address": "http://127.0.0.2:{port}/page",
    "/other-port": "http://127.0.0.1:{other}/page",
    "/https": "https://127.0.0.1:{port}/page",
    "/bad-location": "http://[::1/page",
}
"""Redirects the servers make: path -> Location ({port}: the server's, {other}: the other's)."""

SEEN: list[tuple[str, str]] = []
"""The (Host header, path) of every request the servers answered."""


class Handler(BaseHTTPRequestHandler):
    """Serves ROUTES, REDIRECTS and a page that trickles too slowly."""

    other_port = 0
    """The port of the other server (set by the fixture)."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        SEEN.append((self.headers["Host"], self.path))
        if self.path in REDIRECTS:
            port = self.server.server_address[1]
            self.send_response(302)
            self.send_header(
                "Location", REDIRECTS[self.path].format(port=port, other=self.other_port)
            )
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


def serve() -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[int, int]]:
    """Two servers on 127.0.0.1: their ports."""
    first, second = serve(), serve()
    Handler.other_port = second.server_address[1]
    yield first.server_address[1], second.server_address[1]
    for server in (first, second):
        server.shutdown()
        server.server_close()


@pytest.fixture
def base_url(servers: tuple[int, int]) -> str:
    return f"http://127.0.0.1:{servers[0]}"


@pytest.fixture
def context(root: Path) -> ToolContext:
    """A context whose policy names 127.0.0.1, where the test servers are."""
    return ToolContext(root=root, policy=lambda: LOOPBACK_NAMED)


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The (address, port) of every connection made from now on."""
    made: list[tuple[str, int]] = []
    real = socket.create_connection

    def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        made.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", create_connection)
    return made


def fetcher(root: Path, policy: Any = LOOPBACK_NAMED, **limits: float) -> Tool:
    context = ToolContext(root=root, limits=Limits(**limits), policy=lambda: policy)
    return LazyTools(context)["WebFetch"]


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


def test_same_origin_redirects_are_followed_each_address_checked(
    base_url: str, tools: dict[str, Tool], connections: list[tuple[str, int]]
) -> None:
    out = text(tools["WebFetch"], url=f"{base_url}/redirect-twice")
    assert out.startswith(f"URL: {base_url}/page (redirected from {base_url}/redirect-twice)\n")
    assert {address for address, _ in connections} == {"127.0.0.1"}
    assert error(tools["WebFetch"], url=f"{base_url}/loop") == (
        f"{base_url}/loop redirects more than {MAX_REDIRECTS} times."
    )
    assert error(tools["WebFetch"], url=f"{base_url}/bad-location") == (
        f"{base_url}/bad-location redirects to an invalid URL: 'http://[::1/page'."
    )


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/other-port", "http://127.0.0.1:{other}/page"),
        ("/other-address", "http://127.0.0.2:{port}/page"),
        ("/https", "https://127.0.0.1:{port}/page"),
        ("/metadata", "http://169.254.169.254/latest/meta-data/"),
    ],
)
def test_redirects_to_another_origin_are_reported_not_followed(
    servers: tuple[int, int],
    tools: dict[str, Tool],
    connections: list[tuple[str, int]],
    path: str,
    target: str,
) -> None:
    port, other = servers
    target = target.format(port=port, other=other)
    result = tools["WebFetch"].call({"url": f"http://127.0.0.1:{port}{path}"})
    assert not result.is_error
    assert result.content == (
        f"REDIRECT DETECTED: the page at http://127.0.0.1:{port}{path} redirects to {target}. "
        "To read it, call WebFetch again with that URL."
    )
    assert result.metadata["summary"] == f"redirects to {target}"
    assert connections == [("127.0.0.1", port)]


def test_the_metadata_address_is_never_fetched(
    base_url: str, tools: dict[str, Tool], connections: list[tuple[str, int]]
) -> None:
    text(tools["WebFetch"], url=f"{base_url}/metadata")
    assert error(tools["WebFetch"], url="http://169.254.169.254/latest/meta-data/") == (
        "WebFetch did not fetch http://169.254.169.254/latest/meta-data/: 169.254.169.254 is not "
        "a public address (link-local), and WebFetch reaches the local network only where an "
        "allow rule names the host. To allow it, the user can add "
        "'WebFetch(domain:169.254.169.254)' to c.NbAgent.allow_rules."
    )
    assert all(address == "127.0.0.1" for address, _ in connections)


LOCAL_URLS = [
    "http://127.0.0.1:{port}/page",
    "http://2130706433:{port}/page",
    "http://0x7f.1:{port}/page",
    "http://0X7F000001:{port}/page",
    "http://017700000001:{port}/page",
    "http://127.1:{port}/page",
    "http://127.0.0.1.:{port}/page",
    "http://[::1]:{port}/page",
    "http://[::ffff:127.0.0.1]:{port}/page",
    "http://[::ffff:7f00:1]:{port}/page",
    "http://localhost:{port}/page",
    "http://LOCALHOST.:{port}/page",
    "http://app.localhost:{port}/page",
    "http://0.0.0.0:{port}/page",
    "http://0:{port}/page",
    "http://[::]:{port}/page",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[fc00::1]/",
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://255.255.255.255/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "https://127.0.0.1:{port}/page",
]


@pytest.mark.parametrize("url", LOCAL_URLS)
def test_local_addresses_in_every_spelling_are_refused_without_a_rule(
    servers: tuple[int, int], root: Path, connections: list[tuple[str, int]], url: str
) -> None:
    url = url.format(port=servers[0])
    # no policy, one without names_host, one with no rule, one naming another host
    unnamed = [
        None,
        object(),
        PermissionPolicy(),
        PermissionPolicy(allow=["WebFetch(domain:x.org)"]),
    ]
    for policy in unnamed:
        said = error(fetcher(root, policy), url=url)
        assert said.startswith(f"WebFetch did not fetch {httpx2.URL(url)}: "), said
        host = httpx2.URL(url).host.removesuffix(".")
        assert said.endswith(f"add 'WebFetch(domain:{host})' to c.NbAgent.allow_rules.")
    assert connections == []


def test_a_rule_names_the_host_as_written(
    servers: tuple[int, int], root: Path, connections: list[tuple[str, int]]
) -> None:
    port = servers[0]
    assert error(fetcher(root), url=f"http://127.1:{port}/plain").startswith(
        f"WebFetch did not fetch http://127.1:{port}/plain: 127.1 is 127.0.0.1, which is not a "
        "public address (loopback)"
    )
    assert error(fetcher(root), url=f"http://localhost:{port}/plain").startswith(
        f"WebFetch did not fetch http://localhost:{port}/plain: localhost is 127.0.0.1, which"
    )
    assert connections == []
    named = PermissionPolicy(allow=["WebFetch(domain:localhost)", "WebFetch(domain:127.1)"])
    for host in ("localhost", "127.1"):
        assert text(fetcher(root, named), url=f"http://{host}:{port}/plain").endswith("just text\n")
    assert connections == [("127.0.0.1", port)] * 2


def test_invalid_urls_are_refused(root: Path, connections: list[tuple[str, int]]) -> None:
    assert error(fetcher(root, None), url="http://0177.0.0.01/") == (
        "Could not fetch http://0177.0.0.01/: Invalid IPv4 address: '0177.0.0.01'"
    )
    assert connections == []


@pytest.fixture
def names(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A resolver for ``*.test`` names (the real one for the rest); the names it was asked."""
    answers = {
        "loopback.test": ["127.0.0.1"],
        "intranet.test": ["10.20.30.40"],
        "mixed.test": ["93.184.215.14", "127.0.0.1"],
        "public.test": ["93.184.215.14"],
    }
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        if literal(host) is not None:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_names_that_resolve_to_local_addresses_are_refused(
    servers: tuple[int, int], root: Path, names: list[str], connections: list[tuple[str, int]]
) -> None:
    port = servers[0]
    fetch = fetcher(root)
    assert error(fetch, url=f"http://loopback.test:{port}/page").startswith(
        f"WebFetch did not fetch http://loopback.test:{port}/page: loopback.test is 127.0.0.1, "
        "which is not a public address (loopback)"
    )
    assert error(fetch, url="http://intranet.test/").startswith(
        "WebFetch did not fetch http://intranet.test/: intranet.test is 10.20.30.40, which is "
        "not a public address (private)"
    )
    assert error(fetch, url="https://mixed.test/").startswith(
        "WebFetch did not fetch https://mixed.test/: mixed.test is 127.0.0.1, which"
    )
    assert error(fetch, url="http://nowhere.test/").startswith(
        "Could not fetch http://nowhere.test/: nowhere.test does not resolve ("
    )
    assert names == ["loopback.test", "intranet.test", "mixed.test", "nowhere.test"]
    assert connections == []


def test_a_named_host_is_reached_at_the_checked_address_with_its_own_name(
    servers: tuple[int, int], root: Path, names: list[str], connections: list[tuple[str, int]]
) -> None:
    port = servers[0]
    SEEN.clear()
    named = PermissionPolicy(allow=["WebFetch(domain:loopback.test)"])
    out = text(fetcher(root, named), url=f"http://loopback.test:{port}/redirect")
    assert out.startswith(
        f"URL: http://loopback.test:{port}/page (redirected from "
        f"http://loopback.test:{port}/redirect)\nTitle: Demo page"
    )
    assert SEEN == [(f"loopback.test:{port}", "/redirect"), (f"loopback.test:{port}", "/page")]
    assert names == ["loopback.test", "loopback.test"]  # once per request, none to connect
    assert connections == [("127.0.0.1", port)] * 2


def test_the_backend_connects_to_pinned_addresses_only(
    servers: tuple[int, int], names: list[str], connections: list[tuple[str, int]]
) -> None:
    port = servers[0]
    backend = _PinnedBackend()
    with pytest.raises(httpcore2.ConnectError, match=r"public.test:80 was not checked"):
        backend.connect_tcp("public.test", 80)
    backend.pins[("public.test", port)] = [IPv4Address("127.0.0.2"), IPv4Address("127.0.0.1")]
    backend.connect_tcp("public.test", port, timeout=5).close()
    assert names == []
    assert connections == [("127.0.0.2", port), ("127.0.0.1", port)]


@pytest.mark.parametrize(
    ("source", "target", "same"),
    [
        ("http://a.org/x", "http://a.org/y", True),
        ("http://a.org/x", "http://A.ORG:80/y", True),
        ("http://a.org/x", "https://a.org/y", True),
        ("https://a.org/x", "http://a.org/y", False),
        ("http://a.org:8080/x", "https://a.org:8080/y", False),
        ("http://a.org/x", "https://a.org:8443/y", False),
        ("http://a.org/x", "http://a.org:8080/y", False),
        ("http://a.org/x", "http://www.a.org/y", False),
        ("http://127.0.0.1/x", "http://127.0.0.2/y", False),
    ],
)
def test_which_redirects_stay_on_the_origin(source: str, target: str, same: bool) -> None:
    assert _same_origin(httpx2.URL(source), httpx2.URL(target)) is same


def test_proxies_from_the_environment_are_not_used(
    base_url: str, tools: dict[str, Tool], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:1")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert text(tools["WebFetch"], url=f"{base_url}/plain").endswith("just text\n")


def certificate_for(name: str) -> tuple[bytes, bytes, bytes]:
    """A CA's certificate, and a certificate for ``name`` it signed with its key (all PEM)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def build(subject: str, key: Any, issuer: str, signer: Any, ca: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            )
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = build("Test CA", ca_key, "Test CA", ca_key, ca=True)
    leaf = build(name, key, "Test CA", ca_key, ca=False)
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return ca.public_bytes(pem), leaf.public_bytes(pem), key_pem


@pytest.fixture
def https_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, list[str]]]:
    """An HTTPS server on 127.0.0.1 with a certificate for loopback.test, which WebFetch
    trusts: its port, and the server names (SNI) clients sent."""
    ca, leaf, key = certificate_for("loopback.test")
    (tmp_path / "leaf.pem").write_bytes(leaf + key)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(tmp_path / "leaf.pem")
    server_names: list[str] = []

    def note_server_name(_sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
        server_names.append(name or "")

    server_context.sni_callback = note_server_name
    monkeypatch.setattr(
        httpx2, "create_ssl_context", lambda: ssl.create_default_context(cadata=ca.decode())
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server.server_address[1], server_names
    server.shutdown()
    server.server_close()


def test_https_checks_the_certificate_of_the_host_name_not_the_address(
    https_port: tuple[int, list[str]], root: Path, names: list[str]
) -> None:
    port, server_names = https_port
    named = PermissionPolicy(allow=["WebFetch(domain:loopback.test)", "WebFetch(domain:127.0.0.1)"])
    out = text(fetcher(root, named), url=f"https://loopback.test:{port}/plain")
    assert out == f"URL: https://loopback.test:{port}/plain\n\njust text\n"
    assert server_names == ["loopback.test"]
    said = error(fetcher(root, named), url=f"https://127.0.0.1:{port}/plain")
    assert said.startswith(f"Could not fetch https://127.0.0.1:{port}/plain: ")
    assert "CERTIFICATE_VERIFY_FAILED" in said and "127.0.0.1" in said


def test_webfetch_declares_its_url_for_the_permission_policy(tools: dict[str, Tool]) -> None:
    fetch = tools["WebFetch"]
    assert fetch.touches is not None
    assert list(fetch.touches({"url": "https://x.org/a"})) == [Touch("fetch", "https://x.org/a")]
    assert PermissionPolicy()(fetch, {"url": "http://127.0.0.1:8888/c?d=x"}).behavior == "deny"
    assert LOOPBACK_NAMED(fetch, {"url": "http://127.0.0.1:8888/c?d=x"}).behavior == "allow"
