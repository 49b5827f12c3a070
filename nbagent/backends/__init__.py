"""Ways to reach a model: the Anthropic API through its SDK."""
