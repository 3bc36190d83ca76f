"""A session's nodes as one DAG (unique ids and seqs, edges, cycles, the write invariant, turn
shape), and its meta.json against them."""

from __future__ import annotations

from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.nodes import Node
from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json
from continuity_checks.core.display import quote
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.strict_json import located


def check_dag(
    all_nodes: list[Node], findings: list[Finding], named: set[str] | frozenset[str] = frozenset()
) -> dict[str, Node]:
    """Unique ids and seqs, the ROOT node, edges, cycles, the write invariant and turn shape;
    the nodes by id (the first of each id by seq)."""
    all_nodes = sorted(all_nodes, key=lambda n: (n.seq, n.path))
    by_id = _unique(all_nodes, findings)
    _dangling(all_nodes, by_id, named, findings)
    _cycle_findings(by_id, findings)
    _write_invariant(all_nodes, findings)
    _turn_shape(all_nodes, by_id, findings)
    return by_id


def _unique(all_nodes: list[Node], findings: list[Finding]) -> dict[str, Node]:
    """Each id and each seq once (``all_nodes`` sorted by seq); the nodes by id."""
    by_id: dict[str, Node] = {}
    by_seq: dict[int, Node] = {}
    for node in all_nodes:
        first = by_id.get(node.id)
        if first is not None:
            findings.append(
                ss.DUPLICATE_NODE.finding(
                    node.path,
                    f"expected a unique node id, found {quote(node.id)} also in {first.path}",
                    pointer="/id",
                )
            )
        else:
            by_id[node.id] = node
        same = by_seq.get(node.seq)
        if same is not None:
            findings.append(
                ss.DUPLICATE_NODE.finding(
                    node.path,
                    f"expected a unique seq, found {node.seq} also in {same.path}",
                    pointer="/seq",
                )
            )
        else:
            by_seq[node.seq] = node
    return by_id


def _dangling(
    all_nodes: list[Node],
    by_id: dict[str, Node],
    named: set[str] | frozenset[str],
    findings: list[Finding],
) -> None:
    """Each predecessor and caller names a node of the session (a spawn root's caller may be in
    another session)."""
    for node in all_nodes:
        pred = node.predecessor
        if pred is not None and pred not in by_id and pred not in named and pred != "ROOT":
            findings.append(
                ss.DANGLING_EDGE.finding(
                    node.path,
                    f"expected the predecessor to name a node of the session, found {quote(pred)}",
                    pointer="/predecessor",
                )
            )
        if (
            node.caller not in ("", "ROOT")
            and node.caller not in by_id
            and node.caller not in named
            and not node.spawn
        ):
            findings.append(
                ss.DANGLING_EDGE.finding(
                    node.path,
                    'expected the caller to be "", "ROOT" or a node of the session, found '
                    f"{quote(node.caller)}",
                    pointer="/caller",
                )
            )


def _cycle_findings(by_id: dict[str, Node], findings: list[Finding]) -> None:
    """The predecessor chain and the caller chain each end."""
    for field in ("predecessor", "caller"):
        edges = {n.id: edge for n in by_id.values() if (edge := getattr(n, field))}
        for cycle in _cycles(edges):
            start = min((by_id[i] for i in cycle), key=lambda n: (n.seq, n.path))
            loop = " -> ".join(quote(i, 30) for i in [*cycle, cycle[0]])
            findings.append(
                ss.EDGE_CYCLE.finding(
                    start.path,
                    f"expected the {field} chain to end, found a cycle {loop}",
                    pointer=f"/{field}",
                )
            )


def _write_invariant(all_nodes: list[Node], findings: list[Finding]) -> None:
    """Every conversational node but the first has a predecessor (``all_nodes`` sorted by seq)."""
    conversational = [
        n
        for n in all_nodes
        if n.role in ("user", "llm") and n.caller in ("", "ROOT") and n.input_null
        and n.id != "ROOT"
    ]  # fmt: skip
    first_id = conversational[0].id if conversational else None
    for node in conversational:
        if node.predecessor is None and not node.spawn and not node.summary and node.id != first_id:
            findings.append(
                ss.WRITE_INVARIANT.finding(
                    node.path,
                    f"expected a predecessor for the {node.role} node {quote(node.id)}, found none",
                    pointer="/predecessor",
                )
            )


