"""Secrets never reach logs or trajectories."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from agentls.agent.redact import RedactingFilter, redact
from agentls.agent.trajectory import TrajectoryWriter

OPENAI = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
ANTHROPIC = "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWXYZ-abcdef"


@pytest.mark.parametrize(("text", "gone"), [
    (f"key is {OPENAI}.", OPENAI),
    (f"ANTHROPIC={ANTHROPIC}", ANTHROPIC),
    ("Authorization: Bearer abc.def.ghi-jkl_mno", "abc.def.ghi"),
    ("curl -H 'Authorization: token ghp_16C7e42F292c6912E7710c838347Ae178B4a' x", "ghp_16C7e42F"),
    ('{"api_key": "s3cr3t-value-123", "model": "gpt-4o"}', "s3cr3t-value-123"),
    ("x-api-key: 0123456789abcdef0123", "0123456789abcdef0123"),
    ('headers={"x-api-key": "abcdef123456"}', "abcdef123456"),
    ("OPENAI_API_KEY=plain-looking-value", "plain-looking-value"),
    ("password: hunter2hunter2", "hunter2hunter2"),
    ("use bearer eyJhbGciOiJIUzI1NiJ9.payload.sig now", "eyJhbGciOiJIUzI1NiJ9"),
    ("https://user:p4ssw0rd@example.com/repo.git", "p4ssw0rd"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
])
def test_redact_patterns(text: str, gone: str) -> None:
    out = redact(text)
    assert gone not in out and "[REDACTED]" in out


def test_redact_keeps_ordinary_text() -> None:
    text = 'prompt_tokens: 12, max_tokens=5, "tokens": 3, the task-specific tokenizer, skills, sk-short'
    assert redact(text) == text
    assert redact('{"api_key": null}') == '{"api_key": null}'


def test_redact_given_secrets_longest_first() -> None:
    assert redact("value abcd-1234-xyz and abcd", ["abcd", "abcd-1234-xyz"]) == "value [REDACTED] and [REDACTED]"
    assert redact("tiny a b", ["a", ""]) == "tiny a b"  # too short to redact safely


def test_filter_on_a_real_logger() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(secrets=["my-private-value"]))
    logger = logging.getLogger("agentls.test.redact")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        logger.info("calling with key %s and %s", OPENAI, "my-private-value")
        try:
            raise ValueError(f"bad key {ANTHROPIC}")
        except ValueError:
            logger.exception("request failed")
        logging.getLogger("agentls.test.redact.child").warning("Authorization: Bearer abcdefghijkl")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert OPENAI not in text and ANTHROPIC not in text and "my-private-value" not in text
    assert "abcdefghijkl" not in text and text.count("[REDACTED]") >= 4
    assert "calling with key" in text and "ValueError" in text


async def test_trajectory_is_jsonl_and_redacted(tmp_path: Path) -> None:
    path = tmp_path / "traj" / "out.jsonl"
    writer = TrajectoryWriter(path, secrets=["custom-secret-42"])
    messages = [{"role": "user", "content": f"my key is {OPENAI} and custom-secret-42"},
                {"role": "assistant", "content": "ok", "meta": {"note": "Bearer abcdefghijklmnop"}}]
    for i in range(2):
        await writer.write(session_id="s1", task_id=f"t{i}", model="gpt-4o", messages=messages,  # type: ignore[arg-type]
                           usage={"prompt_tokens": 10, "completion_tokens": 2, "cached_tokens": 0},
                           exit_reason="text_response")
    raw = path.read_text()
    assert OPENAI not in raw and "custom-secret-42" not in raw and "abcdefghijklmnop" not in raw
    records = [json.loads(line) for line in raw.splitlines()]
    assert [r["task_id"] for r in records] == ["t0", "t1"]
    assert set(records[0]) == {"session_id", "task_id", "model", "messages", "usage", "exit_reason", "ts"}
    assert records[0]["usage"]["prompt_tokens"] == 10 and records[0]["messages"][1]["content"] == "ok"
