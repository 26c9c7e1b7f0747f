"""``agentls run`` with a bad number anywhere (workspace file, user config, environment, a flag): exit code 2
and one line on stderr naming the key, its source and the default; never a traceback, never a model call."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from agentls.agent.config import SETTINGS
from agentls.agent.config_values import camel

from .test_config_values import BAD, NUMERIC

SCRIPT = Path(sys.executable).parent / "agentls"
AGENTLS = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "agentls.server"]
LAYERS = ("workspace", "user", "environment")


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLS_") and not k.endswith("_API_KEY")}
    # A model on a closed port: if the bad value slipped through, the run would fail later with exit 1.
    env.update(AGENTLS_DATA_DIR=str(tmp / "data"), AGENTLS_CONFIG=str(tmp / "user.toml"),
               AGENTLS_MODEL="m", AGENTLS_BASE_URL="http://127.0.0.1:9/v1", AGENTLS_API_KEY="k")
    return env


async def _run(tmp: Path, name: str, layer: str, toml: str, env_value: str, *flags: str) -> tuple[int, str, str]:
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    env = _env(tmp)
    where = ""
    if layer == "workspace":
        (ws / ".agentls.toml").write_text(f"{camel(name)} = {toml}\n")
        where = str(ws / ".agentls.toml")
    elif layer == "user":
        (tmp / "user.toml").write_text(f"{name} = {toml}\n")
        where = str(tmp / "user.toml")
    elif layer == "environment":
        env[f"AGENTLS_{name.upper()}"] = env_value
        where = "environment"
    proc = await asyncio.create_subprocess_exec(*AGENTLS, "run", "--workspace", str(ws), "--no-persist", *flags,
                                                "hi", env=env, cwd=tmp, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, where, err.decode()


async def test_every_bad_number_in_every_layer_exits_2_with_one_line(tmp_path: Path) -> None:
    """Each numeric key gets each kind of bad number once, the layers taking turns."""
    cases = [(name, LAYERS[(i + j) % len(LAYERS)], bad) for i, name in enumerate(NUMERIC)
             for j, bad in enumerate(BAD)]
    gate = asyncio.Semaphore(4)

    async def one(k: int) -> str | None:
        name, layer, (label, _, toml, env_value) = cases[k]
        async with gate:
            code, where, err = await _run(tmp_path / str(k), name, layer, toml, env_value)
        lines = err.strip().splitlines()
        key = f"AGENTLS_{name.upper()}" if layer == "environment" else camel(name) if layer == "workspace" else name
        ok = (code == 2 and len(lines) == 1 and "Traceback" not in err and where in lines[0]
              and repr(key) in lines[0] and "(default: " in lines[0])
        return None if ok else f"{name} {label} via {layer}: exit {code}, stderr {err[:400]!r}"

    problems = [p for p in await asyncio.gather(*(one(k) for k in range(len(cases)))) if p]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("value", ["-5", "0", "9" * 400, "100000"])
async def test_a_bad_max_iterations_flag_exits_2(tmp_path: Path, value: str) -> None:
    code, _, err = await _run(tmp_path, "max_iterations", "none", "", "", "--max-iterations", value)
    assert code == 2 and "Traceback" not in err, err
    [line] = err.strip().splitlines()
    assert line.startswith("agentls: command line: setting 'max-iterations' must be a whole number"), line
    assert "(default: 90)" in line, line


def test_the_settings_fields_have_ranges() -> None:
    """A numeric setting without a range would let NaN and absurd values through."""
    assert all("range" in SETTINGS.fields[name].metadata for name in NUMERIC)
