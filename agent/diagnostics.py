"""The editor's problems for the model: asked of the host, bounded, errors first.

Where they come from is the host's business (``DiagnosticsHost``): the LSP face asks the client with
``agent/diagnostics``; a host without the method, or one that answers None (no client answers: Helix,
plain LSP clients, ACP, ``agentls run``), has none, and then the ``diagnostics`` tool says so and an
edit's result says nothing.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import anyio

from .host import Diagnostic, DiagnosticsHost, Host
from .paths import display

log = logging.getLogger("agentls.diagnostics")

ORDER = {"error": 0, "warning": 1, "information": 2, "hint": 3}
MAX_SHOWN = 20  # problems listed in one result
MAX_AFTER_EDIT = 10  # new problems listed after an edit
MAX_MESSAGE = 300  # characters of one problem's message
TIMEOUT = 10.0  # seconds for the host's answer (a client settling after an edit takes about 1.5 s)


async def host_diagnostics(host: Host, paths: Sequence[Path], *, settle: bool) -> dict[Path, list[Diagnostic]] | None:
    """The host's problems for ``paths``, or None when it has none to give (never raises, never hangs)."""
    if not isinstance(host, DiagnosticsHost):
        return None
    found: dict[Path, list[Diagnostic]] | None = None
    try:
        with anyio.move_on_after(TIMEOUT):
            found = await host.diagnostics(paths, settle=settle)
    except anyio.get_cancelled_exc_class():
        raise
    except Exception:  # problems only add information; they never break a tool
        log.exception("asking the editor for diagnostics failed")
        return None
    return found


def ranked(items: Iterable[Diagnostic], *, with_hints: bool = False) -> list[Diagnostic]:
    """Errors first, then warnings, information (and hints); by file and line within each."""
    return sorted((d for d in items if with_hints or d.severity != "hint"),
                  key=lambda d: (ORDER.get(d.severity, 4), str(d.path), d.line, d.column))


def _key(d: Diagnostic) -> tuple[str, str, str | None, str | None]:
    return (d.severity, " ".join(d.message.split()), d.source, d.code)


def new_problems(before: Sequence[Diagnostic], after: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The problems of ``after`` that ``before`` did not have. Lines move when text is inserted above a
    problem, so a problem is known by what it says, not where: with n alike before and m after, the
    last m - n of them are new."""
    left = Counter(_key(d) for d in before)
    fresh: list[Diagnostic] = []
    for d in ranked(after):
        key = _key(d)
        if left[key] > 0:
            left[key] -= 1
        elif d.severity in ("error", "warning"):
            fresh.append(d)
    return ranked(fresh)


def line(root: Path, d: Diagnostic) -> str:
    message = " ".join(d.message.split())
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + "..."
    origin = " ".join(x for x in (d.source, f"{d.code}" if d.code else None) if x)
    return f"  {display(root, d.path)}:{d.line}:{d.column}: {d.severity}: {message}" + (f" [{origin}]" if origin else "")


def counts(items: Sequence[Diagnostic]) -> str:
    by: Counter[str] = Counter(d.severity for d in items)
    parts = [f"{by[s]} {s}{'s' if by[s] != 1 and s != 'information' else ''}" for s in ORDER if by[s]]
    return ", ".join(parts) or "none"


def render(root: Path, items: Sequence[Diagnostic], limit: int = MAX_SHOWN) -> str:
    """The problems, one a line, at most ``limit`` of them, errors first."""
    chosen = ranked(items)
    shown = [line(root, d) for d in chosen[:limit]]
    if len(chosen) > limit:
        rest = chosen[limit:]
        shown.append(f"  ... and {len(rest)} more ({counts(rest)})")
    return "\n".join(shown)


def after_edit_note(root: Path, path: Path, before: Sequence[Diagnostic], after: Sequence[Diagnostic]) -> str | None:
    """What an edit's result says about the problems it brought in (None: nothing new)."""
    fresh = new_problems(before, after)
    if not fresh:
        return None
    return (f"\n\nNew problems in {display(root, path)} after this edit ({counts(fresh)}):\n"
            + render(root, fresh, MAX_AFTER_EDIT))
