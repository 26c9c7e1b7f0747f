"""The session store: SQLite (WAL, FTS5, migrations) and undo checkpoints."""

from agentls.agent.sessions.checkpoints import Checkpoint
from agentls.agent.sessions.lease import SessionBusy
from agentls.agent.sessions.opening import StoreReadOnly
from agentls.agent.sessions.schema import SchemaTooNew, StoreError
from agentls.agent.sessions.store import SearchHit, SessionRecord, SessionStore, StoreClosed, default_db_path

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
