"""A session's node files, each checked on its own (its findings placed at line and column),
and the nodes whose shape lets the checks of the whole session use them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from continuity_checks.checks.sessions import layout, nodes
from continuity_checks.checks.sessions.nodes import Node
from continuity_checks.core import strict_json
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable


class Loaded:
    """A session's node files: the nodes whose shape allows the DAG checks, and the ids every
    node file names (a broken node still exists: edges to it are not dangling). One session at
    a time is held."""

    def __init__(self, snapshot: Snapshot, max_depth: int) -> None:
        self.snapshot = snapshot
        self.max_depth = max_depth
        self.nodes: list[Node] = []
        self.named: set[str] = set()

    def place(self, findings: list[Finding]) -> list[Finding]:
        """``findings`` with the line and column of their pointer in the node file (read again:
        positions are worked out only for the rare file that has a finding)."""
        placed = []
        docs: dict[str, strict_json.Document | None] = {}
        for finding in findings:
            if finding.line is None and finding.pointer is not None:
                if finding.path not in docs:
                    docs[finding.path] = _document(self.snapshot, finding.path, self.max_depth)
                doc = docs[finding.path]
                if doc is not None:
                    line, column = doc.position(finding.pointer)
                    finding = finding._replace(line=line, column=column)
            placed.append(finding)
        return placed


def _document(snapshot: Snapshot, path: str, max_depth: int) -> strict_json.Document | None:
    data = snapshot.read(path)
    if isinstance(data, Unreadable):
        return None
    doc = strict_json.load(data, max_depth=max_depth)
    return doc if isinstance(doc, strict_json.Document) else None


class NodeFile(NamedTuple):
    """One node file checked on its own: its findings (positioned) and the node, when its shape
    lets the DAG checks use it."""

    findings: list[Finding]
    node: Node | None


def check_node_file(path: str, data: bytes, snapshot: Snapshot, max_depth: int) -> NodeFile:
    """The common case (a valid node) costs one strict parse without positions
    (``strict_json.accepts``); the loader with positions runs only for a file with a problem,
    on the bytes in hand."""
    accepted = strict_json.accepts(data, max_depth)
    doc: strict_json.Document | None = None
    if accepted is None:
        loaded = strict_json.load(data, max_depth=max_depth)
        if isinstance(loaded, strict_json.Problem):
            return NodeFile([loaded.finding(path)], None)
        doc = loaded
        accepted = (doc.text, doc.value)
    found, node = nodes.check(path, accepted[1], _unplaced(path), snapshot)
    if found:
        if doc is None:
            loaded = strict_json.load(data, max_depth=max_depth)
            doc = loaded if isinstance(loaded, strict_json.Document) else None
        found = [_placed(finding, doc) for finding in found]
    return NodeFile(found, node)


def _placed(finding: Finding, doc: strict_json.Document | None) -> Finding:
    if doc is None or finding.line is not None or finding.pointer is None:
        return finding
    line, column = doc.position(finding.pointer)
    return finding._replace(line=line, column=column)


def load_nodes(
    snapshot: Snapshot,
    directory: str,
    max_depth: int,
    findings: list[Finding],
    held: Mapping[str, NodeFile] | None = None,
    listing: list[str] | Unreadable | None = None,
) -> Loaded:
    """Every node file of the session, checked on its own; the nodes whose shape allows more.
    A node file in ``held`` was checked already, from the bytes the engine read: not read again
    (nor is history/ listed again when its ``listing`` is given)."""
    loaded = Loaded(snapshot, max_depth)
    if listing is None:
        listing = snapshot.list(directory + "history")
    if isinstance(listing, Unreadable):
        return loaded
    found = loaded.nodes
    for name in listing:
        if not name.endswith(".json"):
            continue
        named = layout.NODE_NAME.match(name)
        if named is not None:
            loaded.named.add(named[3])
        path = f"{directory}history/{name}"
        result = held.get(path) if held is not None else None
        if result is None:
            data = snapshot.read(path)
            if isinstance(data, Unreadable):
                findings.append(data.finding())
                continue
            result = check_node_file(path, data, snapshot, max_depth)
        findings.extend(result.findings)
        if result.node is not None:
            found.append(result.node)
    return loaded


def _unplaced(path: str) -> nodes.At:
    def at(rule: Rule, pointer: str, message: str) -> Finding:
        return rule.finding(path, message, pointer=pointer or None)

    return at
