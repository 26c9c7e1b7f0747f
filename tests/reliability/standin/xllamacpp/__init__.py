"""A stand-in for xllamacpp, put first on PYTHONPATH so the real ``python -m agentls.agent.local.serve``
runs without the 2 GB model: ``Server`` writes its pid to ``$STANDIN_PID_FILE``, "loads" for
``$STANDIN_LOAD_SECONDS``, then serves ``/health`` on 127.0.0.1 and never answers a completion (a model
busy generating). Its HTTP threads are not daemons, as native server threads would keep a process up."""

from __future__ import annotations

import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Params:
    def __getattr__(self, name: str) -> Any:
        value = _Params()
        object.__setattr__(self, name, value)
        return value


CommonParams = _Params


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        self.wfile.write(b'{"status":"ok"}')

    def do_POST(self) -> None:
        time.sleep(3600)

    def log_message(self, *args: Any) -> None:
        pass


class Server:
    def __init__(self, params: Any) -> None:
        pid_file = os.environ.get("STANDIN_PID_FILE")
        if pid_file:
            with open(pid_file, "w") as f:
                f.write(str(os.getpid()))
        time.sleep(float(os.environ.get("STANDIN_LOAD_SECONDS", "0")))
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._http.daemon_threads = False
        threading.Thread(target=self._http.serve_forever, daemon=False).start()
        self.listening_address = f"http://127.0.0.1:{self._http.server_address[1]}"
