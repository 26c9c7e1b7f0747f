"""Model providers: OpenAI-compatible chat completions and native Anthropic Messages."""
