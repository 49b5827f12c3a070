"""The tools the model can have, and how it finds them: the registry, ToolSearch
and its rankers, the announcements of deferred tools, preloading and promotion."""
