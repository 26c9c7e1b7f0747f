"""What git runs later, outside any sandbox, cannot be planted from inside it (real bwrap or Landlock,
real git). Each attack plants a hook or a setting that would create a marker file when the user next
runs an ordinary `git commit` (or `git status`) outside agentls; then the sandbox's undo step runs, as
the terminal tool runs it after every command; then the user's commit runs, unconfined, and the marker
must not exist. Under bubblewrap the attacks fail outright (read-only, immovable mounts); under Landlock,
which cannot protect a folder inside the workspace, the undo step puts everything back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentls.agent.sandbox import plants
from agentls.agent.sandbox.policy import BUBBLEWRAP, Confinement
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import Factory, run
from .turns import Answering, outputs

IDENT = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
PLANT = "printf '#!/bin/sh\\ntouch {marker}\\n' > {hooks}/pre-commit && chmod +x {hooks}/pre-commit"


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *IDENT, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def repo(workspace: Path) -> Path:
    assert git(workspace, "init", "-q").returncode == 0
    assert git(workspace, "add", "-A").returncode == 0
    assert git(workspace, "commit", "-qm", "first").returncode == 0
    return workspace


def users_commit(repo: Path, where: Path | None = None) -> None:
    """What the user does next, outside agentls: an ordinary commit and status (hooks, fsmonitor run)."""
    where = where or repo
    (where / "later.txt").write_text(str(os.urandom(4)))
    git(where, "add", "later.txt")
    git(where, "commit", "-qm", "later")
    git(where, "status", "--short")


ATTACKS = {
    "rename .git, rebuild it": "mv .git .git-old && mkdir .git && cp -a .git-old/. .git/ && " + PLANT.replace(
        "{hooks}", ".git/hooks"),
    "rename .git/hooks": "mv .git/hooks .git/hooks-old && mkdir .git/hooks && " + PLANT.replace("{hooks}", ".git/hooks"),
    "remove .git/hooks": "rm -rf .git/hooks; mkdir -p .git/hooks && " + PLANT.replace("{hooks}", ".git/hooks"),
    "plant a hook": PLANT.replace("{hooks}", ".git/hooks"),
    "a symlink into hooks": "ln -s .git/hooks h && " + PLANT.replace("{hooks}", "h"),
    "git config core.hooksPath": "mkdir evil && " + PLANT.replace("{hooks}", "evil") + " && git config core.hooksPath evil",
    "git config core.fsmonitor": "git config core.fsmonitor 'touch {marker}; false'",
    "append to .git/config": "mkdir evil && " + PLANT.replace("{hooks}", "evil") +
                             " && printf '[core]\\n\\thooksPath = evil\\n' >> .git/config",
    "rename .git/config": "mv .git/config .git/config-old && cp .git/config-old .git/config && "
                          "git config --file .git/config core.fsmonitor 'touch {marker}; false'",
    "git config --file with a lock": "cp .git/config c && git config --file c core.fsmonitor 'touch {marker}; false' "
                                     "&& cat c > .git/config",
    "replace .git by a gitdir file": "cp -a .git evilgit && " + PLANT.replace("{hooks}", "evilgit/hooks") +
                                     " && rm -rf .git; echo 'gitdir: evilgit' > .git",
    "a commondir elsewhere": "cp -a .git evilgit && " + PLANT.replace("{hooks}", "evilgit/hooks") +
                             " && echo ../evilgit > .git/commondir",
    "info/attributes": "mkdir -p .git/info && echo '* filter=x' > .git/info/attributes && "
                       "echo '[filter \"x\"]' > /dev/null",
    "a bind mount in its own namespace": "mkdir evil && " + PLANT.replace("{hooks}", "evil") +
                                         " && unshare -rm sh -c 'mount --bind evil .git/hooks && ls .git/hooks'",
    "rename the workspace": "cd .. && mv {ws} {ws}-old && mkdir {ws} && cp -a {ws}-old/. {ws}/ && " +
                           PLANT.replace("{hooks}", "{ws}/.git/hooks"),
}


# Harmless inside: a commondir is created (the undo step removes it); a mount in the command's own namespace
# is gone with it.
SUCCEED_INSIDE = ("a commondir elsewhere", "a bind mount in its own namespace")


@pytest.mark.parametrize("name", list(ATTACKS))
async def test_nothing_planted_runs_on_the_users_next_commit(name: str, sandbox: Confinement, repo: Path,
                                                             outside: Path) -> None:
    marker = outside / "ran"
    command = ATTACKS[name].format(marker=marker, ws=repo.name)
    was = plants.before(repo)
    result = await run(command, repo, sandbox)
    notes = plants.undo(repo, was)
    if sandbox.mechanism == BUBBLEWRAP:
        if name not in SUCCEED_INSIDE:
            assert result.exit_code != 0, f"{command}\n{result.output}"
        assert (repo / ".git").is_dir() and (repo / ".git/hooks").is_dir()  # never replaced (rm -rf may empty it)
    users_commit(repo)
    assert not marker.exists(), f"{name}: the planted program ran\n{result.output}\n{notes}"


def test_the_attacks_would_work_unsandboxed(repo: Path, outside: Path) -> None:
    """The same commands without the sandbox (and without the undo step) do plant: the tests above can fail."""
    ran = 0
    for name in ("plant a hook", "git config core.fsmonitor", "a commondir elsewhere"):
        marker = outside / "ran"
        subprocess.run(["sh", "-c", ATTACKS[name].format(marker=marker, ws=repo.name)], cwd=repo, check=True)
        users_commit(repo)
        ran += marker.exists()
        marker.unlink(missing_ok=True)
        subprocess.run(["sh", "-c", "rm -f .git/hooks/pre-commit .git/commondir; git config --unset core.fsmonitor;"
                        " rm -rf evilgit"], cwd=repo)
    assert ran == 3


async def test_ordinary_git_works_inside(sandbox: Confinement, repo: Path) -> None:
    g = "git -c user.name=t -c user.email=t@example.com"
    result = await run(
        f"echo a > a.txt && {g} add a.txt && {g} commit -qm a && {g} checkout -q -b feature && echo b > b.txt "
        f"&& {g} add b.txt && {g} commit -qm b && echo dirty >> a.txt && {g} stash -q && {g} stash list "
        f"&& {g} stash pop -q && {g} checkout -q -- a.txt && {g} checkout -q - && {g} merge -q --no-edit feature "
        f"&& {g} tag v1 && {g} branch -q -d feature && {g} reset -q --hard HEAD~1 && {g} reflog | head -2 "
        f"&& {g} gc -q && {g} worktree add -q wt3 && {g} worktree remove wt3 && {g} log --oneline | wc -l "
        f"&& {g} status --short",
        repo, sandbox)
    assert result.exit_code == 0, result.output
    assert "stash@{0}" in result.output and result.output.rstrip().endswith("2")
    assert git(repo, "tag").stdout.strip() == "v1"


async def test_a_submodules_git_dir_is_protected(sandbox: Confinement, repo: Path, outside: Path) -> None:
    """``.git/modules/<name>`` holds a submodule's hooks and config: the user commits there too."""
    (repo / ".git/modules").mkdir()
    assert git(repo, "init", "-q", "--separate-git-dir=.git/modules/sub", "sub").returncode == 0
    sub = repo / "sub"
    (sub / "s.txt").write_text("s\n")
    assert git(sub, "add", "s.txt").returncode == 0 and git(sub, "commit", "-qm", "s").returncode == 0
    marker = outside / "ran"
    hooks = ".git/modules/sub/hooks"
    for attack in (PLANT.replace("{hooks}", hooks), f"mv .git/modules/sub .git/modules/x && mkdir -p {hooks} && "
                   + PLANT.replace("{hooks}", hooks), "mv .git/modules .git/m2 && mkdir -p " + hooks + " && "
                   + PLANT.replace("{hooks}", hooks)):
        was = plants.before(repo)
        result = await run(attack.format(marker=marker), repo, sandbox)
        plants.undo(repo, was)
        if sandbox.mechanism == BUBBLEWRAP:
            assert result.exit_code != 0, f"{attack}\n{result.output}"
            users_commit(repo, sub)
            assert not marker.exists(), f"{attack}\n{result.output}"
    if sandbox.mechanism != BUBBLEWRAP:
        pytest.skip("Landlock cannot protect a submodule's git directory inside the workspace, and the undo step "
                    "looks at the workspace's own .git only (docs/sandbox.md)")


