"""The tool model and what every layer shares: tools, errors, events, schemas, text,
tokens, secrets, markup, cancellation. Imports nothing else of nbagent, and no IPython."""
