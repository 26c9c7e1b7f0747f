"""The session store: SQLite (WAL, FTS5, migrations) and undo checkpoints."""

from .checkpoints import Checkpoint
from .lease import SessionBusy
from .opening import StoreReadOnly
from .schema import SchemaTooNew, StoreError
from .store import SearchHit, SessionRecord, SessionStore, StoreClosed, default_db_path

__all__ = [
    "Checkpoint",
    "SchemaTooNew",
    "SearchHit",
    "SessionBusy",
    "SessionRecord",
    "SessionStore",
    "StoreClosed",
    "StoreError",
    "StoreReadOnly",
    "default_db_path",
]
