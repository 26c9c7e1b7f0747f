"""The server runtime both faces stand on: live sessions over one store, turns, notices, permission shapes
and logging. Each face (``server/lsp``, ``server/acp``) translates its wire into calls on it."""
