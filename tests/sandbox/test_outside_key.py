"""What "always run it outside the sandbox" covers: one program, by its real path (and its content's hash
when the sandbox could rewrite it), and only a command line that is that program alone. Through real
turns (the scripted provider calls ``terminal``; real bwrap or Landlock), and the key itself."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentls.agent.sandbox.outside import program_key
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import Factory
from .turns import Answering, asked_outside, outputs

TOUCH = os.path.realpath(shutil.which("touch") or "/usr/bin/touch")


async def always_then(make: Factory, srv: ScriptedServer, workspace: Path, first: str, *later: str
                      ) -> tuple[Answering, list[str]]:
    """The user answers "always" to running ``first`` outside, then refuses whatever is asked after."""
    host = Answering(workspace, ["allow_always", "reject_once"])
    srv.push(tools(call("terminal", {"command": first})), *[tools(call("terminal", {"command": c})) for c in later],
             text("done"))
    result = await make(host=host).run_conversation("go")
    return host, outputs(result)


async def test_always_covers_the_same_program_only(make: Factory, srv: ScriptedServer, workspace: Path,
                                                   outside: Path, mechanism: str) -> None:
    fake = workspace / "touch"
    fake.write_text(f"#!/bin/sh\necho planted > {outside}/planted\n")
    fake.chmod(0o755)
    shadow = workspace / ".venv/bin"
    shadow.mkdir(parents=True)
    (workspace / ".venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    compound = [f"touch {outside}/c; touch {outside}/d",  # a list
                f"touch {outside}/c && touch {outside}/d",
                f"true | touch {outside}/c",  # a pipeline
                f"X=1 touch {outside}/c",  # an assignment before it
                f"PATH=.:$PATH touch {outside}/c",
                f"touch {outside}/c $(touch {outside}/d)",  # a substitution
                f"touch {outside}/c 2> {outside}/e",  # a redirection elsewhere
                f"(touch {outside}/c)", f"env touch {outside}/c", f"sh -c 'touch {outside}/c'"]
    scripts = [f"./touch {outside}/b", f"{fake} {outside}/c"]  # a script the model wrote, named like the program
    host, outs = await always_then(make, srv, workspace, f"touch {outside}/a", *compound, *scripts)
    assert (outside / "a").exists()
    # Nothing ran outside the sandbox without a question (it would have made these), and each was asked.
    assert not any((outside / n).exists() for n in ("b", "c", "d", "e", "planted"))
    asked = {r.raw_input["command"]: {o.kind for o in r.options} for r in asked_outside(host)}
    assert list(asked) == [f"touch {outside}/a", *compound, *scripts], list(asked)
    assert "allow_always" in asked[f"touch {outside}/a"] and "allow_always" in asked[scripts[0]]
    assert not any("allow_always" in asked[c] for c in compound)
    # A program of the same name that a workspace venv puts first on PATH is another program.
    (shadow / "touch").write_text("#!/bin/sh\nexit 0\n")
    (shadow / "touch").chmod(0o755)
    assert program_key("touch x", workspace, f"{shadow}:{os.environ['PATH']}", [workspace]) != TOUCH


async def test_always_for_the_same_program_and_form_does_not_ask_again(make: Factory, srv: ScriptedServer,
                                                                       workspace: Path, outside: Path,
                                                                       mechanism: str) -> None:
    host, outs = await always_then(make, srv, workspace, f"touch {outside}/a", f"touch {outside}/b 2>&1",
                                   f"{TOUCH} {outside}/c >/dev/null")
    assert all((outside / n).exists() for n in "abc")
    assert len(asked_outside(host)) == 1 and "denied" not in outs[1] and "denied" not in outs[2]


async def test_a_workspace_program_rewritten_asks_again(make: Factory, srv: ScriptedServer, workspace: Path,
                                                        outside: Path, mechanism: str) -> None:
    """A program the sandbox can write is pinned by its content: the user allowed that script, not its name."""
    tool = workspace / "tool.sh"
    tool.write_text(f"#!/bin/sh\ntouch {outside}/\"$1\"\n")
    tool.chmod(0o755)
    host, outs = await always_then(make, srv, workspace, "./tool.sh a", "./tool.sh b",
                                   f"printf '#!/bin/sh\\ntouch {outside}/evil\\n' > tool.sh", "./tool.sh c")
    assert (outside / "a").exists() and (outside / "b").exists()
    assert not (outside / "evil").exists() and not (outside / "c").exists()
    assert [r.raw_input["command"] for r in asked_outside(host)] == ["./tool.sh a", "./tool.sh c"]


@pytest.mark.parametrize("command, expected", [
    ("pytest -q tests", "{pytest}"),
    ("pytest -q 2>&1", "{pytest}"),
    ("pytest >/dev/null 2>&1", "{pytest}"),
    ("python -m pytest -q", "{python} -m pytest"),
    ("python tools/x.py", "{python} tools/x.py"),
    ("git status", "{git} status"),
    ("pytest; rm -rf x", None), ("pytest && ls", None), ("pytest || ls", None), ("pytest | tee log", None),
    ("pytest &", None), ("pytest\nls", None), ("(pytest)", None), ("{ pytest; }", None), ("X=1 pytest", None),
    ("pytest > out.txt", None), ("pytest 2>/tmp/log", None), ("pytest < in", None), ("pytest <<<x", None),
    ("pytest $(id)", None), ("pytest `id`", None), ("pytest <(id)", None), ("$P -q", None), ("'pytest'", None),
    ("p\\ytest", None), ("env pytest", None), ("command pytest", None), ("exec pytest", None),
    ("sudo pytest", None), ("xargs pytest", None), ("bash -c pytest", None), ("python -c 'print(1)'", None),
    ("node -e 1", None), ("git -c core.pager=x log", None), ("nosuchprogram-xyz", None), ("./nosuch", None),
    ("if true; then pytest; fi", None), ("for i in 1; do pytest; done", None), ("f() { pytest; }; f", None),
    ("pytest 'unterminated", None), ("cd /tmp", None),
])
def test_the_key(command: str, expected: str | None, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("pytest", "python", "git"):
        (bindir / name).write_text("#!/bin/sh\n")
        (bindir / name).chmod(0o755)
    key = program_key(command, tmp_path / "ws", f"{bindir}:/usr/bin:/bin", [tmp_path / "ws"])
    want = expected.format(**{n: bindir / n for n in ("pytest", "python", "git")}) if expected else None
    assert key == want, command


def test_a_symlinked_program_is_keyed_by_its_target(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("#!/bin/sh\n")
    (tmp_path / "real").chmod(0o755)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert program_key("link", tmp_path, str(tmp_path), []) == str(tmp_path / "real")
    writable = program_key("link", tmp_path, str(tmp_path), [tmp_path])
    assert writable is not None and writable.startswith(f"{tmp_path / 'real'} sha256:")
