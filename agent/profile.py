"""What differs for the model an agent talks to, decided once from its settings (docs/architecture.md,
"The model profile"): a small model's compact prompt and tools, its edits said in words, the pre-read, the
JSON tool grammar, the defaults of a model that runs on this machine. The loop and the tools ask the
profile; nothing else reads the ``small_model`` setting."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings

if TYPE_CHECKING:
    from .tools.base import Tool

LOCAL_MAX_TOKENS = 2048  # a small model that loops would otherwise write to the end of its context (minutes)
SMALL_RESAMPLES = 2  # asks again, sampling, when a small model repeats a call that just failed (loop/resample.py)


@dataclass(frozen=True)
class ModelProfile:
    name: str  # "general" or "small"
    # The compact system prompt and tool schemas (agent/local/prompt.py: each tool's ``short`` and
    # ``small_arguments``), instead of the general prompt (agent/context/prompt.py) and the full schemas
    compact: bool
    described_edits: bool  # edit_file {path, change}: the model then writes the new text (docs/loop.md §9.8)
    preread: bool  # the files a request names are read before the first call (agent/loop/preread.py)
    resamples: int  # a reply repeating a call that just failed is asked for again, up to this often
    # Held to acting (tool_mode json): a tool call required after a failed edit, tools ended once every file
    # the request names is changed, write_file held back when the request creates nothing (loop/request.py)
    must_act: bool
    continues_cut_answers: bool  # an answer cut at the output cap is continued (a small model's is a loop)
    # The file tools' guards for a model that repeats itself (docs/loop.md §9.7): a code fence around a file
    # is taken off, a fragment or a template's echo is refused, an edit that breaks Python is refused
    guarded_writes: bool
    delegate: bool  # whether the agent may hand a task to a child agent (delegate_task)
    json_tools: bool = False  # tool calls go through a JSON grammar (tool_mode json)
    max_tokens: int | None = None  # when the max_tokens setting is not set
    temperature: float | None = None  # when the temperature setting is not set
    model_titles: bool = True  # whether the titles setting "model" may spend a model call on a title
    # Whether a compression's summary is the model's (else assembled from the messages: a 1.5B model's summary
    # invented constraints, and cost a call over the whole transcript); an ``aux_model`` set writes it anyway
    model_summaries: bool = True
    first_edit: bool = False  # a change request of one file: the agent's own edit_file of it first (loop/first_edit.py)
    check_tests: bool = False  # ... then its tests run, and what fails is repaired (loop/test_check.py)

    @classmethod
    def of(cls, settings: Settings) -> ModelProfile:
        """The profile of ``settings``: small when ``small_model`` says so, by default for a model on this
        machine (provider local), which also calls tools through the grammar unless ``tool_mode`` says
        otherwise, does not sample, stops at ``LOCAL_MAX_TOKENS`` and names no session (docs/loop.md §9.7)."""
        local = settings.resolved_provider() == "local"
        small = local if settings.small_model is None else settings.small_model
        return replace(SMALL if small else GENERAL,
                       json_tools=(settings.tool_mode or ("json" if local else "native")) == "json",
                       max_tokens=LOCAL_MAX_TOKENS if local else None, temperature=0.0 if local else None,
                       model_titles=not local, first_edit=small and settings.first_edit,
                       check_tests=small and settings.check_tests)

    async def system_prompt(self, root: Path, root_context: str | None, extra: str | None,
                            tools: Sequence[Tool], workflows: str | None = None) -> str:
        """The session's system prompt (built once, stored): the compact one lists the workspace's files (and
        no skills or memory: ``workflows``, agent/workflows, is for the general prompt)."""
        if self.compact:
            import anyio.to_thread

            from .local.prompt import compact_system_prompt, listed_files

            files = await anyio.to_thread.run_sync(listed_files, root)
            return compact_system_prompt(root=root, root_context=root_context, extra=extra, files=files)
        from .context.prompt import build_system_prompt

        return build_system_prompt(root=root, root_context=root_context, extra=extra,
                                   tool_names=[t.name for t in tools], tools=tools, workflows=workflows)


GENERAL = ModelProfile("general", compact=False, described_edits=False, preread=False, resamples=0,
                       must_act=False, continues_cut_answers=True, guarded_writes=False, delegate=True)
SMALL = ModelProfile("small", compact=True, described_edits=True, preread=True, resamples=SMALL_RESAMPLES,
                     must_act=True, continues_cut_answers=False, guarded_writes=True, delegate=False, first_edit=True,
                     check_tests=True, model_summaries=False)
