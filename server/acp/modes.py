"""Session modes (the approval policy, and ``plan``) and config options (the model, the thinking budget, the
approval mode)."""

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
    "plan": ("Plan", "Read and search only, and write a plan; edits and commands are refused until you approve "
                     "the plan (exit_plan) or switch modes."),
}
MODEL_OPTION = "model"
THINKING_OPTION = "thinking_budget"
APPROVAL_OPTION = "approval"
THINKING_CHOICES = {"off": None, "4096": 4096, "16384": 16384, "32768": 32768}


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
        session.agent.set_mode(mode_id)
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


def _thinking(session: LiveSession) -> str:
    budget = session.agent.thinking_budget if session.agent is not None else None
    return next((k for k, v in THINKING_CHOICES.items() if v == budget), str(budget))


def config_options(session: LiveSession) -> list[dict[str, Any]]:
    approval = {"id": APPROVAL_OPTION, "name": "Approval", "category": "mode", "type": "select",
                "description": "What asks before it runs (the same as the session's mode).",
                "currentValue": current_mode(session),
                "options": [{"value": k, "name": name} for k, (name, _) in MODES.items()]}
    current = current_model(session)
    choices = model_choices(session)
    if current is None or not choices:
        return [approval]
    thinking = _thinking(session)
    budgets = list(THINKING_CHOICES) + ([thinking] if thinking not in THINKING_CHOICES else [])
    return [{"id": MODEL_OPTION, "name": "Model", "category": "model", "type": "select",
             "description": "The model used from the next turn on.", "currentValue": current,
             "options": [{"value": m, "name": m} for m in choices]},
            {"id": THINKING_OPTION, "name": "Thinking budget", "category": "thought_level", "type": "select",
             "description": "Tokens of extended thinking per model call (Anthropic models; others ignore it).",
             "currentValue": thinking, "options": [{"value": b, "name": b} for b in budgets]},
            approval]


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
    known = (MODEL_OPTION, THINKING_OPTION, APPROVAL_OPTION)
    if config_id not in known:
        raise invalid_params(f"unknown config option {config_id!r}; agentls has {', '.join(map(repr, known))}")
    if not isinstance(value, str):
        raise invalid_params(f"the {config_id} option takes one of its values, as a string")
    if config_id == MODEL_OPTION:
        await set_model(session, sink, value)
        return config_options(session)
    if config_id == APPROVAL_OPTION:
        await set_mode(session, sink, value)
    else:
        if value not in THINKING_CHOICES:
            raise invalid_params(f"unknown thinking budget {value!r}; choose one of {', '.join(THINKING_CHOICES)}")
        if session.agent is None:
            raise invalid_params("this session has no model configured yet")
        session.agent.thinking_budget = THINKING_CHOICES[value]
    await sink.send({"sessionUpdate": "config_option_update", "configOptions": config_options(session)})
    return config_options(session)
