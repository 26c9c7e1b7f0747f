"""What differs for the model an agent talks to, decided once from its settings (docs/architecture.md,
"The model profile"): a small model's compact prompt and tools, the JSON tool grammar, the defaults of a
model that runs on this machine."""

from __future__ import annotations

from dataclasses import dataclass

from .config import Settings

LOCAL_MAX_TOKENS = 2048  # a small model that loops would otherwise write to the end of its context (minutes)


@dataclass(frozen=True)
class ModelProfile:
    # A small model (docs/loop.md §9.7): the compact system prompt and tool schemas, edits said in words
    # (§9.8), the files a request names read before the first call, its calls resampled and held to acting
    small: bool
    json_tools: bool  # tool calls go through a JSON grammar (tool_mode json), which can rule out invented paths
    max_tokens: int | None  # when the max_tokens setting is not set
    temperature: float | None  # when the temperature setting is not set
    model_titles: bool  # whether the titles setting "model" may spend a model call on a session's title
    delegate: bool  # whether the agent may hand a task to a child agent (delegate_task)

    @classmethod
    def of(cls, settings: Settings) -> ModelProfile:
        """The profile of ``settings``. A model on this machine (provider local) is a small model unless
        ``small_model`` says otherwise, calls tools through the grammar unless ``tool_mode`` says otherwise,
        does not sample and stops at ``LOCAL_MAX_TOKENS``, and names no session (it has better things to do)."""
        local = settings.resolved_provider() == "local"
        small = local if settings.small_model is None else settings.small_model
        return cls(small=small, json_tools=(settings.tool_mode or ("json" if local else "native")) == "json",
                   max_tokens=LOCAL_MAX_TOKENS if local else None, temperature=0.0 if local else None,
                   model_titles=not local, delegate=not small)
