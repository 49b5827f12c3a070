"""A run as a person reads it: the transcript (HTML, Markdown, plain text), web
search cards, schemas as tables, code and diffs in questions."""
