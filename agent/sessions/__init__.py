"""The session store: SQLite (WAL, FTS5, migrations) and undo checkpoints."""

from agent.sessions.checkpoints import Checkpoint
from agent.sessions.schema import SchemaTooNew
from agent.sessions.store import SearchHit, SessionRecord, SessionStore, StoreClosed, default_db_path

__all__ = [
    "Checkpoint",
    "SchemaTooNew",
    "SearchHit",
    "SessionRecord",
    "SessionStore",
    "StoreClosed",
    "default_db_path",
]
