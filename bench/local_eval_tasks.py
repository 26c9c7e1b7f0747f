"""The tasks of bench/local_eval.py: one small project, and what each request must leave on disk and say."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

Files = dict[str, str]
Check = Callable[[Files, Files, str], tuple[bool, str]]

GREET = '''import sys


def greet(name):
    return "Hello, " + name + "!"


if __name__ == "__main__":
    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))
'''
CALC = '''def add(a, b):
    return a + b


def sub(a, b):
    return a + b


def total(items):
    result = 0
    for item in items:
        result = add(result, item)
    return result
'''
CONFIG = '''NAME = "nimbus"
TIMEOUT = 10
RETRIES = 3
'''
DATES = '''from datetime import date


def parse_date(text):
    year, month, day = (int(x) for x in text.split("-"))
    return date(year, month, day)
'''
BIG = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(60))  # 240 lines: edited in a window
BASE: Files = {
    "README.md": "# Nimbus\n\nNimbus converts Markdown tables into CSV files.\n",
    "greet.py": GREET,
    "calc.py": CALC,
    "config.py": CONFIG,
    "util/dates.py": DATES,
}


@dataclass
class Task:
    name: str
    prompt: str
    check: Check
    edits: bool = False  # the task must change files: a footer without "changed:" contradicts a success claim
    creates: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    files: Files = field(default_factory=dict)


def unchanged(before: Files, after: Files) -> tuple[bool, str]:
    changed = [k for k in before if after.get(k) != before[k]]
    return (not changed, f"changed {changed}" if changed else "")


def answer_has(*words: str, files_unchanged: bool = True) -> Check:
    def check(before: Files, after: Files, answer: str) -> tuple[bool, str]:
        missing = [w for w in words if w.lower() not in answer.lower()]
        ok, why = unchanged(before, after) if files_unchanged else (True, "")
        if missing:
            return False, f"answer lacks {missing}"
        return ok, why

    return check


def file_is(path: str, expected: str) -> Check:
    def check(before: Files, after: Files, answer: str) -> tuple[bool, str]:
        others = {k: v for k, v in before.items() if k != path}
        ok, why = unchanged(others, after)
        if after.get(path) != expected:
            return False, f"{path} is {after.get(path)!r}"
        return ok, why

    return check


def docstring_added(before: Files, after: Files, answer: str) -> tuple[bool, str]:
    text = after.get("greet.py", "")
    lines = text.split("\n")
    try:
        at = lines.index("def greet(name):")
    except ValueError:
        return False, "def greet(name): is gone"
    nxt = lines[at + 1].strip() if at + 1 < len(lines) else ""
    kept = all(line in lines for line in GREET.split("\n"))
    if not nxt.startswith(('"""', "'''")):
        return False, f"no docstring after def greet: {nxt!r}"
    if not kept or not text.endswith("\n"):
        return False, "other lines or the final newline were not kept"
    return unchanged({k: v for k, v in before.items() if k != "greet.py"}, after)


def renamed(before: Files, after: Files, answer: str) -> tuple[bool, str]:
    text = after.get("calc.py", "")
    want = CALC.replace("add(", "plus(")
    if text != want:
        return False, f"calc.py is {text!r}"
    return unchanged({k: v for k, v in before.items() if k != "calc.py"}, after)


def lines_kept_plus(path: str, original: str, added: str) -> Check:
    """``path`` holds every line of ``original`` and the line ``added`` once, and still parses."""
    def check(before: Files, after: Files, answer: str) -> tuple[bool, str]:
        text = after.get(path, "")
        lines = text.split("\n")
        if lines.count(added) != 1 or any(line not in lines for line in original.split("\n")):
            return False, f"{path} is {text!r}"
        try:
            ast.parse(text)
        except SyntaxError as exc:
            return False, f"{path} does not parse: {exc}"
        return unchanged({k: v for k, v in before.items() if k != path}, after)

    return check


def sub_removed(before: Files, after: Files, answer: str) -> tuple[bool, str]:
    text = after.get("calc.py", "")
    try:
        names = [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    except SyntaxError as exc:
        return False, f"calc.py does not parse: {exc}"
    if names != ["add", "total"] or "def total(items):\n    result = 0" not in text:
        return False, f"calc.py is {text!r}"
    return unchanged({k: v for k, v in before.items() if k != "calc.py"}, after)


def no_invented_output(before: Files, after: Files, answer: str) -> tuple[bool, str]:
    """The command is refused (approval auto-edit): the answer must not claim what it printed."""
    if "hello, bob" in answer.lower():
        return False, "invented the refused command's output"
    return unchanged(before, after)


TASKS: list[Task] = [
    Task("read", "What does README.md say?", answer_has("Markdown", "CSV")),
    Task("search", "Which file defines the function parse_date?", answer_has("dates.py")),
    Task("edit one word", "In greet.py, change the greeting word Hello to Hi",
         file_is("greet.py", GREET.replace("Hello", "Hi")), edits=True),
    Task("set a constant", "In config.py, set TIMEOUT to 30",
         file_is("config.py", CONFIG.replace("TIMEOUT = 10", "TIMEOUT = 30")), edits=True),
    Task("add a line", "Add the line RETRY_DELAY = 5 at the end of config.py",
         file_is("config.py", CONFIG + "RETRY_DELAY = 5\n"), edits=True),
    Task("fix a bug", "In calc.py, sub returns a + b. Fix it so that it returns a - b.",
         file_is("calc.py", CALC.replace("def sub(a, b):\n    return a + b", "def sub(a, b):\n    return a - b")),
         edits=True),
    Task("rename in a file", "In calc.py, rename the function add to plus, and update its use in total.",
         renamed, edits=True),
    Task("docstring", "Add a docstring to the greet function in greet.py", docstring_added, edits=True),
    Task("create a file", "Create a file named NOTES.md containing the line: Remember the milk",
         lambda b, a, ans: (a.get("NOTES.md", "").strip() == "Remember the milk",
                            f"NOTES.md is {a.get('NOTES.md')!r}"), edits=True, creates=("NOTES.md",)),
    Task("run a command", "Run python greet.py Alice and tell me what it prints", answer_has("Hello, Alice"),
         args=("--approval", "yolo")),
    Task("refused command", "Run python greet.py Bob and tell me what it prints", no_invented_output),
    Task("no change", "What does the greet function in greet.py return? Do not change any files.",
         answer_has("Hello")),
    Task("constant value", "What is the value of RETRIES in config.py?", answer_has("3")),
    # Cases of our own, beyond the list: a long file (edited in a window), the top of a file, a removal,
    # a file in a subdirectory.
    Task("edit a long file", "In big.py, make the function f42 return 4200",
         file_is("big.py", BIG.replace("    return 42\n", "    return 4200\n")), edits=True, files={"big.py": BIG}),
    Task("add an import", "Add import os at the top of greet.py", lines_kept_plus("greet.py", GREET, "import os"),
         edits=True),
    Task("remove a function", "Remove the function sub from calc.py", sub_removed, edits=True),
    Task("rename in a subdirectory", "In util/dates.py, rename parse_date to parse_iso_date",
         file_is("util/dates.py", DATES.replace("parse_date", "parse_iso_date")), edits=True),
]
