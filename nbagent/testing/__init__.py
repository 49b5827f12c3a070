"""FakeAnthropicServer: a loopback Messages API that answers from a script, for tests and demos.

The server is :mod:`nbagent.testing.server`, the API's rules, caching, compaction and wire
format it plays are :mod:`nbagent.testing.fakeapi`, and the offline demo model the example
notebooks use is :mod:`nbagent.testing.scripted`. The script's names are imported here::

    from nbagent.testing import FakeAnthropicServer, Reply
"""

from nbagent.testing.fakeapi.script import (
    Cite,
    Fault,
    Reply,
    Responder,
    ScriptItem,
    ServerToolSearch,
    Text,
    Thinking,
    ToolUse,
    WebResult,
    WebSearch,
)
from nbagent.testing.server import FakeAnthropicServer, RecordedRequest

__all__ = [
    "Cite",
    "FakeAnthropicServer",
    "Fault",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptItem",
    "ServerToolSearch",
    "Text",
    "Thinking",
    "ToolUse",
    "WebResult",
    "WebSearch",
]
