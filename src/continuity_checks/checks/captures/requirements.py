"""Requirement records and stored reviews in a capture or a view (LoopX 2.1.1): their schema,
unique ids, a review that covers every requirement once, an agent's review that is never
independent, evidence for "met", a current basis, and supporting material that resolves in the
capture."""

from __future__ import annotations

import posixpath
from typing import Any

from continuity_checks.checks.captures import model, scan
from continuity_checks.checks.captures import rules as cx
from continuity_checks.checks.captures.checker import Checker, escape, expectation, is_stub, walk
from continuity_checks.checks.captures.layout import CAPTURE, PROJECTION, is_decision_dir
from continuity_checks.core import pointer as jp
from continuity_checks.core import schemas
from continuity_checks.core.display import quote
from continuity_checks.core.hashing import parse_digest
from continuity_checks.core.snapshot import Unreadable


class _Bytes(bytes):
    """A neighbour capture's bytes, searched by pointer without parsing it whole."""


def _capture_of(c: Checker) -> Any:
    """The capture of the decision (or capture directory) this document belongs to, for
    supporting_material_pointer: the document's value when it is the capture, else the
    capture's bytes (:class:`_Bytes`), or MISSING."""
    name = posixpath.basename(c.path)
    assert c.doc is not None
    if name in (CAPTURE, PROJECTION):
        return c.doc.value
    candidate = PROJECTION if is_decision_dir(c.directory) else CAPTURE
    path = model.join(c.directory, candidate)
    if not c.snapshot.exists(path) or escape(c.snapshot, c.directory, path) is not None:
        return jp.MISSING  # a capture reached through a symlink out is not read (CX102)
    data = c.snapshot.read(path)
    return jp.MISSING if isinstance(data, Unreadable) else _Bytes(data)


def check_requirements(c: Checker) -> None:
    """Every requirement record (an item of a ``requirements`` array that carries status,
    agent_review or supporting_material_pointer) and every stored review item."""
    assert c.doc is not None
    capture: Any = None  # read on first need
    requirement = schemas.validator("loopx-requirement")
    review_item = schemas.validator("loopx-review-item")
    for pointer, node in walk(c.doc.value):
        if not isinstance(node, dict):
            continue
        reqs = node.get("requirements")
        if isinstance(reqs, list):
            if "objective" in node:  # an outcome; a view may gather several outcomes' ids
                _check_unique_ids(c, jp.append(pointer, "requirements"), reqs)
            for index, item in enumerate(reqs):
                if not isinstance(item, dict) or not (
                    {"status", "agent_review", "supporting_material_pointer"} & set(item)
                ):
                    continue
                here = jp.append(jp.append(pointer, "requirements"), index)
                if not requirement.is_valid(item):
                    error = requirement.errors(item)[0]
                    c.at(
                        cx.REQUIREMENT_SCHEMA,
                        here + error.pointer,
                        f"expected {expectation(error.keyword)}: {error.message}",
                    )
                review = item.get("agent_review")
                if isinstance(review, dict):
                    _check_review(c, node, item, review, here)
                smp = item.get("supporting_material_pointer")
                if isinstance(smp, str):
                    if capture is None:
                        capture = _capture_of(c)
                    _check_support(c, capture, smp, here + "/supporting_material_pointer")
        review = node.get("review")
        if isinstance(review, dict) and isinstance(review.get("items"), list):
            for index, item in enumerate(review["items"]):
                here = jp.append(pointer, "review") + f"/items/{index}"
                if not review_item.is_valid(item):
                    error = review_item.errors(item)[0]
                    c.at(
                        cx.REQUIREMENT_SCHEMA,
                        here + error.pointer,
                        f"expected {expectation(error.keyword)}: {error.message}",
                    )
                elif item["conclusion"] == "met" and not item["evidence_refs"]:
                    c.at(
                        cx.MET_WITHOUT_EVIDENCE,
                        here + "/evidence_refs",
                        "expected at least one evidence reference for met, found none",
                    )
            if isinstance(reqs, list):
                # the review was written over these very requirements when its basis is the
                # outcome's current one; a stale review may predate an added requirement
                current = model.basis_digest(node)
                whole = current is not None and parse_digest(review.get("basis_digest")) == current
                _check_coverage(c, pointer, reqs, review["items"], whole)


