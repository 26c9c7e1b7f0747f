"""What a stdio server's launcher would otherwise take from its working directory, the workspace, which
sandboxed commands can write (docs/sandbox.md): ``npx`` runs a package from the project's ``node_modules``
before its own cache, and ``python -m`` imports from the working directory first. A server from the user's
own config or the editor is a program installed elsewhere, so its launcher is kept from the workspace:
``npx --prefix <an empty folder of agentls's>`` and ``PYTHONSAFEPATH=1``. A server the workspace's own
files define (``.mcp.json``, ``.agentls.toml``, trusted) is the project's code and runs as written."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from .spec import ServerSpec

PYTHONS = ("python", "python3")


def neutral_prefix() -> Path:
    """An empty folder agentls owns (read-only to sandboxed commands, under its cache dir)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("agentls")) / "mcp-prefix"


def from_workspace(spec: ServerSpec, workspace: str) -> bool:
    return spec.source.startswith(workspace.rstrip(os.sep) + os.sep)


def kept_from_workspace(spec: ServerSpec, workspace: str) -> ServerSpec:
    if spec.transport != "stdio" or not spec.command or from_workspace(spec, workspace):
        return spec
    program = os.path.basename(spec.command)
    if program == "npx" and not any(a == "--prefix" or a.startswith("--prefix=") for a in spec.args):
        prefix = neutral_prefix()
        try:
            prefix.mkdir(parents=True, exist_ok=True)
        except OSError:
            return spec
        return replace(spec, args=("--prefix", str(prefix), *spec.args))
    if (program in PYTHONS or program.startswith("python3.")) and "-m" in spec.args and \
            "PYTHONSAFEPATH" not in dict(spec.env):
        return replace(spec, env=(*spec.env, ("PYTHONSAFEPATH", "1")))
    return spec
