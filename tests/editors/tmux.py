"""A terminal program driven under tmux: keys in with ``send-keys``, the screen out with ``capture-pane``.

Each :class:`Tmux` has its own server socket (``tmux -L``), so tests never see each other's sessions or
the user's, and ``kill()`` ends exactly the server it started.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

TMUX = shutil.which("tmux")
_names = itertools.count()
T = TypeVar("T")


class Timeout(AssertionError):
    pass


class Tmux:
    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], width: int = 160,
                 height: int = 40) -> None:
        assert TMUX is not None
        self.socket = f"agentls-test-{os.getpid()}-{next(_names)}"
        # `env -i`: the program sees exactly `env`, not the tmux server's inherited environment.
        command = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv]
        self._tmux("-f", "/dev/null", "new-session", "-d", "-x", str(width), "-y", str(height), "-s", "main",
                   "-c", str(cwd), "--", *command)
        self._tmux("set-option", "-t", "main", "remain-on-exit", "on")

    def _tmux(self, *args: str) -> str:
        assert TMUX is not None
        proc = subprocess.run([TMUX, "-L", self.socket, *args], check=False, capture_output=True, text=True,
                              timeout=30, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args[:3])}… failed: {proc.stderr.strip()}")
        return proc.stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        """tmux key names (``Enter``, ``Escape``, ``Space``, ``C-n``), or text with ``literal=True``."""
        self._tmux("send-keys", "-t", "main", *(["-l"] if literal else []), *keys)

    def screen(self) -> list[str]:
        return [line.rstrip() for line in self._tmux("capture-pane", "-p", "-t", "main").split("\n")][:-1]

    def text(self) -> str:
        return "\n".join(self.screen())

    def wait(self, what: str, check: Callable[[list[str]], bool], timeout: float = 90.0) -> list[str]:
        """Poll the screen until ``check(lines)`` holds; a :class:`Timeout` shows the last screen."""
        def ready() -> list[str] | None:
            lines = self.screen()
            return lines if check(lines) else None
        return self.poll(what, ready, timeout)

    def poll(self, what: str, check: Callable[[], T | None], timeout: float = 90.0) -> T:
        """Call ``check`` until it returns something other than None; a :class:`Timeout` shows the screen."""
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if value is not None:
                return value
            if time.monotonic() > deadline:
                raise Timeout(f"timed out after {timeout:.0f} s waiting for {what}; the screen:\n" + self.text())
            time.sleep(0.1)

    def wait_for_text(self, needle: str, timeout: float = 90.0) -> list[str]:
        return self.wait(repr(needle), lambda lines: any(needle in line for line in lines), timeout)

    def exited(self) -> bool:
        """The program has ended (the pane stays, with ``remain-on-exit``)."""
        return self._tmux("display-message", "-p", "-t", "main", "#{pane_dead}").strip() == "1"

    def kill(self) -> None:
        if TMUX is not None:
            subprocess.run([TMUX, "-L", self.socket, "kill-server"], check=False, capture_output=True, timeout=30,
                           stdin=subprocess.DEVNULL)
