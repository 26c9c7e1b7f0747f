"""Benchmarks for agentls: runnable scripts that print a markdown table (see bench/README.md).

Nothing here fails CI. Run everything with ``python bench/run.py`` (``--quick`` for a short variant).
"""