async def test_a_linked_worktrees_git_dir(sandbox: Confinement, repo: Path, outside: Path,
                                          tmp_path: Path) -> None:
    """A second worktree inside the workspace: its gitdir (.git/worktrees/<name>) says which common dir
    (hooks, config) it uses. And a workspace that is itself a linked worktree of a repository outside."""
    assert git(repo, "worktree", "add", "-q", "wt2").returncode == 0
    marker = outside / "ran"
    attack = "cp -a .git evilgit && " + PLANT.replace("{hooks}", "evilgit/hooks") + \
             " && echo \"$PWD/evilgit\" > .git/worktrees/wt2/commondir"
    result = await run(attack.format(marker=marker), repo, sandbox)
    if sandbox.mechanism == BUBBLEWRAP:
        assert result.exit_code != 0, result.output
        users_commit(repo, repo / "wt2")
        assert not marker.exists(), result.output
    # The workspace is a linked worktree; the main repository is outside it.
    main = outside / "main"
    main.mkdir()
    assert git(main, "init", "-q").returncode == 0 and git(main, "commit", "-q", "--allow-empty", "-m", "i").returncode == 0
    linked = outside / "linked"
    assert git(main, "worktree", "add", "-q", str(linked)).returncode == 0
    from dataclasses import replace

    conf = replace(sandbox, workspace=linked.resolve())
    for attack in (PLANT.replace("{hooks}", "$(git rev-parse --git-common-dir)/hooks"),
                   "echo 'gitdir: /nowhere' > .git", "rm .git"):
        was = plants.before(linked)
        result = await run(attack.format(marker=marker), linked, conf)
        plants.undo(linked, was)
        if sandbox.mechanism == BUBBLEWRAP or "rev-parse" in attack:
            assert result.exit_code != 0, f"{attack}\n{result.output}"
        if sandbox.mechanism == BUBBLEWRAP:
            assert (linked / ".git").read_text().startswith("gitdir: "), attack
    users_commit(main, linked)
    assert not marker.exists()


