"""A small model's rewrite that uses a standard-library module without importing it gets the import
(agent/tools/imports.py): the 1.5B model wrote ``math.exp`` in ComplexNumber and no ``import math``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, text
from agentls.agent.tools.imports import missing_imports, with_imports

from .conftest import AgentFactory, results

EXP = "class C:\n    def exp(self):\n        return math.exp(1)\n"


@pytest.mark.parametrize(("source", "expected"), [
    (EXP, "import math\n\n" + EXP),
    ('"""Doc."""\nfrom __future__ import annotations\nimport os\n\n\ndef f():\n    return re.sub("a", "", os.sep)\n',
     '"""Doc."""\nfrom __future__ import annotations\nimport os\nimport re\n\n\ndef f():\n'
     '    return re.sub("a", "", os.sep)\n'),
    ('"""Doc."""\ndef f():\n    return math.pi\n', '"""Doc."""\nimport math\ndef f():\n    return math.pi\n'),
    ("def f():\r\n    return math.pi\r\n", "import math\r\n\r\ndef f():\r\n    return math.pi\r\n"),
    ("def f():\n    return datetime.date.today(), math.tau\n",
     "import datetime\nimport math\n\ndef f():\n    return datetime.date.today(), math.tau\n"),
])
def test_a_used_standard_module_is_imported_after_the_imports(source: str, expected: str) -> None:
    assert with_imports(source)[0] == expected


@pytest.mark.parametrize("source", [
    "import math\ndef f():\n    return math.pi\n",
    "def f(math):\n    return math.pi\n",  # a parameter
    "math = object()\ndef f():\n    return math.pi\n",  # a global of the file's own
    "from x import *\ndef f():\n    return math.pi\n",  # a star import may bring it
    "def f():\n    return datetime.now()\n",  # the class datetime was meant: the module has no now
    "def f():\n    return foo.bar()\n",  # no standard module
    "def f():\n    return antigravity.fly()\n",  # a standard module, never imported here to check it
    "def f():\n    return math\n",  # not only as math.attr
    "def f(:\n    return math.pi\n",  # does not parse
    "def f():\n    nonlocal x\n    return math.pi\n",  # parses, but does not compile
    "class C:\n    math = 1\n    def f(self):\n        return self.math\n",
    "def f():\n    import math\n    return math.pi\n",  # imported where it is used
])
def test_nothing_is_added_where_the_name_is_defined_ambiguous_or_unsafe_to_check(source: str) -> None:
    assert missing_imports(source) == [] and with_imports(source) == (source, [])


async def test_the_first_edit_that_forgot_import_math_lands_with_it_and_says_so(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "cplx.py").write_text("class C:\n    def exp(self):\n        pass\n")
    srv.push(text(f"```python\n{EXP}```"), text("Implemented exp."))
    result = await make_agent(small_model=True).run_conversation("Implement exp in cplx.py")
    assert (workspace / "cplx.py").read_text() == "import math\n\n" + EXP
    assert "added import math: the code uses math and did not import it" in results(result)[-1]
