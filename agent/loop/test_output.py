"""What a test run printed, read back: how many tests ran and failed, and the failures in a few lines (for the
small model's repair, agent/loop/test_check.py). unittest's, pytest's and Node's TAP reporter's own summaries
only (``node --test --test-reporter=tap``): output that has none of them (a missing pytest, a test file that does
not parse) is ``None``, never a guess."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_FAILURES = 4  # failures named in the repair's request (the whole output is in the transcript above it)
MAX_FAILURE_CHARS = 320

_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(OK|FAILED \(([^)]*)\))", re.MULTILINE)
_PYTEST_END = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s", re.MULTILINE)
_PYTEST_COUNT = re.compile(r"(\d+) (failed|passed|errors?|skipped|xfailed|xpassed|deselected)")
_UNITTEST_HEAD = re.compile(r"^(FAIL|ERROR): (\S+)", re.MULTILINE)
_PYTEST_HEAD = re.compile(r"^_{3,} (.+?) _{3,}$", re.MULTILINE)
_TAP_COUNT = re.compile(r"^# (tests|fail|cancelled) (\d+)$", re.MULTILINE)
_TAP_NOT_OK = re.compile(r"^not ok \d+ - (.+)$", re.MULTILINE)
_SEPARATOR = re.compile(r"^(?:={20,}|-{20,})$", re.MULTILINE)


@dataclass(frozen=True)
class TestRun:
    ran: int
    failed: int  # failures and errors
    failures: tuple[str, ...]  # "test_basic: self.assertEqual(...): AssertionError: 'PNG ' != 'PNG'"

    @property
    def passed(self) -> bool:
        return self.failed == 0 and self.ran > 0

    def summary(self) -> str:
        return f"{self.failed} of {self.ran} tests failed" if self.ran else "the tests did not run"


def read_run(output: str) -> TestRun | None:
    return _unittest(output) or _pytest(output) or _tap(output)


def _unittest(output: str) -> TestRun | None:
    ran, end = _UNITTEST_RAN.search(output), _UNITTEST_END.search(output)
    if ran is None or end is None:
        return None
    failed = sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d+)", end.group(2) or ""))
    heads = list(_UNITTEST_HEAD.finditer(output))
    failures = []
    for i, head in enumerate(heads[:MAX_FAILURES]):
        stop = heads[i + 1].start() if i + 1 < len(heads) else (ran.start() if ran.start() > head.end() else len(output))
        failures.append(_one(head.group(2), _SEPARATOR.sub("", output[head.end():stop])))
    return TestRun(int(ran.group(1)), failed, tuple(failures))


def _pytest(output: str) -> TestRun | None:
    ends = list(_PYTEST_END.finditer(output))
    if not ends:
        return None
    end = ends[-1]
    counts = {kind.rstrip("s"): int(n) for n, kind in _PYTEST_COUNT.findall(end.group(1))}
    failed = counts.get("failed", 0) + counts.get("error", 0)
    ran = failed + counts.get("passed", 0)
    heads = list(_PYTEST_HEAD.finditer(output))
    failures = []
    for i, head in enumerate(heads[:MAX_FAILURES]):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(output)
        body = output[head.end():stop]
        failures.append(_one(head.group(1).split(".")[-1], "\n".join(
            x for x in body.splitlines() if not x.startswith("=") and "short test summary" not in x)))
    return TestRun(ran, failed, tuple(failures))


def _one(name: str, body: str) -> str:
    """A failure in a line: its test, the test's line that failed, the exception's last line."""
    lines = [x.rstrip() for x in body.splitlines() if x.strip()]
    raised = [x for x in lines if re.match(r"^(E\s+)?[\w.]*(Error|Exception|Failure|Exit|Timeout)\b", x)]
    marked = [x for x in lines if x.startswith("E ")]
    code = [x.strip() for x in lines if x.startswith("    ") and not x.lstrip().startswith(("File ", "^", "~"))]
    last = (raised[-1] if raised else marked[0] if marked else lines[-1] if lines else "failed").removeprefix("E")
    last = last.strip()
    name = name.split(".")[-1].rstrip(")")
    text = f"{name}: {code[-1]}: {last}" if code else f"{name}: {last}"
    return text if len(text) <= MAX_FAILURE_CHARS else text[:MAX_FAILURE_CHARS - 3] + "..."


def _tap(output: str) -> TestRun | None:
    counts = {kind: int(n) for kind, n in _TAP_COUNT.findall(output)}
    if "tests" not in counts or "fail" not in counts:
        return None
    failures = []
    for head in list(_TAP_NOT_OK.finditer(output))[:MAX_FAILURES]:
        block = output[head.end():].split("\n  ...", 1)[0]  # its YAML block
        error = re.search(r"^  error: [|>]?-?\n((?:(?:    .*|[ \t]*)\n)*)", block + "\n", re.MULTILINE)
        said = " ".join(x.strip() for x in (error.group(1) if error else "").splitlines() if x.strip())
        one_line = re.search(r"^  error: '(.*)'$", block, re.MULTILINE)
        if not said and one_line is not None:
            said = _tap_load_error(output[:head.start()]) if one_line.group(1) == "test failed" else one_line.group(1)
        location = re.search(r"^  location: '([^']*)'", block, re.MULTILINE)
        where = f" ({location.group(1).rsplit('/', 1)[-1]})" if location else ""
        text = f"{head.group(1).strip()}{where}: {said or 'failed'}"
        failures.append(text if len(text) <= MAX_FAILURE_CHARS else text[:MAX_FAILURE_CHARS - 3] + "...")
    return TestRun(counts["tests"], counts["fail"] + counts.get("cancelled", 0), tuple(failures))


def _tap_load_error(before: str) -> str:
    """The error a test file that did not load printed, as TAP comments: ``SyntaxError: ... (/w/acronym.js:3)``."""
    comments = [x[2:] for x in before.splitlines() if x.startswith("# ")]
    raised = next((i for i, x in enumerate(comments) if re.match(r"^\w*(Error|Exception)\b", x)), None)
    if raised is None:
        return "test failed"
    at = next((x for x in comments[:raised] if re.search(r":\d+$", x)), None)
    return comments[raised].strip() + (f" ({at.strip()})" if at else "")
