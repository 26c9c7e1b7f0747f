"""The session store: SQLite (WAL, FTS5, migrations) and undo checkpoints."""

from agentls.agent.sessions.checkpoints import Checkpoint
from agentls.agent.sessions.schema import SchemaTooNew
from agentls.agent.sessions.store import SearchHit, SessionRecord, SessionStore, StoreClosed, default_db_path

__all__ = [
    "Checkpoint",
    "SchemaTooNew",
    "SearchHit",
    "SessionRecord",
    "SessionStore",
    "StoreClosed",
    "default_db_path",
]
