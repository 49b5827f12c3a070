"""The loopback HTTP server: keep-alive, chunked streams, cuts, stop."""

from __future__ import annotations

import http.client
from collections.abc import Mapping

import pytest

from nbagent.testing.fakeapi.http import (
    DropAnswer,
    HttpAnswer,
    JsonAnswer,
    LoopbackServer,
    StreamAnswer,
)


def app(path: str, headers: Mapping[str, str], body: bytes) -> HttpAnswer:
    """Echo on /json, two events on /stream (cut after one on /cut), nothing on /drop."""
    if path == "/json":
        return JsonAnswer(201, b"got " + body, {"X-Path": path})
    if path in ("/stream", "/cut"):
        return StreamAnswer([b"one", b"two"], cut_after=1 if path == "/cut" else None)
    return DropAnswer()


def connect(server: LoopbackServer) -> http.client.HTTPConnection:
    """A connection to the server."""
    host, port = server.url.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=5)


def test_keep_alive_json_and_streams() -> None:
    """One connection serves several answers; streams are chunked; a cut stream is incomplete."""
    server = LoopbackServer(app)
    server.start()
    try:
        conn = connect(server)
        for _ in range(2):
            conn.request("POST", "/json?x=1", body=b"hi")
            response = conn.getresponse()
            assert (response.status, response.read(), response.headers["X-Path"]) == (
                201,
                b"got hi",
                "/json",
            )
        conn.request("GET", "/stream")
        assert conn.getresponse().read() == b"onetwo"
        conn.request("GET", "/cut")
        with pytest.raises(http.client.IncompleteRead):
            conn.getresponse().read()
        drop = connect(server)
        drop.request("POST", "/drop")
        with pytest.raises(http.client.RemoteDisconnected):
            drop.getresponse()
        assert server.wait_idle(2.0)
    finally:
        server.stop()
    server.stop()


def test_url_needs_start() -> None:
    """There is no URL, and no idleness to wait for, before start."""
    server = LoopbackServer(app)
    with pytest.raises(RuntimeError):
        _ = server.url
    assert not server.wait_idle(0.01)
