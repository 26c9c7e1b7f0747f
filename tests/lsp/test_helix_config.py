"""editors/helix/languages.toml: it parses, and what it sends is a working configuration.

(Without Helix: test_commands.py drives the server with Helix 25.01's client capabilities and this file's
config table. Real Helix with this file: tests/editors/test_helix.py.)
"""

from __future__ import annotations

import tomllib

from agentls.server.lsp.settings import load, split_options

from .conftest import HELIX_LANGUAGES, helix_config

# Helix 25.01.1's own servers for these languages (its languages.toml), which the file must keep.
HELIX_DEFAULTS = {
    "python": ["ruff", "jedi", "pylsp"], "rust": ["rust-analyzer"], "go": ["gopls", "golangci-lint-lsp"],
    "javascript": ["typescript-language-server"], "jsx": ["typescript-language-server"],
    "typescript": ["typescript-language-server"], "tsx": ["typescript-language-server"], "c": ["clangd"],
    "cpp": ["clangd"], "java": ["jdtls"], "ruby": ["solargraph"], "bash": ["bash-language-server"],
    "markdown": ["marksman", "markdown-oxide"], "toml": ["taplo"],
}


def test_the_helix_languages_file_parses_and_adds_agentls_to_each_language() -> None:
    with HELIX_LANGUAGES.open("rb") as fh:
        data = tomllib.load(fh)
    server = data["language-server"]["agentls"]
    assert server["command"] == "agentls" and server["args"] == ["lsp"]
    assert server["timeout"] >= 300
    languages = {lang["name"]: lang["language-servers"] for lang in data["language"]}
    assert languages == {name: [*servers, "agentls"] for name, servers in HELIX_DEFAULTS.items()}


def test_its_config_is_valid_initialization_options() -> None:
    config = helix_config()
    core, _options, problems = split_options(config)
    settings, more = load(None, core)
    assert problems == [] and more == []
    assert settings.approval == "auto-edit"  # Helix cannot ask: "ask" would refuse every edit
