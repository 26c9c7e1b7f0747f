"""User prompts: a string, or ACP ``ContentBlock``s (text, resources, links, images), as message content."""

from __future__ import annotations

from typing import Any

MessageContent = str | list[dict[str, Any]]


class PromptError(ValueError):
    pass


def _resource_text(block: dict[str, Any]) -> str:
    res = block.get("resource") or {}
    uri = str(res.get("uri", ""))
    text = res.get("text")
    if isinstance(text, str):
        return f'<resource uri="{uri}">\n{text}\n</resource>'
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
            texts.append(f"<resource_link uri=\"{block.get('uri', '')}\" name=\"{block.get('name', '')}\" />")
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