def _check_unique_ids(c: Checker, where: str, reqs: list[Any]) -> None:
    """LoopX 2.1.1 rejects an outcome whose requirements repeat an id."""
    first: dict[str, int] = {}
    for index, item in enumerate(reqs):
        name = item.get("id") if isinstance(item, dict) else None
        if not isinstance(name, str):
            continue
        if name in first:
            c.at(
                cx.REQUIREMENT_SCHEMA,
                f"{where}/{index}/id",
                f"expected each requirement id once, found {quote(name)} again (requirement "
                f"{first[name]})",
            )
        else:
            first[name] = index


def _check_coverage(
    c: Checker, outcome: str, reqs: list[Any], items: list[Any], current: bool
) -> None:
    """LoopX 2.1.1: a stored review covers every retained requirement exactly once. Judged
    only when every requirement and every review item carries a string id (a projected view
    may leave ids out); an item twice always, a requirement left out or an item of no
    requirement only when the review is ``current`` (its basis is the outcome's)."""
    found = [r.get("id") if isinstance(r, dict) else None for r in reqs]
    found_reviewed = [i.get("id") if isinstance(i, dict) else None for i in items]
    ids = [i for i in found if isinstance(i, str)]
    reviewed = [i for i in found_reviewed if isinstance(i, str)]
    if len(ids) != len(found) or len(reviewed) != len(found_reviewed):
        return
    wanted = set(ids)
    seen: set[str] = set()
    for index, name in enumerate(reviewed):
        if name in seen or (current and name not in wanted):
            c.at(
                cx.REQUIREMENT_SCHEMA,
                f"{jp.append(outcome, 'review')}/items/{index}/id",
                f"expected each requirement of the outcome reviewed once, found "
                f"{quote(name)} {'again' if name in seen else '(no such requirement)'}",
            )
        seen.add(name)
    missing = [name for name in dict.fromkeys(ids) if name not in seen]
    if missing and current:
        c.at(
            cx.REQUIREMENT_SCHEMA,
            f"{jp.append(outcome, 'review')}/items",
            f"expected a review item for every requirement, found none for "
            f"{', '.join(quote(name) for name in missing)}",
        )


def _check_review(
    c: Checker, outcome: dict[str, Any], item: dict[str, Any], review: dict[str, Any], here: str
) -> None:
    at = here + "/agent_review"
    if review.get("independently_verified") is True:
        c.at(
            cx.SELF_VERIFIED,
            at + "/independently_verified",
            "expected false (an agent's own review is never independent), found true",
        )
    if review.get("conclusion") == "met":
        refs = review.get("evidence_refs")
        if refs == [] or (refs is None and "supporting_material_pointer" not in item):
            c.at(
                cx.MET_WITHOUT_EVIDENCE,
                at if refs is None else at + "/evidence_refs",
                "expected at least one evidence reference (or a supporting_material_pointer) "
                "for met, found none",
            )
    if review.get("basis_current") is True:
        stated = review.get("basis_digest")
        expected = model.basis_digest(outcome)
        stored = (
            outcome.get("review", {}).get("basis_digest")
            if isinstance(outcome.get("review"), dict)
            else None
        )
        if not isinstance(stated, str):
            c.at(
                cx.BASIS_STALE,
                at + "/basis_current",
                "expected a basis_digest beside basis_current: true, found none",
            )
        elif expected is not None and stated != expected:
            c.at(
                cx.BASIS_STALE,
                at + "/basis_digest",
                f"expected the digest of the current basis, {expected}; found {quote(stated)}",
            )
        elif expected is None and isinstance(stored, str) and stored != stated:
            c.at(
                cx.BASIS_STALE,
                at + "/basis_digest",
                f"expected the outcome's review basis_digest {stored}; found {quote(stated)}",
            )


def _check_support(c: Checker, capture: Any, pointer: str, at: str) -> None:
    if capture is jp.MISSING:
        c.at(
            cx.SUPPORT_POINTER, at, "expected a capture beside this file to resolve in, found none"
        )
        return
    try:
        if isinstance(capture, _Bytes):
            target = scan.select(capture, [pointer])[0]
        else:
            target = jp.resolve(capture, pointer)
    except (jp.PointerError, scan.ScanError) as exc:
        c.at(cx.SUPPORT_POINTER, at, f"expected a pointer that resolves in the capture: {exc}")
        return
    if target is jp.MISSING:
        c.at(
            cx.SUPPORT_POINTER,
            at,
            f"expected {quote(pointer)} to resolve in the capture, found nothing",
        )
    elif is_stub(target):
        c.at(
            cx.SUPPORT_POINTER,
            at,
            f"expected material at {quote(pointer)}, found a context_ref stub",
        )
