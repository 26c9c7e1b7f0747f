"""What the checker knows while it walks a command line: where it is, what the variables, aliases and
functions hold, and how deep it has gone into nested shells."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_DEPTH = 6  # nested `sh -c`, `eval`, here-documents fed to a shell...
MAX_NODES = 20_000  # syntax nodes visited for one command line, all depths together


class Dangerous(Exception):
    """Raised with the reason as soon as one part of the command line is clearly dangerous."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Budget:
    nodes: int = 0

    def spend(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise Dangerous("it is too complex to check")


@dataclass(frozen=True)
class Source:
    """What flows into a command's input."""

    text: str | None = None  # known text: echo, printf, a here-document, a here-string
    download: bool = False  # curl, wget… somewhere upstream
    file: str | None = None  # `< path`
    roots: tuple[str, ...] | None = None  # the paths a `find` or `ls` upstream lists below


@dataclass
class State:
    root: str
    home: str
    cwd: str | None  # None once a `cd` went somewhere unknown
    depth: int = 0
    budget: Budget = field(default_factory=Budget)
    # None: unknown value; a tuple: every value it can hold (a `for` loop gives several)
    variables: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    functions: set[str] = field(default_factory=set)
    ifs_changed: bool = False
    stdin: Source | None = None  # input inherited from an enclosing pipeline or redirection
    files: dict[str, str | None] = field(default_factory=dict)  # written by this line: path -> text

    def variable(self, name: str) -> list[str] | None:
        values = self.variables.get(name)
        return list(values) if values is not None else None

    def fork(self) -> State:
        """A subshell's copy: its changes (cd, variables) do not come back."""
        return State(self.root, self.home, self.cwd, self.depth, self.budget, dict(self.variables),
                     dict(self.aliases), set(self.functions), self.ifs_changed, self.stdin, self.files)

    def nested(self) -> State:
        """A new shell (`sh -c`): the same directory, none of the variables."""
        if self.depth + 1 > MAX_DEPTH:
            raise Dangerous("it nests shells too deeply to check")
        return State(self.root, self.home, self.cwd, self.depth + 1, self.budget, stdin=self.stdin)
