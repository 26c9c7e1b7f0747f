"""The compressor (docs/loop.md §7).

Messages given to it exclude the system prompt (a leading system message is tolerated and kept).
Order of work: prune old tool results; if that is not enough, cut the transcript into a protected
head (first exchange), a middle and a protected tail (a token budget, or ``keep_last`` exchanges)
on round boundaries; summarize the middle with the auxiliary model (updating an earlier summary
rather than nesting it); fall back to a deterministic summary when the model cannot help.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

from ..truncate import cap_text
from . import anchor, boundaries, prune, summary
from .tokens import estimate_message, estimate_each, estimate_messages
from ..transcript import repair, violations
from ..types import Message, text_of

log = logging.getLogger("agentls.compress")

Summarize = Callable[[str], Awaitable[str]]

MARGIN = 0.2  # stop pruning once the estimate is this far under the target
HEAD_RATIO = 0.1  # the first exchange beyond its first round is protected up to this share
MIN_SAVING = 0.10  # anti-thrash: a pass that saves less than this is a weak pass
WEAK_PASSES_TO_TRIP = 2
MIN_SCALE, MAX_SCALE = 0.5, 4.0  # bounds of the learned provider-tokens / estimate ratio


@dataclass(frozen=True)
class CompressionResult:
    messages: list[Message]
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    summary: str | None = None
    summarized: bool = False
    fallback: bool = False
    pruned_only: bool = False
    preview: bool = False
    pinned: int | None = None  # where the message named by ``compress(pin=...)`` is now (None: not asked, or lost)

    @property
    def saved_ratio(self) -> float:
        if self.tokens_before <= 0:
            return 0.0
        return max(0.0, (self.tokens_before - self.tokens_after) / self.tokens_before)

    @property
    def changed(self) -> bool:
        return not self.preview and (self.summary is not None or self.pruned_only)


class Compressor:
    def __init__(self, context_window: int, threshold: float = 0.5, tail_ratio: float = 0.2,
                 digest_chars: int = 2000) -> None:
        if context_window <= 0:
            raise ValueError(f"context_window must be positive, got {context_window}")
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        self._estimates: dict[int, tuple[Message, int]] = {}
        self.context_window = context_window
        self.threshold = threshold
        self.tail_ratio = tail_ratio
        self.digest_chars = digest_chars
        self._weak_passes = 0
        self._scale = 1.0  # provider tokens per estimated token, learned in should_compress

    @property
    def target_tokens(self) -> int:
        return int(self.threshold * self.context_window)

    @property
    def thrashing(self) -> bool:
        """True once two automatic passes in a row each saved under 10%."""
        return self._weak_passes >= WEAK_PASSES_TO_TRIP

    def _estimate(self, messages: Sequence[Message], *, trim: bool = True) -> int:
        """``estimate_messages`` with each message's figure kept while it lives (messages never change); ``trim``
        False for a part of the transcript (the rest stays cached)."""
        cache = self._estimates
        total = 0
        for message in messages:
            hit = cache.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, estimate_message(message))
                cache[id(message)] = hit
            total += hit[1]
        if trim and len(cache) > 2 * len(messages) + 16:
            live = {id(m) for m in messages}
            for key in [k for k in cache if k not in live]:
                del cache[key]
        return total

    def reset(self) -> None:
        self._weak_passes = 0

    def should_compress(self, messages: Sequence[Message], last_prompt_tokens: int | None,
                        *, extra_tokens: int = 0, sent: int | None = None) -> bool:
        """Whether an automatic pass is due (False once anti-thrash has tripped).

        Pressure is the provider's last ``prompt_tokens`` when known, else the estimate of
        ``messages`` plus ``extra_tokens`` (system prompt, tool schemas). When both are known the
        larger wins: the provider's count predates the newest round, whose tool results may be big.
        The provider's count is matched against the estimate of what that request sent (its first ``sent``
        messages), never of rounds added since: a small model's agent-made rounds (runs, repairs) come between
        two requests of the transcript, and a ratio taken against them made a pass that was due look needless.
        """
        if self.thrashing:
            return False
        estimated = self._estimate(messages) + extra_tokens
        if last_prompt_tokens:
            base = estimated if sent is None or not 0 < sent < len(messages) else \
                self._estimate(messages[:sent], trim=False) + extra_tokens
            if base > 0:
                self._scale = min(MAX_SCALE, max(MIN_SCALE, last_prompt_tokens / base))
            return max(last_prompt_tokens, estimated) >= self.target_tokens
        return estimated * self._scale >= self.target_tokens

    def _record(self, before: int, after: int, automatic: bool) -> None:
        saved = (before - after) / before if before > 0 else 0.0
        if saved >= MIN_SAVING:
            self._weak_passes = 0
        elif automatic:
            self._weak_passes += 1
            if self._weak_passes == WEAK_PASSES_TO_TRIP:  # log the trip once
                log.warning("automatic compression disabled: %d passes in a row saved under %d%%",
                            self._weak_passes, int(MIN_SAVING * 100))

    async def compress(
        self,
        messages: Sequence[Message],
        *,
        summarize: Summarize | None,
        focus: str | None = None,
        keep_last: int | None = None,
        aggressive: bool = False,
        preview: bool = False,
        automatic: bool = False,
        pin: int | None = None,
    ) -> CompressionResult:
        """``pin``: the index of the running turn's user message. It is never summarised away (kept verbatim,
        merged after the summary when it falls in the middle), and ``pinned`` says where it is in the result."""
        src, pin = anchor.mark(messages, pin)
        res = await self._compress(src, summarize=summarize, focus=focus, keep_last=keep_last,
                                   aggressive=aggressive, preview=preview, automatic=automatic, pin=pin)
        if pin is None:
            return res
        out, at = anchor.take(res.messages)
        if at is None:
            log.warning("compression lost the turn's user message (index %d)", pin)
        return replace(res, messages=out, pinned=at)

    async def _compress(self, src: list[Message], *, summarize: Summarize | None, focus: str | None,
                        keep_last: int | None, aggressive: bool, preview: bool, automatic: bool,
                        pin: int | None) -> CompressionResult:
        tokens = estimate_each(src)
        before = sum(tokens)
        stop_below = int(self.target_tokens * (1 - MARGIN))
        if automatic and before * self._scale <= stop_below:
            return self._finish(src, src, before, before, automatic, preview, pruned_only=False,
                                summary_text=None)
        work = list(src)  # copy-on-write: changed entries are replaced, never edited
        window = self.context_window
        cut = boundaries.plan(src, tokens, head_budget=int(HEAD_RATIO * window),
                              tail_budget=int(self.tail_ratio * window), keep_last=keep_last, pin=pin)
        calls = prune.calls_by_id(src)

        # 1. Prune old tool results outside the protected tail.
        digest_upto = cut.tail_start
        if aggressive:
            digest_upto = max(cut.tail_start, boundaries.last_tool_round_start(src))
        pruned = prune.dedupe(work, tokens, digest_upto, calls)
        pruned += prune.digest(work, tokens, digest_upto, self.digest_chars, calls)
        after_prune = sum(tokens)
        middle_idx = cut.middle()
        if not middle_idx or (automatic and after_prune * self._scale <= stop_below):
            return self._finish(src, work, before, after_prune, automatic, preview,
                                pruned_only=pruned > 0, summary_text=None)

        # 2. The middle, with any earlier summary taken apart so it is updated, not nested.
        previous: list[str] = []
        covered = 0
        middle: list[Message] = []
        for i in middle_idx:
            body, count, rest = summary.split_summary(src[i])
            if body is not None:  # an earlier summary: its text is the base, its count carries over
                previous.append(body)
                covered += count
            if rest is not None:  # an ordinary message, or the request merged into a summary
                middle.append(rest)
                covered += 1
        merge_index = cut.pinned_user
        if merge_index is None and cut.tail_start < len(src) and src[cut.tail_start].get("role") == "user":
            merge_index = cut.tail_start
        merge_with: Message | None = None
        if merge_index is not None:
            body, count, merge_with = summary.split_summary(src[merge_index])
            if body is not None:
                previous.append(body)
                covered += count
        prev_text = "\n\n".join(previous) or None
        latest = text_of(merge_with) if merge_with is not None and cut.pinned_user is not None else None

        # 3./4. The summary: the model's, else the deterministic fallback.
        text: str | None = None
        used_model = False
        summary_cap = max(2000, int(window * 0.2))  # characters, for the model's and the assembled one alike
        if summarize is not None and not preview:
            prompt = summary.build_prompt(middle, calls, previous=prev_text, focus=focus,
                                          latest_request=latest, max_chars=max(16_000, window * 2))
            try:
                reply = await summarize(prompt)
            except Exception as exc:
                log.warning("summary call failed (%s: %s); using the fallback summary", type(exc).__name__, exc)
            else:
                if isinstance(reply, str) and reply.strip():
                    text = cap_text(reply.strip(), summary_cap)[0]
                    used_model = True
                else:
                    log.warning("summary call returned nothing; using the fallback summary")
        if text is None:  # never longer than the model's may be: each pass would otherwise nest a longer one
            text = summary.fallback_summary(middle, calls, previous=prev_text, max_chars=summary_cap)
        message = summary.summary_message(text, covered, merge_with)

        out = work[: cut.head_end] + [message]
        rest_start = cut.tail_start + (1 if merge_index == cut.tail_start else 0)
        out.extend(work[rest_start:])
        if violations(out):
            log.warning("compression produced an invalid transcript; repairing it: %s", violations(out)[:3])
            out = repair(out)
        after = estimate_messages(out)
        return self._finish(src, out, before, after, automatic, preview, pruned_only=False,
                            summary_text=None if preview else text, used_model=used_model)

    def _finish(self, src: list[Message], out: list[Message], before: int, after: int, automatic: bool,
                preview: bool, *, pruned_only: bool, summary_text: str | None,
                used_model: bool = False) -> CompressionResult:
        if preview:
            return CompressionResult(messages=[cast(Message, dict(m)) for m in src], tokens_before=before,
                                     tokens_after=after, messages_before=len(src), messages_after=len(out),
                                     preview=True, pruned_only=pruned_only and summary_text is None)
        self._record(before, after, automatic)
        shared = {id(m) for m in src}
        fresh = [cast(Message, dict(m)) if id(m) in shared else m for m in out]
        return CompressionResult(
            messages=fresh, tokens_before=before, tokens_after=after, messages_before=len(src),
            messages_after=len(out), summary=summary_text, summarized=summary_text is not None and used_model,
            fallback=summary_text is not None and not used_model, pruned_only=pruned_only,
        )
