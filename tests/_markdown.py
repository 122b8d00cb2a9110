"""Reading the project's Markdown: fenced examples and heading anchors."""

import re
from pathlib import Path

FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w{}-]*)")


def python_examples(text: str) -> str:
    """Return `text` with every line outside ```python fences blanked.

    Line numbers are kept, so doctest reports the line of the Markdown file.
    """
    kept: list[str] = []
    fence, language = None, ""
    for line in text.splitlines():
        match = FENCE.match(line.strip())
        if fence is None and match:
            fence, language = match.group(1), match.group(2)
            kept.append("")
        elif fence is not None and line.strip() == fence:
            fence = None
            kept.append("")
        else:
            kept.append(line if fence is not None and language == "python" else "")
    return "\n".join(kept) + "\n"


def stray_prompts(text: str) -> list[int]:
    """Return the lines holding a ``>>>`` prompt outside a ```python fence."""
    inside = python_examples(text).splitlines()
    return [
        number
        for number, (line, kept) in enumerate(
            zip(text.splitlines(), inside, strict=True), start=1
        )
        if line.lstrip().startswith(">>>") and not kept
    ]


def slug(heading: str) -> str:
    """Return the anchor of a heading (MyST's and GitHub's rule)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Return the heading anchors and explicit ``(label)=`` targets of a file."""
    found: set[str] = set()
    fence = None
    for line in path.read_text(encoding="utf-8").splitlines():
        match = FENCE.match(line.strip())
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            found.add(slug(heading.group(1)))
        label = re.match(r"^\(([\w\-]+)\)=\s*$", line)
        if label:
            found.add(label.group(1))
    return found
