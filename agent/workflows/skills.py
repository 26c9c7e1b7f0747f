"""Skills in the agentskills.io format: a folder with a ``SKILL.md`` (docs/workflows.md, "Skills").

The system prompt lists each skill's name and description only; the body arrives through the ``skill`` tool
(or ``/<name>``), with the list of the skill's files. A user-level skill's files may then be read with
``read_file`` although they are outside the workspace: exactly those files, read-only (``readable``).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from . import frontmatter, scan
from ..data_files import BadData

_ARGUMENTS = re.compile(r"\$ARGUMENTS")
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_FILES = 100
MAX_SKILLS = 200
# What the system prompt lists (the rest stay reachable by name): a description cut to PROMPT_DESCRIPTION
# characters, at most PROMPT_SKILLS skills and PROMPT_BYTES of lines.
PROMPT_DESCRIPTION = 250
PROMPT_SKILLS = 50
PROMPT_BYTES = 8 * 1024


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    body: str
    scope: str  # "workspace" or "user"
    files: tuple[Path, ...] = ()  # the regular files in the folder besides SKILL.md (no symlinks)
    license: str | None = None
    allowed_tools: tuple[str, ...] = ()

    def loaded(self, arguments: str | None = None) -> str:
        """What the model reads: the body, where the folder is, the files it may read. ``arguments`` (given by
        ``/<name> args``, never by the ``skill`` tool) replace ``$ARGUMENTS`` in the body, as Claude Code does,
        and are appended as ``ARGUMENTS: ...``; nothing else in the instructions changes (no ``$1``)."""
        body = self.body.strip()
        if arguments is not None:
            arguments = arguments.strip()
            body = _ARGUMENTS.sub(lambda _: arguments, body)
        lines = [f'<skill name="{self.name}" folder="{self.folder}">', body, "</skill>"]
        if self.files:
            lines.append("Files of this skill (read them with read_file when the instructions need them):")
            lines += [f"- {path}" for path in self.files]
        if arguments:
            lines.append(f"ARGUMENTS: {arguments}")
        return "\n".join(lines)


def folders(workspace: Path | None, user: Path) -> list[scan.Folder]:
    """In precedence order: the first skill of a name wins."""
    out = []
    if workspace is not None:
        out += [scan.Folder(workspace / sub, "workspace", workspace)
                for sub in (".agents/skills", ".agentls/skills", ".claude/skills")]
    out.append(scan.Folder(user / "skills", "user", None))
    return out


def _files(folder: Path) -> tuple[Path, ...]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):  # never follows a symlinked folder
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if len(Path(dirpath).relative_to(folder).parts) >= scan.MAX_DEPTH:
            dirnames[:] = []
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path == folder / "SKILL.md" or name.startswith("."):
                continue
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    found.append(path)
            except OSError:
                continue
            if len(found) >= MAX_FILES:
                return tuple(found)
    return tuple(found)


def parse(folder: scan.Folder, skill_dir: Path) -> Skill:
    path = skill_dir / "SKILL.md"
    fields, body = frontmatter.split(scan.read(folder, path))
    name = frontmatter.text_field(fields, "name", MAX_NAME)
    if name is None:
        raise frontmatter.BadFrontMatter("the front matter needs a 'name'")
    if not NAME.match(name):
        raise frontmatter.BadFrontMatter(f"the name {name[:80]!r} is not a skill name (lowercase letters, digits "
                                         "and single hyphens, at most 64)")
    description = frontmatter.text_field(fields, "description", MAX_DESCRIPTION)
    if description is None:
        raise frontmatter.BadFrontMatter("the front matter needs a 'description'")
    if not body.strip():
        raise frontmatter.BadFrontMatter("the skill has no instructions after the front matter")
    real = Path(os.path.realpath(skill_dir))
    return Skill(name=name, description=" ".join(description.split()), folder=real, body=body.strip(),
                 scope=folder.scope, files=_files(real), license=frontmatter.text_field(fields, "license", 200),
                 allowed_tools=frontmatter.word_list(fields, "allowed-tools"))


def load(workspace: Path | None, user: Path) -> tuple[dict[str, Skill], list[str]]:
    """Skills by name and the problems (each names its file)."""
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for folder in folders(workspace, user):
        for parts, path in scan.walk(folder, "SKILL.md", problems):
            if len(parts) != 2 or parts[1]:  # <skills>/<name>/SKILL.md only
                continue
            skill_dir = path.parent
            try:
                skill = parse(folder, skill_dir)
            except (OSError, BadData) as exc:
                problems.append(f"{path}: skill skipped: {exc}")
                continue
            if skill.name in skills:
                continue
            if len(skills) >= MAX_SKILLS:
                problems.append(f"{path}: more than {MAX_SKILLS} skills; this one and the rest are ignored")
                break
            skills[skill.name] = skill
    return skills, problems


def prompt_section(skills: dict[str, Skill]) -> str | None:
    """The system prompt's list of skills (names and descriptions only), in name order: deterministic."""
    if not skills:
        return None
    lines = ["# Skills",
             "Skills are instructions for particular tasks, kept out of this prompt until needed. When the task "
             "matches a skill's description, call the `skill` tool with its name first and follow what it says."]
    listed = 0
    size = 0
    for skill in sorted(skills.values(), key=lambda s: s.name):
        description = skill.description if len(skill.description) <= PROMPT_DESCRIPTION else (
            skill.description[:PROMPT_DESCRIPTION - 1] + "…")
        line = f"- {skill.name}: {description}"
        if listed >= PROMPT_SKILLS or size + len(line) > PROMPT_BYTES:
            break
        lines.append(line)
        listed += 1
        size += len(line) + 1
    if listed < len(skills):
        lines.append(f"({len(skills) - listed} more skills are not listed here. Calling the `skill` tool with a name "
                     "that is not a skill answers with every skill's name.)")
    return "\n".join(lines)


def readable(skills: dict[str, Skill]) -> frozenset[str]:
    """The user-level skills' files read_file may read outside the workspace (real paths)."""
    return frozenset(os.path.realpath(p) for s in skills.values() if s.scope == "user"
                     for p in (*s.files, s.folder / "SKILL.md"))
