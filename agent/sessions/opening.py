"""Opening the session database whatever state it is found in.

- Missing: created (with its directory).
- A directory, a FIFO, a device in its place, or a location that cannot be created or written: a
  ``StoreError`` naming the file and what to do, never a traceback.
- Damaged (not a database, truncated, malformed): moved aside to ``sessions.db.damaged-<time>`` (with its
  ``-wal``/``-shm``), kept and never deleted, and a fresh database is opened; ``notices`` says so, naming
  both files.
- Read-only (the file or its directory cannot be written): opened read-only, so sessions can still be
  listed and loaded; writes raise ``StoreReadOnly``.

Repairs happen under an ``flock`` of the directory, so two processes starting together never move a
database the other has just created.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import stat
import struct
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import aiosqlite
import anyio
import anyio.to_thread

from ..fileio import kind_of
from .schema import MIGRATIONS, SchemaTooNew, StoreError, migrate

BUSY_TIMEOUT_MS = 5000
QUICK_CHECK_UP_TO = 32 * 1024 * 1024
MAGIC = b"SQLite format 3\x00"
ADVICE = "set AGENTLS_DATA_DIR (or the session_db setting) to a writable place"


class StoreReadOnly(StoreError):
    """The store was opened read-only: sessions can be listed and loaded, nothing can be saved."""


@dataclass
class Opened:
    conn: aiosqlite.Connection
    read_only: bool = False
    notices: list[str] = field(default_factory=list)


def damaged(exc: BaseException | None) -> bool:
    """SQLite's own verdict that the file is not a (sound) database (also when a failed rollback hides it);
    never a lock or a permission."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            name = getattr(exc, "sqlite_errorname", "")
            if name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or "malformed" in str(exc) or "not a database" in str(exc):
                return True
        exc = exc.__context__
        seen += 1
    return False


