"""The agent loop: one conversation with the model, the request it sends, its tool
calls run under the permission policy, the cell's thread its questions go to, history repair,
compaction and how full the context window is."""
