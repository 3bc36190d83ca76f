"""Captures (``capture.json``, a decision's ``projection.json``), necessary views
(``required-context.json``) and cycle bases: strict JSON, requirement records, and in a necessary
view the exact-sharing stubs."""

from __future__ import annotations

from typing import Any

from continuity_checks.checks.captures import model
from continuity_checks.checks.captures import rules as cx
from continuity_checks.checks.captures.checker import Checker, escape, is_stub, walk
from continuity_checks.checks.captures.layout import Settings, is_decision_dir
from continuity_checks.checks.captures.manifest import has_manifest
from continuity_checks.checks.captures.requirements import check_requirements
from continuity_checks.core import pointer as jp
from continuity_checks.core.display import json_type, quote, show
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot


def check_document(
    path: str, kind: str, data: bytes, snapshot: Snapshot, settings: Settings
) -> list[Finding]:
    """A capture (capture.json, a decision's projection.json), a necessary view
    (required-context.json) or a cycle base: strict JSON, requirement records, and in a
    necessary view the exact-sharing stubs. A capture.json outside a decision directory counts
    only beside a manifest.json (anything else called capture.json is not known to be ours)."""
    c = Checker(path, snapshot, settings)
    if (
        kind == "capture"
        and not is_decision_dir(c.directory)
        and not has_manifest(snapshot, c.directory)
    ):
        return []
    if kind == "capture" and escape(snapshot, c.directory, path) is not None:
        # a symlink to another directory's file: the files that name it report CX102, and its
        # content is not judged here (the engine read it as it reads every claimed file)
        return []
    if not c.load(data):
        return c.findings
    assert c.doc is not None
    # a walk over every container is Python-speed, a byte search C-speed: a key can hide from
    # the search only behind a \u escape, and then the walk runs anyway
    escaped = b"\\u" in data
    if kind == "required-context" and (escaped or b"context_ref" in data):
        check_stubs(c)
    if kind != "cycle-base" and (escaped or b"requirements" in data or b"review" in data):
        check_requirements(c)
    return c.findings


def check_stubs(c: Checker) -> None:
    """Exact-sharing stubs: shape, backward resolution to a complete record, same todo_id."""
    assert c.doc is not None
    root = c.doc.value
    order: dict[int, int] = {}  # id(container) -> position in document order
    stubs: list[tuple[str, dict[str, Any]]] = []
    for position, (pointer, node) in enumerate(walk(root)):
        order[id(node)] = position
        if is_stub(node):
            stubs.append((pointer, node))
    firsts: dict[str, str] | None = None  # canonical digest -> first complete record's pointer
    for pointer, stub in stubs:
        if not c.settings.relaxed_refs and set(stub) != {"todo_id", "context_ref"}:
            extra = sorted(set(stub) - {"todo_id", "context_ref"})
            what = f"other keys {', '.join(map(repr, extra))}" if extra else "no todo_id"
            c.at(cx.STUB_SHAPE, pointer, f"expected exactly todo_id and context_ref, found {what}")
        if not isinstance(stub.get("todo_id"), str):
            c.at(
                cx.STUB_SHAPE,
                pointer,
                f"expected a string todo_id, found {show(stub.get('todo_id'))}",
            )
        ref = stub["context_ref"]
        where = jp.append(pointer, "context_ref")
        try:
            target = jp.resolve(root, ref) if isinstance(ref, str) else jp.MISSING
        except jp.PointerError as exc:
            c.at(cx.STUB_UNRESOLVED, where, f"expected an RFC 6901 pointer: {exc}")
            continue
        if not isinstance(target, dict):
            found = "nothing" if target is jp.MISSING else json_type(target)
            c.at(
                cx.STUB_UNRESOLVED, where, f"expected {show(ref)} to name an object, found {found}"
            )
            continue
        if ref == pointer or pointer.startswith(ref + "/") or order[id(target)] > order[id(stub)]:
            c.at(
                cx.STUB_FORWARD,
                where,
                f"expected a record before {pointer or '/'} in document order, found {quote(ref)}",
            )
            continue
        if is_stub(target):
            if not c.settings.relaxed_refs:
                c.at(
                    cx.STUB_CHAIN,
                    where,
                    f"expected a complete record at {quote(ref)}, found a stub",
                )
            continue
        if "todo_id" in stub and target.get("todo_id") != stub.get("todo_id"):
            c.at(
                cx.STUB_TODO_ID,
                where,
                f"expected the record at {quote(ref)} to carry todo_id {quote(stub['todo_id'])}, "
                f"found {show(target.get('todo_id'))}",
            )
            continue
        if firsts is None:
            firsts = _first_records(root)
        first = firsts.get(model.canonical_sha256(target), ref)
        if first != ref:
            # spec §6 rule 3: later copies point to the first complete occurrence
            c.at(
                cx.STUB_FORWARD,
                where,
                f"expected the first occurrence of the record, {quote(first)}, found a later "
                f"copy {quote(ref)}",
            )


def _first_records(root: Any) -> dict[str, str]:
    """The pointer of the first complete record (an object with a string todo_id that is not
    a stub) of each canonical form, in document order."""
    firsts: dict[str, str] = {}
    for pointer, node in walk(root):
        if isinstance(node, dict) and isinstance(node.get("todo_id"), str) and not is_stub(node):
            firsts.setdefault(model.canonical_sha256(node), pointer)
    return firsts
