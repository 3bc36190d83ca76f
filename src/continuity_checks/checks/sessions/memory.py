"""Memory provenance (spec §2.11): v2 source archives, and a workspace's cross-file checks —
archives against the sessions they quote, block ids across its topics, the proposal's
Provenance records (seed 003) against the sessions they point to, and the frames that node
markers promise ([52]). Topic files on their own are in :mod:`topics`.

An archive is ``memory/sources/<quote(provider)>/_v2/<quote(thread)>.md``: a marker line, an
empty line, then frames of an anchor, a ``source-id``, optional ``speaker-id`` and
``source-meta``, a ``record-lines:N`` count, N record lines and an empty line. OpenProgram's
scanner stops at the first bad frame, so everything after it is lost to readers: the file must
be complete.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import NamedTuple
from urllib.parse import quote, unquote

from continuity_checks.checks.sessions import layout
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.nodes import Node
from continuity_checks.core import strict_json
from continuity_checks.core.display import quote as show_quote
from continuity_checks.core.display import show
from continuity_checks.core.family import Claimed
from continuity_checks.core.findings import Finding
from continuity_checks.core.hashing import sha256_hex
from continuity_checks.core.snapshot import Snapshot, Unreadable

MARKER = "<!-- openprogram-source-archive:v2 -->"
ANCHOR = re.compile(r'^<a id="source-([0-9a-f]{16})"></a>$')
SOURCE_ID = re.compile(r"^<!-- source-id:(.+) -->$")
SPEAKER_ID = re.compile(r"^<!-- speaker-id:(.*) -->$")
SOURCE_META = re.compile(r"^<!-- source-meta:([A-Za-z0-9_-]*) -->$")
RECORD_LINES = re.compile(r"^<!-- record-lines:(\d+) -->$")
RECORD = re.compile(r"^\[[^\]]+\] (.+?): ")
META_KEYS = {"authority_tier", "principal_id", "speaker_kind", "trust_state", "version"}
BLOCK_ID = re.compile(r" \^([A-Za-z0-9-]+)$")


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
        expected = sha256_hex(ref.encode("utf-8"))[:16]
        if expected != anchor[1]:
            return bad(
                start,
                f"expected the anchor source-{expected} of "
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


# --- a workspace: what its files name elsewhere -------------------------------------------------


def check_markers(
    snapshot: Snapshot, directory: str, marked: list[Node], state: str | None, sid: str
) -> list[Finding]:
    """[52] ``marked`` nodes (marked as written to their state directory's memory workspace)
    of the session ``sid`` at ``directory`` have a frame in the archive of ``state``, the state
    directory keeping the session: a home-root session's own, a project-bound session's any
    state directory of the checked tree whose locations.json (read through the path-map) lists
    the session at this place. With none in the tree (``state`` None) the frames cannot be
    looked for: SS150 says so, once for the session."""
    if state is None:
        where = (
            "the session is the checked root"
            if not directory
            else "no state directory of the checked tree lists it in sessions/locations.json"
        )
        return [
            ss.MARKER_NOT_JUDGED.finding(
                marked[0].path,
                f"expected the memory workspace of {show_quote(marked[0].marker)} in the checked "
                f"tree to look for the frames of {len(marked)} marked node(s), found none: "
                f"{where}",
                pointer="/metadata/memory_written_scriptorium",
            )
        ]
    data = snapshot.read(state + "memory/.scriptorium/workspace-id")
    if isinstance(data, Unreadable):
        return []  # no scriptorium workspace: no marker names this state directory's memory
    workspace = data.decode("utf-8", "replace").strip()
    archive = f"{state}memory/sources/openprogram/_v2/{quote(sid, safe='')}.md"
    content = snapshot.read(archive)
    if isinstance(content, Unreadable):
        refs: set[str] = set()
    else:
        frames, broken = scan(archive, content)
        if broken:
            return []  # the archive's own finding (SS139) is the cause
        refs = {f.ref for f in frames}
    findings = []
    for node in marked:
        if node.marker == workspace and f"openprogram/{sid}/{node.id}" not in refs:
            findings.append(
                ss.MEMORY_MARKER.finding(
                    node.path,
                    f"expected a frame openprogram/{sid}/{node.id} in {archive}, found none",
                    pointer="/metadata/memory_written_scriptorium",
                )
            )
    return findings


class Workspace:
    """A state directory's memory: archives against the sessions they quote, block ids, and the
    proposal's provenance records against the sessions they point to."""

    def __init__(
        self, snapshot: Snapshot, state: str, max_depth: int, located: dict[str, str | None]
    ) -> None:
        self.snapshot = snapshot
        self.state = state
        self.max_depth = max_depth
        #: each session id the state directory's locations.json places, with its directory
        #: (None: not resolvable); the registries' findings come from their own check
        self.located = located
        self._listings: dict[str, dict[str, str] | None] = {}

    def nodes_of(self, sid: str) -> dict[str, str] | None:
        """Node id -> file path of session ``sid``, or None when it has no session here."""
        if sid not in self._listings:
            directory = self.located.get(sid, f"{self.state}sessions/{sid}/")
            found: dict[str, str] | None = None
            if directory is not None:
                listing = self.snapshot.list(directory + "history")
                if not isinstance(listing, Unreadable):
                    found = {}
                    for name in listing:
                        match = layout.NODE_NAME.match(name)
                        if match is not None:
                            found[match[3]] = f"{directory}history/{name}"
            self._listings[sid] = found
        return self._listings[sid]

    def check(self, items: list[Claimed], *, block_ids: bool = True) -> list[Finding]:
        """The cross-file findings of ``items`` (claimed memory files of this workspace), and
        with ``block_ids`` those of the workspace's block ids (every topic file: once per run,
        however many parts of the run bring topic files)."""
        findings: list[Finding] = []
        for item in items:
            if item.kind == layout.ARCHIVE:
                findings.extend(self._archive(item.path))
            elif item.kind == layout.RECORDS:
                findings.extend(self._records(item.path))
        if block_ids and any(item.kind == layout.TOPIC for item in items):
            findings.extend(self._block_ids())
        return findings

    def _archive(self, path: str) -> list[Finding]:
        data = self.snapshot.read(path)
        if isinstance(data, Unreadable):
            return []
        findings = []
        for frame in scan(path, data)[0]:
            parts = frame.ref.split("/")
            if len(parts) != 3 or parts[0] != "openprogram":
                continue
            sid, nid = parts[1], parts[2]
            nodes_here = self.nodes_of(sid)

            def bad(message: str, _line: int = frame.line) -> Finding:
                return ss.ARCHIVE_REF.finding(path, message, line=_line)

            if nodes_here is None:
                findings.append(
                    bad(
                        f"expected the session {show_quote(sid)} of {show_quote(frame.ref)}, "
                        "found none (deleted?)"
                    )
                )
                continue
            node_path = nodes_here.get(nid)
            if node_path is None:
                findings.append(
                    bad(
                        f"expected the node {show_quote(nid)} in session {show_quote(sid)}, "
                        "found none"
                    )
                )
                continue
            content = self.snapshot.read(node_path)
            accepted = (
                None
                if isinstance(content, Unreadable)
                else strict_json.accepts(content, self.max_depth)
            )
            value = accepted[1] if accepted is not None else None
            if not isinstance(value, dict):
                continue  # the node file's own findings say why
            if value.get("role") not in ("user", "llm"):
                findings.append(
                    bad(
                        f"expected a user or llm node, found the {show(value.get('role'))} node "
                        f"{show_quote(nid)}"
                    )
                )
            elif value.get("output") != frame.body:
                findings.append(
                    bad(
                        f"expected the record to equal the output of {node_path}, found "
                        "different text"
                    )
                )
        return findings

    def _block_ids(self) -> list[Finding]:
        seen: dict[str, str] = {}
        findings = []
        stack = [self.state + "memory/topics"]
        files = []
        while stack:
            directory = stack.pop()
            listing = self.snapshot.list(directory)
            if isinstance(listing, Unreadable):
                continue
            for name in listing:
                path = f"{directory}/{name}"
                if self.snapshot.is_dir(path):
                    stack.append(path)
                elif name.endswith(".md"):
                    files.append(path)
        for path in sorted(files):
            data = self.snapshot.read(path)
            if isinstance(data, Unreadable):
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
                block = BLOCK_ID.search(line)
                if block is None or line.startswith("[^"):
                    continue
                where = f"{path}:{number}"
                if block[1] in seen:
                    findings.append(
                        ss.TOPIC.finding(
                            path,
                            f"expected block id ^{block[1]} once in the workspace, found it also "
                            f"at {seen[block[1]]}",
                            line=number,
                        )
                    )
                else:
                    seen[block[1]] = where
        return findings

    def _records(self, path: str) -> list[Finding]:
        data = self.snapshot.read(path)
        if isinstance(data, Unreadable):
            return []
        findings = []
        for number, line in enumerate(data.split(b"\n"), 1):
            accepted = strict_json.accepts(line, self.max_depth) if line.strip() else None
            record = accepted[1] if accepted is not None else None
            provenance = record.get("provenance") if isinstance(record, dict) else None
            if not isinstance(provenance, dict) or not isinstance(
                provenance.get("session_id"), str
            ):
                continue
            sid = provenance["session_id"]
            nodes_here = self.nodes_of(sid)
            if nodes_here is None:
                findings.append(
                    ss.PROVENANCE_REF.finding(
                        path,
                        f"expected the session {show_quote(sid)}, found none (deleted?)",
                        line=number,
                        pointer="/provenance/session_id",
                    )
                )
                continue
            ids = provenance.get("node_ids")
            for index, nid in enumerate(ids if isinstance(ids, list) else []):
                if isinstance(nid, str) and nid not in nodes_here:
                    findings.append(
                        ss.PROVENANCE_REF.finding(
                            path,
                            f"expected the node {show_quote(nid)} in session "
                            f"{show_quote(sid)}, found none",
                            line=number,
                            pointer=f"/provenance/node_ids/{index}",
                        )
                    )
        return findings
