"""The ``agentls`` command: ``run`` (headless), ``lsp``, ``acp``, ``model``, ``fake-provider``, ``sessions``,
``sandbox``.

Heavy modules are imported per subcommand so each starts as fast as it can.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from agentls.agent.version import __version__

USAGE = """agentls {run,lsp,acp,model,sessions,sandbox,fake-provider} ...

  agentls run [options] "prompt"     one headless turn in a workspace; the answer goes to stdout
  agentls lsp                        the LSP face on stdio (VS Code, Neovim, Helix, Emacs)
  agentls acp                        the ACP face on stdio (Zed, JetBrains, CodeCompanion, avante)
  agentls model path|check|prime     where the embedded local model is; verify it; prime its prompt cache
  agentls sessions [--cwd DIR] [--query Q]   list stored sessions
  agentls sandbox [-w DIR] [--json]  which OS sandbox confines commands here, with which settings
  agentls fake-provider [options]    the scripted OpenAI/Anthropic-compatible test provider
  agentls --version
"""


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else 2
    if args[0] in ("-V", "--version", "version"):
        print(f"agentls {__version__}")
        return 0
    command, rest = args[0], args[1:]
    if command in ("run", "lsp", "acp"):
        from agentls.agent.process_group import kill_all

        previous = {sig: signal.signal(sig, _terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}
        try:
            return _serve(command, rest)
        finally:
            kill_all()  # nothing a command, an MCP server or the local model's server started outlives us
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    return _tool(command, rest)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM or SIGHUP (where a face does not handle it itself): kill the processes of the commands, the
    MCP servers and the local model's server (agent/process_group.py), then exit."""
    from agentls.agent.process_group import kill_all

    kill_all()
    os._exit(128 + signum)


def _serve(command: str, rest: list[str]) -> int:
    if command == "run":
        from .run import main as run_main

        return run_main(rest)
    if command == "lsp":
        from .lsp import main as lsp_main

        return lsp_main(rest)
    if command == "acp":
        from .acp import main as acp_main

        return acp_main(rest)
    raise AssertionError(command)


def _tool(command: str, rest: list[str]) -> int:
    if command == "model":
        from agentls.agent.local.cli import main as model_main

        return model_main(rest)
    if command == "sessions":
        from .run import sessions_main

        return sessions_main(rest)
    if command == "sandbox":
        from .run import sandbox_main

        return sandbox_main(rest)
    if command == "fake-provider":
        from agentls.agent.scripted.__main__ import main as fake_main

        return fake_main(rest)
    print(f"agentls: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


def parser(prog: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=prog)
