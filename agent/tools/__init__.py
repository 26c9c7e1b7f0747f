"""The built-in tools (LOOP.md section 9)."""
