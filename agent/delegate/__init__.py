"""Subagents: the ``delegate_task`` tool and the child agents it runs (docs/loop.md §9.9).

``config.py`` (the settings and the one gate of who is offered the tool), ``tasks.py`` (the tool's arguments),
``child.py`` (a child built from its parent), ``host.py`` (a child's view of its parent's host), ``report.py``
(what a child did, as the tool result and the card's progress), ``tool.py`` (the tool).
"""
