"""HTML to Markdown for the model: markdownify over BeautifulSoup, without scripts, styles and chrome. A
page too deep or too large for that (agent/web/survey.py) comes as plain text with a note instead."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

from .survey import survey

# Elements whose content is never text a reader sees.
DROPPED = ("script", "style", "noscript", "template", "iframe", "svg", "canvas", "object", "embed", "head")
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRAILING = re.compile(r"[ \t]+\n")


def html_to_markdown(html: str) -> tuple[str | None, str]:
    """(the page's title, its body as Markdown, or as plain text with a note when it is too complex)."""
    found = survey(html)
    if found.too_complex:
        return found.title or None, f"{found.note()}\n\n{found.text}"
    soup = BeautifulSoup(html, "html.parser")
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text().split()) if title_tag is not None else ""
    for name in DROPPED:
        for tag in soup.find_all(name):
            tag.decompose()
    converter = MarkdownConverter(heading_style="ATX", bullets="-", strip=["img"], escape_misc=False)
    text = converter.convert_soup(soup)
    text = _BLANK_RUNS.sub("\n\n", _TRAILING.sub("\n", text)).strip()
    return title or None, text
