"""Session modes (the approval policy) and config options (the model)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import invalid_params
from ..runtime.live import LiveSession

if TYPE_CHECKING:
    from .updates import UpdateSink

MODES: dict[str, tuple[str, str]] = {
    "ask": ("Ask", "Ask before every file edit and every command."),
    "auto-edit": ("Auto-edit", "Apply file edits without asking; ask before running commands."),
    "yolo": ("YOLO", "Run edits and commands without asking (clearly dangerous commands still ask)."),
}
MODEL_OPTION = "model"


def mode_state(session: LiveSession) -> dict[str, Any]:
    return {"currentModeId": current_mode(session),
            "availableModes": [{"id": k, "name": name, "description": desc} for k, (name, desc) in MODES.items()]}


def current_mode(session: LiveSession) -> str:
    return session.agent.policy.mode if session.agent is not None else session.mode


async def set_mode(session: LiveSession, sink: UpdateSink, mode_id: str) -> None:
    if mode_id not in MODES:
        raise invalid_params(f"unknown mode {mode_id!r}; the modes are {', '.join(MODES)}")
    session.mode = mode_id
    if session.agent is not None:
        session.agent.policy.mode = mode_id
    await sink.send({"sessionUpdate": "current_mode_update", "currentModeId": mode_id})


def current_model(session: LiveSession) -> str | None:
    if session.agent is not None:
        return session.agent.model or None
    return session.models[0] if session.models else None


def model_choices(session: LiveSession) -> list[str]:
    """The configured model, its fallbacks on the same endpoint, and any model picked with ``/model``."""
    names = list(session.models)
    current = current_model(session)
    if current and current not in names:
        names.insert(0, current)
    return names


def config_options(session: LiveSession) -> list[dict[str, Any]]:
    current = current_model(session)
    choices = model_choices(session)
    if current is None or not choices:
        return []
    return [{"id": MODEL_OPTION, "name": "Model", "category": "model", "type": "select",
             "description": "The model used from the next turn on.", "currentValue": current,
             "options": [{"value": m, "name": m} for m in choices]}]


async def set_model(session: LiveSession, sink: UpdateSink, model: str, *, allow_new: bool = False) -> None:
    """Switch the session's model for its next turn and tell the client (``config_option_update``)."""
    model = model.strip()
    if not model or (not allow_new and model not in model_choices(session)):
        raise invalid_params(f"unknown model {model!r}; choose one of "
                             f"{', '.join(model_choices(session)) or '(none)'}")
    if session.agent is None:
        raise invalid_params("this session has no model configured yet")
    if model not in session.models:
        session.models.append(model)
    session.agent.model = model
    await sink.send({"sessionUpdate": "config_option_update", "configOptions": config_options(session)})


async def set_config_option(session: LiveSession, sink: UpdateSink, config_id: str,
                            value: str | bool) -> list[dict[str, Any]]:
    if config_id != MODEL_OPTION:
        raise invalid_params(f"unknown config option {config_id!r}; agentls has {MODEL_OPTION!r}")
    if not isinstance(value, str):
        raise invalid_params("the model option takes a model name")
    await set_model(session, sink, value)
    return config_options(session)
