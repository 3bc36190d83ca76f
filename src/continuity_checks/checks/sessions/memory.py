"""Memory provenance (spec §2.11): v2 source archives, topic footnotes that cite them, and the
proposal's Provenance records (seed 003) when a workspace has any.

An archive is ``memory/sources/<quote(provider)>/_v2/<quote(thread)>.md``: a marker line, an
empty line, then frames of an anchor, a ``source-id``, optional ``speaker-id`` and
``source-meta``, a ``record-lines:N`` count, N record lines and an empty line. OpenProgram's
scanner stops at the first bad frame, so everything after it is lost to readers: the file must
be complete.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import NamedTuple
from urllib.parse import quote, unquote

from continuity_checks.checks.sessions import rules as ss
from continuity_checks.core.display import quote as show_quote
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot, Unreadable

MARKER = "<!-- openprogram-source-archive:v2 -->"
ANCHOR = re.compile(r'^<a id="source-([0-9a-f]{16})"></a>$')
SOURCE_ID = re.compile(r"^<!-- source-id:(.+) -->$")
SPEAKER_ID = re.compile(r"^<!-- speaker-id:(.*) -->$")
SOURCE_META = re.compile(r"^<!-- source-meta:([A-Za-z0-9_-]*) -->$")
RECORD_LINES = re.compile(r"^<!-- record-lines:(\d+) -->$")
RECORD = re.compile(r"^\[[^\]]+\] (.+?): ")
META_KEYS = {"authority_tier", "principal_id", "speaker_kind", "trust_state", "version"}
FOOTNOTE = re.compile(
    r"^\[\^([^\]]+)\]: Time: `(?:\d{4}|\d{4}-\d{2}|\d{4}-\d{2}-\d{2}|undated)`; Sources: (.+)$"
)
LINK = re.compile(r"\[([^\]]+)\]\(([^)#\s]+)#([^)\s]+)\)")
BLOCK_ID = re.compile(r" \^([A-Za-z0-9-]+)$")
CITE = re.compile(r"\[\^([^\]]+)\](?!:)")


class Frame(NamedTuple):
    ref: str
    anchor: str
    line: int  # of its anchor
    body: str  # the record after "] <label>: ", its lines joined


def speaker_canonical(text: str) -> bool:
    return quote(unquote(text), safe="").replace("-", "%2D") == text


def meta_canonical(text: str) -> str | None:
    """Why a source-meta value is not canonical, or None."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError):
        return "expected unpadded base64url of JSON"
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != text:
        return "expected unpadded base64url"
    if not isinstance(value, dict) or set(value) != META_KEYS:
        return f"expected the keys {', '.join(sorted(META_KEYS))}"
    if json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() != raw:
        return "expected sorted compact JSON"
    if value["authority_tier"] not in (None, "owner", "paired") or value["trust_state"] not in (
        "pending",
        "trusted",
    ):
        return "expected authority_tier null, owner or paired and trust_state pending or trusted"
    if value["version"] != 1 or type(value["version"]) is not int:
        return "expected version 1"
    return None


def scan(path: str, data: bytes) -> tuple[list[Frame], list[Finding]]:
    """The frames of a v2 archive, and its SS139 findings (at most one: where reading stops)."""
    frames: list[Frame] = []

    def bad(line: int, message: str) -> tuple[list[Frame], list[Finding]]:
        return frames, [ss.ARCHIVE.finding(path, message, line=line)]

    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return bad(1, "expected UTF-8 text, found bytes that are not")
    if lines[0] != MARKER:
        return bad(1, f"expected the marker {MARKER}, found {show_quote(lines[0])}")
    if len(lines) < 2 or lines[1] != "":
        return bad(2, "expected an empty second line, found text")
    provider_dir, _, stem = path.rpartition("/_v2/")
    provider_dir = provider_dir.rpartition("/")[2]
    thread = unquote(stem.removesuffix(".md"))
    seen: dict[str, int] = {}
    i = 2
    while i < len(lines):
        if lines[i] == "" and all(rest == "" for rest in lines[i:]):
            break  # the end of the file
        start = i + 1
        anchor = ANCHOR.match(lines[i])
        if anchor is None:
            return bad(
                start,
                'expected a frame anchor <a id="source-<16 hex>"></a>, found '
                f"{show_quote(lines[i])}",
            )
        i += 1
        source = SOURCE_ID.match(lines[i]) if i < len(lines) else None
        if source is None:
            return bad(i + 1, "expected <!-- source-id:<ref> --> after the anchor")
        ref = source[1]
        if hashlib.sha256(ref.encode("utf-8")).hexdigest()[:16] != anchor[1]:
            return bad(
                start,
                f"expected the anchor source-{hashlib.sha256(ref.encode()).hexdigest()[:16]} of "
                f"{show_quote(ref)}, found source-{anchor[1]}",
            )
        parts = ref.split("/")
        if len(parts) < 3 or unquote(provider_dir) != parts[0] or thread != parts[1]:
            return bad(
                i + 1,
                "expected a ref <provider>/<thread>/<id> matching the file's path, found "
                f"{show_quote(ref)}",
            )
        if ref in seen:
            return bad(
                i + 1,
                f"expected each source id once, found {show_quote(ref)} again (first at line "
                f"{seen[ref]})",
            )
        seen[ref] = start
        i += 1
        speaker = SPEAKER_ID.match(lines[i]) if i < len(lines) else None
        if speaker is not None:
            if not speaker_canonical(speaker[1]):
                return bad(
                    i + 1,
                    "expected a canonically percent-encoded speaker id, found "
                    f"{show_quote(speaker[1])}",
                )
            i += 1
        meta = SOURCE_META.match(lines[i]) if i < len(lines) else None
        if meta is not None:
            problem = meta_canonical(meta[1])
            if problem is not None:
                return bad(i + 1, f"source-meta: {problem}")
            i += 1
        count = RECORD_LINES.match(lines[i]) if i < len(lines) else None
        if count is None or int(count[1]) < 1:
            return bad(i + 1, "expected <!-- record-lines:N --> with N >= 1")
        n = int(count[1])
        i += 1
        record = lines[i : i + n]
        if len(record) < n:
            return bad(i + 1, f"expected {n} record lines, found {len(record)}")
        head = RECORD.match(record[0])
        if head is None:
            return bad(i + 1, "expected a record line [<time>] <speaker label>: <text>")
        body = "\n".join([record[0][head.end() :], *record[1:]])
        i += n
        if i >= len(lines) or lines[i] != "":
            return bad(i + 1, "expected an empty line after the record")
        i += 1
        frames.append(Frame(ref, anchor[1], start, body))
    return frames, []


# --- topics ---------------------------------------------------------------------------------------


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


def linked(snapshot: Snapshot, path: str) -> bool:
    """Whether ``path`` or a directory on the way to it is a symlink, whether or not it leads
    anywhere (what it leads to must not change the answer)."""
    parts = path.split("/")
    for end in range(1, len(parts) + 1):
        step = "/".join(parts[:end])
        if not snapshot.exists(step):
            return False
        if snapshot.resolve(step) != step:
            return True
    return False
