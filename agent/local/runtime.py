"""``LocalModelServer``: the local model's llama.cpp server, as a supervised child process.

The agent talks to it with its ordinary OpenAI-compatible provider over HTTP on 127.0.0.1, so a crash
or OOM inside llama.cpp kills only the child: the agent sees a connection error, and the next
``ensure_running()`` starts a fresh one.

- Nothing opens until ``start()`` (or ``ensure_running()``).
- The child's stderr (llama.cpp's log) goes to a log file in the cache dir, never to our stdout,
  which carries protocol frames under ``agentls lsp``/``acp``. The previous log is kept as ``.1``.
- The child's stdin is a lifeline: it exits on EOF, so it cannot outlive the agent even if the agent is
  killed; it starts behind the launcher that has the kernel SIGKILL it when the agent dies (``dies_with_us``)
  and carries a ``CommandGroup`` marker, so every face's ``kill_all()`` on exit ends it with what it started.
  In its own session, a terminal Ctrl-C interrupts the turn without killing the server.
- With ``keep_alive`` it is started detached instead, and outlives the run (agent/local/keeper.py).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
import httpx

from . import model as bundled
from . import keeper
from .child import read_line, reap
from ..process_group import MARKER_VAR, CommandGroup, dies_with_us
from ..version import __version__
from .slots import SlotFiles

Progress = Callable[[str, float], None]
LOAD_BYTES_PER_SECOND = 500e6  # a rough estimate, only to move the progress bar while llama.cpp loads
LOG_TAIL_BYTES = 3000
log = logging.getLogger(__name__)


class LocalModelError(RuntimeError):
    """The local model server could not be started."""


def _source_root() -> str:
    """The directory holding the ``agent`` package, so the child finds it even from a plain checkout."""
    return str(Path(__file__).resolve().parents[2])


def _env(base: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_source_root(), env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class LocalModelServer:
    """Runs ``python -m agentls.agent.local.serve`` on 127.0.0.1 and keeps it healthy.

    ``model_path=None`` serves the bundled model (assembled and verified on first use); a path serves
    the user's own GGUF, which must exist.
    """

    def __init__(self, model_path: Path | None = None, *, ctx_size: int = 8192, threads: int | None = None,
                 progress: Progress | None = None, startup_timeout: float = 180.0,
                 log_path: Path | None = None, slot_dir: Path | None = None, keep_alive: float = 0.0) -> None:
        self.keep_alive = keep_alive if keeper.SUPPORTED else 0.0  # seconds a detached server outlives us
        self._kept_pid: int | None = None  # a detached server's pid (agent/local/keeper.py)
        self._lease: Any = None
        self.adopted = False  # the server was already running, started by another process
        self._model_path = Path(model_path).expanduser() if model_path is not None else None
        self._slot_dir = slot_dir
        self.slot_state: dict[str, Any] = {}  # agent/local/slots.py: what was restored and saved
        self.ctx_size = ctx_size
        self.threads = threads
        self._progress = progress
        self.startup_timeout = startup_timeout
        self._log_path = log_path
        self._process: anyio.abc.Process | None = None
        self._group: CommandGroup | None = None
        self._log_file: Any = None
        self._url: str | None = None
        self._last_port: int | None = None
        self._http: httpx.AsyncClient | None = None
        self._lock: anyio.Lock | None = None
        self.load_seconds: float | None = None
        self.starts = 0
        self._resolved: Path | None = None

    @property
    def model_name(self) -> str:
        """The name the server reports and the provider sends (llama.cpp serves one model anyway)."""
        return bundled.MODEL_NAME if self._model_path is None else self._model_path.stem

    @property
    def base_url(self) -> str | None:
        """``http://127.0.0.1:PORT/v1`` while running."""
        return self._url if self.running else None

    @property
    def slot_files(self) -> SlotFiles:
        """Where processed prompts are saved between runs (agent/local/slots.py)."""
        return SlotFiles(self._slot_dir or bundled.cache_dir() / "slots")

    @property
    def model_id(self) -> str:
        """What a saved slot is only valid for: the model file (size and mtime) and the context size."""
        path = self._resolved or self._model_path
        try:
            st = path.stat() if path is not None else None
        except OSError:
            st = None
        ident = f"{path}:{st.st_size}:{st.st_mtime_ns}" if st else str(path)
        return f"{ident}:ctx{self.ctx_size}"

    @property
    def root_url(self) -> str | None:
        return self._url.removesuffix("/v1") if self.running and self._url else None

    @property
    def running(self) -> bool:
        if self._kept_pid is not None:
            return keeper.pid_alive(self._kept_pid)
        return self._process is not None and self._process.returncode is None

    @property
    def pid(self) -> int | None:
        if self._kept_pid is not None:
            return self._kept_pid
        return self._process.pid if self._process is not None else None

    @property
    def log_path(self) -> Path:
        return self._log_path or bundled.cache_dir() / "llama-server.log"

    def _get_lock(self) -> anyio.Lock:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    async def start(self) -> str:
        """Start the child (if it isn't running) and return the OpenAI base URL once it is healthy."""
        async with self._get_lock():
            if self.running and self._url:
                return self._url
            await self._cleanup()
            return await self._start_on_same_port()

    async def ensure_running(self) -> str:
        """The base URL, restarting the child first if it died since the last call."""
        async with self._get_lock():
            if self.running and self._url and await self._alive():
                return self._url
            await self._cleanup()  # crashed (or refusing connections): reap it and start afresh
            return await self._start_on_same_port()

    async def stop(self) -> None:
        """Stop the child: close its lifeline, then SIGTERM, then SIGKILL. Idempotent; never leaves a
        zombie; completes even when the caller is being cancelled."""
        with anyio.CancelScope(shield=True):
            await self._cleanup()

    async def close(self) -> None:
        await self.stop()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    def _report(self, stage: str, fraction: float) -> None:
        if self._progress is not None:
            try:
                self._progress(stage, min(1.0, max(0.0, fraction)))
            except Exception:  # a broken progress display must never break the server
                log.debug("progress callback failed", exc_info=True)

    async def _resolve_model(self) -> Path:
        if self._model_path is None:
            return await bundled.ensure_model(self._progress)
        if not await anyio.Path(self._model_path).is_file():
            raise LocalModelError(f"local model file not found: {self._model_path} "
                                  "(model = \"local:/path/to/model.gguf\" must name an existing GGUF file)")
        return self._model_path

    async def _open_log(self) -> Any:
        log = anyio.Path(self.log_path)
        await log.parent.mkdir(parents=True, exist_ok=True)
        if await log.exists():
            await log.replace(self.log_path.with_name(self.log_path.name + ".1"))
        return await anyio.open_file(self.log_path, "wb")

    async def _start_on_same_port(self) -> str:
        """A restarted child reuses the previous port when it can, so a provider holding the old base
        URL keeps working; if the port was taken meanwhile, any free port will do."""
        if self._last_port:
            try:
                return await self._start(self._last_port)
            except LocalModelError:
                log.info("could not restart the local model server on port %s; using a new port",
                         self._last_port)
        return await self._start(0)

    def _command(self, path: Path, port: int) -> list[str]:
        return [sys.executable, "-m", "agentls.agent.local.serve", "--model", str(path), "--port", str(port),
                "--ctx-size", str(self.ctx_size), "--threads", str(self.threads or 0), "--alias", self.model_name,
                "--slot-save-path", str(self.slot_files.directory)]

    def _kept_paths(self) -> keeper.Paths:
        return keeper.paths_for(bundled.cache_dir() / "servers", self._ident())

    def _ident(self) -> str:  # what a kept server is registered under
        return f"{self.model_id}:threads{self.threads or 0}:agentls{__version__}"

    async def _start(self, port: int) -> str:
        path = await self._resolve_model()
        self._resolved = path
        if self.keep_alive > 0:
            return await self._start_kept(path, port)
        return await self._start_child(path, port)

    async def _start_kept(self, path: Path, port: int) -> str:
        """Use the detached server another run left loaded, or start one (agent/local/keeper.py). The start lock
        is held until the server is registered, so two runs starting at once share one."""
        paths = self._kept_paths()
        with anyio.CancelScope(shield=True):  # a thread's lock: it must be seen released
            lock = await anyio.to_thread.run_sync(keeper.lock_start, paths.lock)
        try:
            found = await anyio.to_thread.run_sync(keeper.read_registry, paths.registry, self._ident())
            with anyio.CancelScope(shield=True):
                self._lease = await anyio.to_thread.run_sync(keeper.hold_shared, paths.lease)
            if found is not None:
                self._url, self._kept_pid = str(found["url"]).rstrip("/"), int(found["pid"])
                self._http = httpx.AsyncClient(timeout=httpx.Timeout(5.0), trust_env=False)
                if await self._healthy(timeout=5.0):
                    self._last_port = httpx.URL(self._url).port
                    self.adopted = True
                    self.starts += 1
                    self.slot_state["restored"] = self.starts  # its prompt cache is warm: nothing to restore
                    self.load_seconds = 0.0
                    return self._url
                http, self._http, self._kept_pid = self._http, None, None  # registered, not answering: ours
                await http.aclose()
            return await self._spawn_kept(path, paths, port)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._cleanup()
            raise
        finally:
            lock.close()

    async def _spawn_kept(self, path: Path, paths: keeper.Paths, port: int) -> str:
        size = (await anyio.Path(path).stat()).st_size
        self._log_file = await self._open_log()
        cmd = [*self._command(path, port), "--keep-alive", f"{self.keep_alive:g}", "--registry", str(paths.registry),
               "--lease", str(paths.lease), "--ident", self._ident()]
        env = _env({k: v for k, v in os.environ.items() if k != MARKER_VAR})  # in no command group: it outlives us
        started = time.monotonic()
        self._report("loading model", 0.0)
        self._process = await anyio.open_process(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                 stderr=self._log_file.wrapped, env=env, start_new_session=True)
        self.starts += 1
        announce = await self._await_announce(size / LOAD_BYTES_PER_SECOND + 1.0)
        launcher, self._process = self._process, None
        with anyio.move_on_after(5.0):
            await launcher.wait()  # the launcher side of the fork exits at once
        await launcher.aclose()
        if "error" in announce or not isinstance(announce.get("url"), str) or not isinstance(announce.get("pid"), int):
            raise LocalModelError(f"the local model server failed to start: {announce.get('error')}"
                                  + await self._log_tail())
        self._url, self._kept_pid = str(announce["url"]).rstrip("/"), int(announce["pid"])
        self._last_port = httpx.URL(self._url).port
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(5.0), trust_env=False)
        if not await self._healthy(timeout=10.0):
            raise LocalModelError(f"the local model server at {self._url} does not answer /health"
                                  + await self._log_tail())
        self.load_seconds = time.monotonic() - started
        self._report("loading model", 1.0)
        return self._url

    async def _drop_kept(self) -> None:
        """Stop using the detached server: our hold on its lease goes (it lives on for the next run)."""
        lease, self._lease = self._lease, None
        self._kept_pid = None
        if lease is not None:
            await anyio.to_thread.run_sync(keeper.let_go, lease, self._kept_paths().lease)

    async def _start_child(self, path: Path, port: int) -> str:
        size = (await anyio.Path(path).stat()).st_size
        self._log_file = await self._open_log()
        cmd, env = self._command(path, port), _env(os.environ)
        started = time.monotonic()
        self._report("loading model", 0.0)
        group = self._group = CommandGroup()
        env.update(group.env)
        self._process = await anyio.open_process(
            dies_with_us(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log_file.wrapped,
            env=env, start_new_session=True)
        group.leader = self._process.pid
        self.starts += 1
        try:
            announce = await self._await_announce(size / LOAD_BYTES_PER_SECOND + 1.0)
            if "error" in announce or not isinstance(announce.get("url"), str):
                raise LocalModelError(f"the local model server failed to start: {announce.get('error')}"
                                      + await self._log_tail())
            self._url = str(announce["url"]).rstrip("/")
            self._last_port = httpx.URL(self._url).port
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(5.0), trust_env=False)
            if not await self._healthy(timeout=10.0):
                raise LocalModelError(f"the local model server at {self._url} does not answer /health"
                                      + await self._log_tail())
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._cleanup()
            raise
        self.load_seconds = time.monotonic() - started
        self._report("loading model", 1.0)
        return self._url

    async def _await_announce(self, expected_seconds: float) -> dict[str, Any]:
        proc = self._process
        assert proc is not None and proc.stdout is not None
        line, failure = await read_line(proc, self.startup_timeout, expected_seconds,
                                        lambda f: self._report("loading model", f))
        if line is None:
            raise LocalModelError(failure + await self._log_tail())
        try:
            value = json.loads(line)
        except ValueError:
            raise LocalModelError(f"unexpected output from the local model server: {line[:200]!r}"
                                  + await self._log_tail()) from None
        return value if isinstance(value, dict) else {"error": f"unexpected announcement {value!r}"}

    def _root_url(self) -> str:
        assert self._url is not None
        return self._url.removesuffix("/v1")

    async def _healthy(self, timeout: float) -> bool:
        if self._http is None or self._url is None:
            return False
        with anyio.move_on_after(timeout):
            while self.running:
                try:
                    resp = await self._http.get(self._root_url() + "/health")
                    if resp.status_code == 200:
                        return True
                except httpx.HTTPError:
                    pass
                await anyio.sleep(0.05)
        return False

    async def _alive(self) -> bool:
        """A cheap probe between calls: only a refused connection counts as dead (a busy server may
        answer slowly, and must not be restarted mid-generation)."""
        if self._http is None or self._url is None:
            return False
        try:
            await self._http.get(self._root_url() + "/health", timeout=2.0)
        except (httpx.ConnectError, httpx.RemoteProtocolError):
            return False
        except httpx.HTTPError:
            return True
        return True

    async def _log_tail(self) -> str:
        try:
            if self._log_file is not None:
                await self._log_file.flush()
            data = await anyio.Path(self.log_path).read_bytes()
        except OSError:
            return ""
        tail = data[-LOG_TAIL_BYTES:].decode("utf-8", "replace").strip()
        return f"\n--- last lines of {self.log_path} ---\n{tail}" if tail else ""

    async def _cleanup(self) -> None:
        await self._drop_kept()
        proc, self._process = self._process, None
        group, self._group = self._group, None
        http, self._http = self._http, None
        log_file, self._log_file = self._log_file, None
        self._url = None
        if http is not None:
            await http.aclose()
        if proc is not None:
            await reap(proc)
        if group is not None:
            group.leader_reaped = proc is None or proc.returncode is not None
            await anyio.to_thread.run_sync(group.kill)  # whatever it started, too
            group.close()
        if log_file is not None:
            await log_file.aclose()
