"""Memory topics (spec §2.11): footnotes that cite the v2 source archives, and the blocks that
cite the footnotes ([53], [55])."""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote

from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.memory import BLOCK_ID, linked
from continuity_checks.core.display import quote as show_quote
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot, Unreadable

FOOTNOTE = re.compile(
    r"^\[\^([^\]]+)\]: Time: `(?:\d{4}|\d{4}-\d{2}|\d{4}-\d{2}-\d{2}|undated)`; Sources: (.+)$"
)
LINK = re.compile(r"\[([^\]]+)\]\(([^)#\s]+)#([^)\s]+)\)")
CITE = re.compile(r"\[\^([^\]]+)\](?!:)")


class Topic(NamedTuple):
    blocks: list[tuple[str, int]]  # block id, line
    findings: list[Finding]


def check_topic(path: str, data: bytes, snapshot: Snapshot) -> Topic:
    """[53] footnote grammar and resolvable sources; [55] each block cites a resolvable source."""
    findings: list[Finding] = []
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    directory = path.rpartition("/")[0]
    resolvable: dict[str, bool] = {}
    anchors: dict[str, set[str] | str | None] = {}
    for number, line in enumerate(lines, 1):
        if not line.startswith("[^") or "]:" not in line:
            continue
        match = FOOTNOTE.match(line)
        if match is None:
            findings.append(
                ss.TOPIC.finding(
                    path,
                    "expected a footnote [^id]: Time: `<date>`; Sources: "
                    "[<ref>](<path>#<anchor>), …",
                    line=number,
                )
            )
            continue
        links = list(LINK.finditer(match[2]))
        if not links or ", ".join(m[0] for m in links) != match[2]:
            findings.append(
                ss.TOPIC.finding(
                    path,
                    'expected sources as [<ref>](<path>#<anchor>) separated by ", "',
                    line=number,
                )
            )
            continue
        ok = False
        for link in links:
            target = _join(directory, link[2])
            if target not in anchors:
                anchors[target] = _anchors(snapshot, target)
            found = anchors[target]
            if isinstance(found, str):
                findings.append(
                    ss.TOPIC.finding(
                        path,
                        f"expected the source archive {show_quote(link[2])} as a file, found "
                        f"{found}",
                        line=number,
                    )
                )
            elif found is None:
                findings.append(
                    ss.TOPIC.finding(
                        path,
                        f"expected the source archive {show_quote(link[2])} to exist, found "
                        "nothing there",
                        line=number,
                    )
                )
            elif link[3] not in found:
                findings.append(
                    ss.TOPIC.finding(
                        path,
                        f"expected the anchor {show_quote(link[3])} in {show_quote(link[2])}, "
                        "found none",
                        line=number,
                    )
                )
            else:
                ok = True
        resolvable[match[1]] = ok
    blocks: list[tuple[str, int]] = []
    for number, line in enumerate(lines, 1):
        block = BLOCK_ID.search(line)
        if block is None or line.startswith("[^"):
            continue
        blocks.append((block[1], number))
        cited = CITE.findall(line)
        if not any(resolvable.get(c) for c in cited):
            findings.append(
                ss.UNSOURCED_BLOCK.finding(
                    path,
                    f"expected block ^{block[1]} to cite a footnote with a resolvable source, "
                    "found none",
                    line=number,
                )
            )
    return Topic(blocks, findings)


def _join(directory: str, relative: str) -> str:
    parts = directory.split("/") if directory else []
    for part in unquote(relative).split("/"):
        if part == "..":
            if parts:
                parts.pop()
            else:
                return "/" + relative  # climbs out of the root: the snapshot refuses it
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _anchors(snapshot: Snapshot, path: str) -> set[str] | str | None:
    """The anchors of the archive at ``path``; None when there is none, or why it is not read:
    OpenProgram never writes an archive as a symlink (SS211), and what one leads to is not the
    archive, so a topic's link through it is judged by the link alone."""
    if linked(snapshot, path):
        return "a symlink"
    data = snapshot.read(path)
    if isinstance(data, Unreadable):
        return None
    text = data.decode("utf-8", "replace")
    return set(re.findall(r'<a id="([^"]+)"></a>', text)) | set(
        re.findall(r'id="(d\d+-\d+)"', text)
    )