def _turn_shape(all_nodes: list[Node], by_id: dict[str, Node], findings: list[Finding]) -> None:
    """A tool node's caller is an llm node, a top-level llm node follows a user node, and a
    top-level user node's caller is ROOT."""
    for node in all_nodes:
        if node.tool_call and node.role == "code":
            caller = by_id.get(node.caller)
            if caller is not None and caller.role != "llm":
                findings.append(
                    ss.TOOL_SHAPE.finding(
                        node.path,
                        f"expected an llm caller for a tool node, found the {caller.role} node "
                        f"{quote(caller.id)}",
                        pointer="/caller",
                    )
                )
        if node.role == "llm" and node.caller == "" and not node.attach and node.predecessor:
            previous = by_id.get(node.predecessor)
            if previous is not None and previous.role != "user":
                findings.append(
                    ss.TURN_SHAPE.finding(
                        node.path,
                        "expected a user node as the predecessor of a top-level llm node, found "
                        f"the {previous.role} node {quote(previous.id)}",
                        pointer="/predecessor",
                    )
                )
        if (
            node.role == "user"
            and node.id != "ROOT"
            and node.caller == ""
            and node.input_null
            and not node.spawn
            and not node.summary
        ):
            findings.append(
                ss.TURN_SHAPE.finding(
                    node.path,
                    'expected caller "ROOT" on a top-level user node, found ""',
                    pointer="/caller",
                )
            )


def _cycles(edges: dict[str, str]) -> list[list[str]]:
    """Each cycle of a graph where every node has at most one outgoing edge, once: in the order
    of the walks from each node of ``edges`` that first reach it, starting where that walk
    enters it."""
    walk_of: dict[str, int] = {}  # each node reached, and the walk that reached it first
    cycles = []
    for walk, node in enumerate(edges):
        current: str | None = node
        while current is not None and current not in walk_of:
            walk_of[current] = walk
            current = edges.get(current)
        if current is not None and walk_of[current] == walk:
            cycle = [current]
            following = edges[current]
            while following != current:
                cycle.append(following)
                following = edges[following]
            cycles.append(cycle)
    return cycles


def check_meta_nodes(
    doc: strict_json.Document, path: str, by_id: dict[str, Node], all_nodes: list[Node]
) -> list[Finding]:
    meta = doc.value
    assert isinstance(meta, dict)
    findings: list[Finding] = []

    def at(rule: Rule, pointer: str, message: str) -> Finding:
        return located(rule, doc, path, pointer, message)

    head = meta.get("head_id")
    if isinstance(head, str) and head != "ROOT":  # rewind_to the first message: a fresh start
        node = by_id.get(head)
        if node is None:
            findings.append(
                at(
                    ss.BAD_HEAD,
                    "/head_id",
                    f"expected null or the id of a node in history/, found {quote(head)}",
                )
            )
        elif node.summary:
            findings.append(
                at(
                    ss.HEAD_IS_SUMMARY,
                    "/head_id",
                    f"expected a conversational head, found the compaction summary {quote(head)}",
                )
            )
    branches = meta.get("branches")
    if isinstance(branches, dict):
        for key in branches:
            if key not in by_id:
                findings.append(
                    at(
                        ss.META_BRANCHES,
                        jp.append("/branches", key),
                        f"expected a branch key naming a node, found {quote(key)}",
                    )
                )
    merged = meta.get("merged_heads")
    if isinstance(merged, list):
        for index, item in enumerate(merged):
            if isinstance(item, str) and item not in by_id:
                findings.append(
                    at(
                        ss.META_BRANCHES,
                        f"/merged_heads/{index}",
                        f"expected a node id, found {quote(item)}",
                    )
                )
    title = meta.get("title")
    if (
        meta.get("_auto_titled") is True
        and meta.get("_title_gen_count") == 1
        and not meta.get("_user_titled")
        and isinstance(title, str)
    ):
        users = sorted(
            (n for n in all_nodes if n.role == "user" and n.id != "ROOT" and n.caller == "ROOT"),
            key=lambda n: n.seq,
        )
        if users:
            expected = phase1_title(users[0].text)
            if title != expected:
                findings.append(
                    at(
                        ss.META_TITLE,
                        "/title",
                        f"expected the phase-1 title {quote(expected)} (first line of the first "
                        f"user message), found {quote(title)}",
                    )
                )
    return findings


def phase1_title(text: str) -> str:
    lines = text.strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first if len(first) <= 50 else first[:50] + "…"
