"""The fenced code blocks of a Markdown page (README, docs/): what the documentation tests run
or parse."""

from __future__ import annotations

import re

FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]
