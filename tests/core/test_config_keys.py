"""A bad setting's ``ConfigError`` names the key as the user wrote it (camelCase from editors)."""

from __future__ import annotations

import pytest

from agentls.agent.config import ConfigError, Settings, merge


def test_the_error_names_the_key_as_written() -> None:
    with pytest.raises(ConfigError) as info:
        merge(Settings(), {"maxIterations": "many"}, "initializationOptions")
    assert info.value.key == "maxIterations"
    assert "'maxIterations'" in str(info.value)
