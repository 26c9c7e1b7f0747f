"""The built-in tools (docs/loop.md §9)."""
