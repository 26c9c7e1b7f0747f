"""User prompts: a string, or ACP ``ContentBlock``s (text, resources, links, images), as message content."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from .host import Host

MessageContent = str | list[dict[str, Any]]

MAX_RESOURCE_CHARS = 100_000  # of one embedded resource or mentioned file
MAX_LINKS = 20  # mentioned files read for one prompt


class PromptError(ValueError):
    pass


def bounded(text: str, limit: int = MAX_RESOURCE_CHARS) -> str:
    """``text`` cut to ``limit`` characters (at a line end when one is near), saying how much is left out."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", int(limit * 0.9), limit)
    head = text[: cut if cut > 0 else limit]
    return (f"{head}\n[... cut: {len(text) - len(head):,} more characters ({len(text):,} in all) are not shown; "
            "read the file for the rest]")


def _resource_text(block: dict[str, Any]) -> str:
    res = block.get("resource") or {}
    uri = str(res.get("uri", ""))
    text = res.get("text")
    if isinstance(text, str):
        return f'<resource uri="{uri}">\n{bounded(text)}\n</resource>'
    return f'<resource uri="{uri}" mimeType="{res.get("mimeType", "")}">(binary content not shown)</resource>'


def normalize_prompt(prompt: Any) -> MessageContent:
    """Message content for a prompt. Text-only prompts become one string; images keep a part list."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, dict):
        prompt = [prompt]
    if not isinstance(prompt, list) or not prompt:
        raise PromptError("the prompt must be a non-empty string or a list of content blocks")
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for i, block in enumerate(prompt):
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            raise PromptError(f"prompt[{i}] must be a content block object")
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "resource":
            texts.append(_resource_text(block))
        elif kind == "resource_link":
            note = block.get("_agentls_note")  # why inline_links could not read it
            tail = f">({note})</resource_link>" if isinstance(note, str) else " />"
            texts.append(f"<resource_link uri=\"{block.get('uri', '')}\" name=\"{block.get('name', '')}\"{tail}")
        elif kind == "image":
            data, mime = block.get("data"), block.get("mimeType", "image/png")
            if not isinstance(data, str):
                raise PromptError(f"prompt[{i}] is an image without base64 'data'")
            images.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}})
        elif kind == "audio":
            texts.append("(an audio clip was attached; audio is not supported)")
        else:
            raise PromptError(f"prompt[{i}] has an unknown content block type {kind!r}")
    text = "\n\n".join(t for t in texts if t)
    if not images:
        if not text.strip():
            raise PromptError("the prompt is empty")
        return text
    return ([{"type": "text", "text": text}] if text else []) + images


# Reads the text a resource_link points at (through the editor where it can); raises with the reason.
LinkReader = Callable[[str], Awaitable[str]]


async def inline_links(prompt: Any, read: LinkReader) -> Any:
    """The prompt with its ``resource_link`` blocks read (``read(uri)``) and put in as embedded ``resource``
    blocks, bounded like them; a link that cannot be read stays a link, with the reason. Anything else,
    and a prompt that is not a list of blocks, is returned as it is."""
    if not isinstance(prompt, list) or not any(isinstance(b, dict) and b.get("type") == "resource_link"
                                               for b in prompt):
        return prompt
    out: list[Any] = []
    read_count = 0
    for block in prompt:
        if not (isinstance(block, dict) and block.get("type") == "resource_link"):
            out.append(block)
            continue
        uri = block.get("uri")
        if not isinstance(uri, str) or not uri:
            out.append(block)
            continue
        if read_count >= MAX_LINKS:
            out.append({**block, "_agentls_note": f"not read: more than {MAX_LINKS} files were mentioned"})
            continue
        read_count += 1
        try:
            text = await read(uri)
        except Exception as exc:  # the link stays, with why it was not read
            out.append({**block, "_agentls_note": f"not read: {exc}"})
            continue
        resource: dict[str, Any] = {"uri": uri, "text": text}  # bounded with every resource
        if isinstance(block.get("mimeType"), str):
            resource["mimeType"] = block["mimeType"]
        out.append({"type": "resource", "resource": resource})
    return out


async def prompt_content(prompt: Any, read: LinkReader) -> MessageContent:
    """The one pass a prompt makes through here: its links read (``inline_links``), then ``normalize_prompt``."""
    return normalize_prompt(await inline_links(prompt, read))


MAX_LINK_LINES = 5000  # lines of a mentioned file read (through the editor, bounded like read_file)
MAX_LINK_LINE_CHARS = 2000


def host_reader(host: Host, root: Path) -> LinkReader:
    """Reads ``file://`` links inside ``root`` through ``host``: the editor's buffer or file system where the
    face has them (``fs/read_text_file`` with a line limit on ACP), else the disk; at most ``MAX_LINK_LINES``."""
    from .paths import OutsideWorkspace, resolve_in_workspace

    async def read(uri: str) -> str:
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            raise ValueError(f"only file links are read, not {parsed.scheme or 'this'} links")
        try:
            path = resolve_in_workspace(root, Path(unquote(parsed.path)))
        except OutsideWorkspace:
            raise ValueError("the file is outside the session's workspace") from None
        try:
            window = await host.read_window(path, 1, MAX_LINK_LINES, MAX_LINK_LINE_CHARS)
        except FileNotFoundError:
            raise ValueError("there is no such file") from None
        except IsADirectoryError:
            raise ValueError("it is a directory") from None
        except UnicodeDecodeError:
            raise ValueError("it is not a UTF-8 text file") from None
        if window.binary or any("\x00" in line for line in window.lines[:200]):
            raise ValueError("it is a binary file")
        text = "\n".join(window.lines) + ("\n" if window.lines else "")
        if window.more:
            text += f"[... the file goes on after line {window.offset + len(window.lines) - 1}; read it for the rest]"
        return text

    return read