def header_problem(path: Path) -> str | None:
    """What the file's header says is wrong with it (not a database, shorter than its page count)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        return None
    if size == 0:
        return None  # SQLite makes an empty file a database
    if len(head) < 100 or not head.startswith(MAGIC):
        return "not a SQLite database"
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    pages, counter, valid_for = struct.unpack(">I", head[28:32])[0], head[24:28], head[92:96]
    if counter == valid_for and pages and size < pages * page_size:
        return f"truncated: {size:,} bytes of {pages * page_size:,}"
    return None


def _moved_name(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    dest = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while dest.exists():
        n += 1
        dest = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    return dest


def move_aside(path: Path, reason: str) -> str:
    """Rename the damaged database (and its WAL files); the notice naming both files."""
    dest = _moved_name(path)
    os.rename(path, dest)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.rename(f"{path}{suffix}", f"{dest}{suffix}")
    return (f"the session store {path} was damaged ({reason}); it was moved to {dest} (kept, not deleted) and a "
            f"fresh store was started at {path}. Sessions saved before are not listed any more; the old file can "
            "be inspected or recovered with the sqlite3 tool")


@contextlib.asynccontextmanager
async def _directory_lock(directory: Path) -> AsyncIterator[None]:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreError(f"another process kept {directory} locked for 30 s while opening the "
                                     "session store") from None
                await anyio.sleep(0.01)
            except OSError:
                break  # no flock on this file system
        yield
    finally:
        os.close(fd)  # releases the lock


def _check_place(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the directory {path.parent} for the session store {path}: "
                         f"{exc.strerror or exc}; {ADVICE}") from None
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot use the session store {path}: {exc.strerror or exc}; {ADVICE}") from None
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"the session store {path} is {kind_of(st.st_mode)}, not a database file; move it away "
                         f"or {ADVICE}")


async def _pragmas(conn: aiosqlite.Connection) -> None:
    await conn.execute("PRAGMA foreign_keys=ON")
    await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


async def _probe(conn: aiosqlite.Connection, path: Path, thorough: bool) -> None:
    """Touch what every request needs; on a small (or suspicious) file check every page."""
    await conn.execute_fetchall("SELECT count(*) FROM sessions")
    await conn.execute_fetchall("SELECT max(id) FROM messages")
    if thorough:
        rows = list(await conn.execute_fetchall("PRAGMA quick_check(1)"))
        if not rows or rows[0][0] != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed ({rows[0][0] if rows else 'no answer'})")


async def _connect(path: Path, thorough: bool) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    try:
        await _pragmas(conn)
        rows = list(await conn.execute_fetchall("PRAGMA journal_mode=WAL"))
        if not rows or str(rows[0][0]).lower() != "wal":
            raise sqlite3.OperationalError(f"attempt to write a readonly database (journal mode {rows})")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await migrate(conn)
        await _probe(conn, path, thorough)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await conn.close()
        raise
    return conn


async def _connect_read_only(path: Path) -> aiosqlite.Connection:
    last: Exception | None = None
    for mode in ("mode=ro", "immutable=1"):  # immutable: the directory does not even allow the -shm file
        try:
            conn = await aiosqlite.connect(f"file:{quote(str(path))}?{mode}", uri=True, isolation_level=None)
        except sqlite3.Error as exc:
            last = exc
            continue
        try:
            await _pragmas(conn)
            rows = list(await conn.execute_fetchall("SELECT max(version) FROM schema_version"))
            version = int(rows[0][0] or 0) if rows else 0
            if version > len(MIGRATIONS):
                raise SchemaTooNew(f"the session database {path} is at schema version {version}; this agentls "
                                   f"knows up to {len(MIGRATIONS)}. Upgrade agentls or {ADVICE}.")
            await _probe(conn, path, False)
            return conn
        except sqlite3.Error as exc:
            last = exc
            with anyio.CancelScope(shield=True):
                await conn.close()
    raise StoreError(f"cannot open the session store {path}, not even read-only: {last}; {ADVICE}")


def _private(path: Path) -> None:
    """Transcripts are private: no access for group and others when the file is ours (the owner's bits stay:
    a file the user made read-only stays read-only); never fatal."""
    with contextlib.suppress(OSError):
        st = path.stat()
        mode = stat.S_IMODE(st.st_mode)
        if st.st_uid == os.getuid() and mode & 0o077:
            os.chmod(path, mode & ~0o077)


def _cannot_write(exc: BaseException, path: Path) -> bool:
    if isinstance(exc, PermissionError):
        return True
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return ("readonly" in text or "read-only" in text or "unable to open" in text) and path.is_file()


async def open_database(path: Path) -> Opened:
    """The database at ``path``, ready (see the module docstring for every state it may be found in)."""
    await anyio.to_thread.run_sync(_check_place, path)
    notices: list[str] = []
    async with _directory_lock(path.parent):
        problem = await anyio.to_thread.run_sync(header_problem, path)
        size = path.stat().st_size if path.exists() else 0
        try:
            conn = await _connect(path, thorough=problem is not None or size <= QUICK_CHECK_UP_TO)
        except SchemaTooNew as exc:
            raise SchemaTooNew(f"{path}: {exc}") from None
        except Exception as exc:
            if damaged(exc):
                notices.append(await anyio.to_thread.run_sync(move_aside, path, problem or str(exc)))
                conn = await _connect(path, thorough=False)
            elif _cannot_write(exc, path):
                conn = await _connect_read_only(path)
                notices.append(f"the session store {path} cannot be written ({exc}); it was opened read-only: "
                               f"sessions can be listed and loaded, but no turn can be saved. {ADVICE[0].upper()}"
                               f"{ADVICE[1:]}, or make the file and its directory writable")
                return Opened(conn, True, notices)
            elif isinstance(exc, sqlite3.Error | OSError):
                raise StoreError(f"cannot open the session store {path}: {exc}; {ADVICE}") from None
            else:
                raise
    await anyio.to_thread.run_sync(_private, path)
    return Opened(conn, False, notices)


def read_only_error(path: Path) -> StoreReadOnly:
    return StoreReadOnly(f"the session store {path} is read-only: this session can be read but not continued "
                         f"(nothing can be saved); {ADVICE}, or make the file and its directory writable")

