"""Child process for the kill -9 test: appends whole rounds to a session forever.

Each round is one ``append_messages`` call. After a round commits it prints ``committed N`` (N
active messages), so the parent knows a lower bound of what the database must hold. On start it
resumes the session and continues from where the last run stopped.
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agentls.agent.sessions import SessionStore
from agentls.agent.types import Message

SESSION = "crash"


def tagged(messages: list[Message], round_id: str) -> list[Message]:
    for i, m in enumerate(messages):
        m["meta"] = {"round": round_id, "part": i, "of": len(messages)}
    return messages


def next_round(last: Message | None, n: int, rng: random.Random) -> list[Message]:
    text = "x" * rng.randint(10, 3000)
    role = last["role"] if last else None
    if role in (None, "assistant") and not (last or {}).get("tool_calls"):
        return [{"role": "user", "content": f"request {n} {text}"}]
    if rng.random() < 0.6:
        ids = [f"call_{n}_{i}" for i in range(rng.randint(1, 3))]
        calls: list[Message] = [{"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "read_file", "arguments": f'{{"path": "{i}.py"}}'}}
            for i in ids]}]
        return calls + [{"role": "tool", "tool_call_id": i, "name": "read_file", "content": f"{i} {text}"}
                        for i in ids]
    return [{"role": "assistant", "content": f"answer {n} {text}"}]


async def main(db: str, seed: int) -> None:
    rng = random.Random(seed)
    async with SessionStore(db) as store:
        if await store.get_session(SESSION) is None:
            await store.create_session(session_id=SESSION, cwd="/w", model="m", system_prompt="p")
        messages = await store.load_messages(SESSION)
        count = len(messages)
        last = messages[-1] if messages else None
        print("ready", flush=True)
        n = count
        while True:
            n += 1
            batch = tagged(next_round(last, n, rng), f"{seed}-{n}")
            await store.append_messages(SESSION, batch, turn=n)
            count += len(batch)
            last = batch[-1]
            print(f"committed {count}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