def test_the_undo_step_says_what_it_undid(repo: Path, outside: Path) -> None:
    """Run unsandboxed (the worst case: nothing was read-only), the undo step alone puts back the hooks
    and config and removes what points git elsewhere, and says so."""
    was = plants.before(repo)
    marker = outside / "ran"
    script = (PLANT.replace("{hooks}", ".git/hooks") + " && rm .git/hooks/pre-push.sample && git config core.fsmonitor x"
              " && echo ../elsewhere > .git/commondir").format(marker=marker)
    subprocess.run(["sh", "-c", script], cwd=repo, check=True)
    notes = plants.undo(repo, was)
    assert any("removed .git/hooks/pre-commit" in n for n in notes)
    assert any("put back .git/hooks/pre-push.sample" in n for n in notes)
    assert any("put back .git/config" in n for n in notes) and any("commondir" in n for n in notes)
    assert (repo / ".git/hooks/pre-push.sample").stat().st_mode & 0o111
    users_commit(repo)
    assert not marker.exists() and plants.undo(repo, plants.before(repo)) == []


async def test_a_repository_the_command_creates_keeps_only_gits_own_hooks(sandbox: Confinement,
                                                                          workspace: Path, outside: Path) -> None:
    marker = outside / "ran"
    was = plants.before(workspace)
    result = await run(("git init -q && " + PLANT.replace("{hooks}", ".git/hooks") +
                        " && git config core.fsmonitor 'touch {marker}; false'").format(marker=marker), workspace,
                       sandbox)
    assert result.exit_code == 0, result.output
    notes = plants.undo(workspace, was)
    assert any("pre-commit" in n for n in notes) and any("names a program" in n for n in notes)
    assert any(p.name.endswith(".sample") for p in (workspace / ".git/hooks").iterdir())


async def test_through_a_turn_the_result_says_what_was_undone(make: Factory, srv: ScriptedServer, repo: Path,
                                                              outside: Path, mechanism: str) -> None:
    """The terminal tool runs the undo step after each sandboxed command and tells the model."""
    marker = outside / "ran"
    command = ATTACKS["a commondir elsewhere"].format(marker=marker, ws=repo.name)
    srv.push(tools(call("terminal", {"command": command})), text("done"))
    (out,) = outputs(await make(host=Answering(repo, ["reject_once"])).run_conversation("go"))
    assert "agentls undid what git would have run later" in out and "removed .git/commondir" in out, out
    assert not (repo / ".git/commondir").exists()
    users_commit(repo)
    assert not marker.exists()


