"""An MCP ``CallToolResult`` (or resource contents) as a ``ToolOutput``: what the model reads and what the
editor shows.

- text: as is;
- images: shown to the editor as ACP image content, and sent to the model beside a short note where the
  provider takes images in tool results (Anthropic); elsewhere the note alone; audio: a note;
- embedded resources: their text with the URI (a binary one as a note); resource links: name, URI, type;
- structured content: the JSON, when the server sent no text beside it; always the editor's ``rawOutput``;
- ``isError``: an error result (``error: ...``), so the model reads it as a failed call.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from .. import events
from ..tools.base import ToolOutput

NO_OUTPUT = "(the tool returned no content)"


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _resource_text(contents: Any) -> tuple[str, dict[str, Any]]:
    """One resource's contents: the text the model reads and the ACP ``resource`` block for the editor."""
    uri = str(getattr(contents, "uri", ""))
    mime = getattr(contents, "mime_type", None)
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        block: dict[str, Any] = {"uri": uri, "text": text}
        if mime:
            block["mimeType"] = mime
        return f"[resource {uri}{f' ({mime})' if mime else ''}]\n{text}", {"type": "resource", "resource": block}
    blob = getattr(contents, "blob", "") or ""
    note = f"[binary resource {uri}: {mime or 'unknown type'}, {_size(blob):,} bytes; not shown to the model]"
    block = {"uri": uri, "blob": blob}
    if mime:
        block["mimeType"] = mime
    return note, {"type": "resource", "resource": block}


MAX_IMAGE_CHARS = 4_000_000  # base64 characters of one image sent to the model (~3 MB)


def content_parts(blocks: list[Any], images: list[dict[str, Any]] | None = None
                  ) -> tuple[list[str], list[dict[str, Any]]]:
    """MCP content blocks as (texts for the model, ACP content blocks for the editor); images for the model
    (``image_url`` parts) go to ``images`` when given."""
    texts: list[str] = []
    shown: list[dict[str, Any]] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
            shown.append({"type": "text", "text": block.text})
        elif kind in ("image", "audio"):
            attached = images is not None and kind == "image" and len(block.data) <= MAX_IMAGE_CHARS
            where = "attached for models that take images, and shown to the user" if attached else "shown to the user"
            texts.append(f"[{kind}: {block.mime_type}, {_size(block.data):,} bytes; {where}]")
            shown.append({"type": kind, "data": block.data, "mimeType": block.mime_type})
            if attached and images is not None:
                images.append({"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}})
        elif kind == "resource":
            text, acp = _resource_text(block.resource)
            texts.append(text)
            shown.append(acp)
        elif kind == "resource_link":
            mime = f", {block.mime_type}" if block.mime_type else ""
            about = f": {block.description}" if block.description else ""
            texts.append(f"[resource link {block.name} <{block.uri}>{mime}{about}]")
            link: dict[str, Any] = {"type": "resource_link", "name": block.name, "uri": str(block.uri)}
            if block.mime_type:
                link["mimeType"] = block.mime_type
            shown.append(link)
    return texts, shown


def tool_output(result: Any) -> ToolOutput:
    """A ``CallToolResult`` as the loop takes it."""
    images: list[dict[str, Any]] = []
    texts, shown = content_parts(list(result.content or []), images)
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(t.strip() for t in texts):
        dumped = json.dumps(structured, ensure_ascii=False, indent=2)
        texts.append(dumped)
        shown.append({"type": "text", "text": dumped})
    text = "\n".join(texts) or NO_OUTPUT
    if result.is_error:
        text = text if text.startswith("error") else f"error: {text}"
    ui = [{"type": "content", "content": block} for block in shown] or [events.text_content(text)]
    return ToolOutput(text, is_error=bool(result.is_error), content=ui, raw_output=structured, images=images)


def resource_output(uri: str, result: Any) -> ToolOutput:
    """A ``ReadResourceResult`` as a tool result."""
    texts: list[str] = []
    shown: list[dict[str, Any]] = []
    for contents in result.contents or []:
        text, block = _resource_text(contents)
        texts.append(text)
        shown.append({"type": "content", "content": block})
    return ToolOutput("\n\n".join(texts) or f"(the resource {uri} is empty)", content=shown)
