"""The parts of :class:`nbagent.testing.FakeAnthropicServer`, one job a module.

- ``rules``: request validation as the Messages API does it;
- ``cache``: prompt caching simulated by prefix;
- ``compaction``: server-side compaction (beta ``compact-2026-01-12``): trigger, summary,
  signed compaction blocks;
- ``script``: the scripted replies and faults;
- ``wire``: messages and their server-sent events;
- ``http``: the threaded HTTP/1.1 server on loopback.
"""