async def test_a_hooks_folder_made_a_link_out_of_the_workspace_is_moved_aside_never_followed(
        sandbox: Confinement, workspace: Path, outside: Path) -> None:
    """The undo step runs outside the sandbox: a ``.git/hooks`` that links to another folder (``~/.ssh``)
    must be moved aside as a link, never listed and emptied as "planted hooks" or written through."""
    (outside / "id_ed25519").write_text("key\n")
    was = plants.before(workspace)
    result = await run(f"mkdir .git && ln -s {outside} .git/hooks", workspace, sandbox)
    assert result.exit_code == 0, result.output
    notes = plants.undo(workspace, was)
    assert sorted(p.name for p in outside.iterdir()) == ["id_ed25519", "precious.txt"], notes
    assert not (workspace / ".git/hooks").exists() and (workspace / ".git/hooks.agentls-removed").is_symlink()
    assert any("made .git/hooks a symlink: moved it aside" in n for n in notes), notes


def test_the_undo_step_never_follows_a_link_in_an_existing_repository(repo: Path, outside: Path) -> None:
    """Under Landlock ``.git/hooks`` itself can be replaced: by a link to a folder outside, whose files
    must stay as they are, and the user's hooks come back into a real folder."""
    hook = repo / ".git/hooks/pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    was = plants.before(repo)
    subprocess.run(["sh", "-c", f"rm -rf .git/hooks && ln -s {outside} .git/hooks"], cwd=repo, check=True)
    notes = plants.undo(repo, was)
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"], notes
    assert (repo / ".git/hooks").is_dir() and not (repo / ".git/hooks").is_symlink()
    assert hook.read_text() == "#!/bin/sh\nexit 0\n" and hook.stat().st_mode & 0o777 == 0o755
    assert (repo / ".git/hooks/pre-push.sample").exists()
    assert plants.undo(repo, plants.before(repo)) == []


def test_a_planted_hook_that_is_a_link_or_too_large_to_copy_is_taken_away(repo: Path, outside: Path) -> None:
    marker = outside / "ran"
    big = f"#!/bin/sh\ntouch {marker}\n" + "#" * (plants.MAX_REMEMBERED + 10) + "\n"
    (repo / "tool.sh").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (repo / "tool.sh").chmod(0o755)
    was = plants.before(repo)
    (repo / ".git/hooks/pre-commit").symlink_to("../../tool.sh")
    (repo / ".git/hooks/post-commit").write_text(big)
    (repo / ".git/hooks/post-commit").chmod(0o755)
    notes = plants.undo(repo, was)
    assert any("pre-commit" in n for n in notes) and any("post-commit" in n for n in notes), notes
    users_commit(repo)
    assert not marker.exists(), notes


def test_a_users_large_or_linked_hook_is_kept_when_the_command_left_it_alone(repo: Path) -> None:
    """What cannot be copied is still compared (inode, size, mtime): left alone, it is not touched."""
    (repo / ".git/hooks/post-commit").write_text("#" * (plants.MAX_REMEMBERED + 10))
    (repo / ".git/hooks/pre-commit").symlink_to("../../tool.sh")
    assert plants.undo(repo, plants.before(repo)) == []
    assert (repo / ".git/hooks/pre-commit").is_symlink() and (repo / ".git/hooks/post-commit").is_file()


NEW_REPOSITORY = {
    # git accepts a key on its section's line; the report must see it.
    "a key on the header line": "git init -q && printf '[core] fsmonitor = \"touch {marker}; false\"\\n' >> .git/config",
    "a config that is a link": "git init -q && cp .git/config cfg && printf '\\tfsmonitor = \"touch {marker}; false\"\\n'"
                               " >> cfg && rm .git/config && ln -s ../cfg .git/config",
    "a gitdir file": "git init -q --separate-git-dir=.hidden-repo && git config core.fsmonitor 'touch {marker}; false'",
    "a .git link": "git init -q hidden && git -C hidden config core.fsmonitor 'touch {marker}; false' && "
                   "ln -s hidden/.git .git",
}


@pytest.mark.parametrize("name", list(NEW_REPOSITORY))
async def test_a_repository_the_command_creates_cannot_hide_a_program_from_the_undo_step(
        name: str, sandbox: Confinement, workspace: Path, outside: Path) -> None:
    marker = outside / "ran"
    was = plants.before(workspace)
    result = await run(NEW_REPOSITORY[name].format(marker=marker), workspace, sandbox)
    assert result.exit_code == 0, result.output
    notes = plants.undo(workspace, was)
    assert notes, name
    if "names a program" not in " ".join(notes):  # reported, not changed; anything else is moved aside
        users_commit(workspace)
        assert not marker.exists(), notes
