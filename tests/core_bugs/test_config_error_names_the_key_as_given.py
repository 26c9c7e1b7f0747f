"""Core bug: a bad setting's ``ConfigError`` names the internal field, not the key the user wrote.

Editors send camelCase ``initializationOptions`` (PROTOCOL.md: ``maxIterations``, ``apiKeyEnv``...),
but ``merge`` reports ``setting 'max_iterations' has a bad value 'many'``, so the message points at a
key that appears nowhere in the user's configuration. Expected: ``exc.key`` and the message use the key
as given. The LSP face works around it (``server/lsp/settings.py: _as_given``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.config import ConfigError, Settings, merge


def test_the_error_names_the_key_as_written() -> None:
    with pytest.raises(ConfigError) as info:
        merge(Settings(), {"maxIterations": "many"}, "initializationOptions")
    assert info.value.key == "maxIterations"
    assert "'maxIterations'" in str(info.value)
