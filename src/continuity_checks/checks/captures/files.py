"""File checks for captures (``continuity check``): a manifest against its capture, a reader
reference against the capture it pins, a decision directory's delivery, cycle deltas, exact
sharing stubs and requirement records. Every neighbour is read through the snapshot."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from continuity_checks.checks.captures import model
from continuity_checks.checks.captures import rules as cx
from continuity_checks.checks.captures.layout import (
    CAPTURE,
    CYCLE_BASE,
    CYCLE_DELTA,
    MANIFEST,
    PROJECTION,
    REQUIRED,
    Settings,
    is_backup_dir,
    is_decision_dir,
)
from continuity_checks.core import pointer as jp
from continuity_checks.core import schemas, strict_json
from continuity_checks.core.display import json_type, quote, show
from continuity_checks.core.findings import Finding, Severity
from continuity_checks.core.hashing import parse_digest
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable

SCHEMA = {
    "manifest": "loopx-capture-manifest",
    "reader": "loopx-capture-reader",
    "delivery": "loopx-delivery",
    "cycle-delta": "loopx-cycle-delta",
}
DELTA_RFC6902 = "loopx-cycle-delta-rfc6902"  # the schema under delta-ops = "rfc6902"
SCHEMA_RULE = {
    "manifest": cx.MANIFEST_SCHEMA,
    "reader": cx.READER_SCHEMA,
    "delivery": cx.DELIVERY_SCHEMA,
    "cycle-delta": cx.CYCLE_DELTA_SCHEMA,
}


def escape(snapshot: Snapshot, directory: str, path: str) -> str | Unreadable | None:
    """Why the file at ``path`` (named from a file in ``directory``) is not really inside
    ``directory``, or None. The name itself was accepted by :func:`model.inside_name`; here its
    symlinks are followed (``Snapshot.resolve``, the same in both modes): a capture.json that is
    a symlink to a sibling directory, or to elsewhere in the root, leaves its directory and is
    never read or hashed. An Unreadable is the snapshot's own refusal (a symlink out of the
    root, a dangling one). A symlink to another file of the same directory stays inside."""
    real = snapshot.resolve(path)
    if isinstance(real, Unreadable):
        return real
    home = snapshot.resolve(directory)
    if isinstance(home, Unreadable):
        return home
    if home == "" or real.startswith(home + "/"):
        return None
    return f"expected a file inside {directory or '.'}/, found a symlink to {real}"


class Checker:
    """The findings of one file, with the snapshot its neighbours are read from."""

    def __init__(self, path: str, snapshot: Snapshot, settings: Settings) -> None:
        self.path = path
        self.directory = posixpath.dirname(path)
        self.snapshot = snapshot
        self.settings = settings
        self.findings: list[Finding] = []
        self.doc: strict_json.Document | None = None

    # --- reporting -------------------------------------------------------------------------

    def at(self, rule: Rule, pointer: str, message: str, path: str | None = None) -> None:
        line = column = None
        if self.doc is not None and (path is None or path == self.path):
            line, column = self.doc.position(pointer)
        self.findings.append(
            rule.finding(path or self.path, message, line=line, column=column, pointer=pointer)
        )

    def unreadable(self, problem: Unreadable, pointer: str) -> None:
        line, column = self.doc.position(pointer) if self.doc is not None else (None, None)
        self.findings.append(problem.finding(self.path, line=line, column=column, pointer=pointer))

    # --- reading ---------------------------------------------------------------------------

    def load(self, data: bytes) -> bool:
        loaded = strict_json.load(data, max_depth=self.settings.max_depth)
        if isinstance(loaded, strict_json.Problem):
            self.findings.append(loaded.finding(self.path))
            return False
        self.doc = loaded
        return True

    def schema(self, kind: str) -> bool:
        """Schema findings (one per failing member); whether the value is valid."""
        assert self.doc is not None
        value = self.doc.value
        name = SCHEMA[kind]
        if kind == "cycle-delta" and self.settings.delta_ops == "rfc6902":
            name = DELTA_RFC6902
        validator = schemas.validator(name)
        if validator.is_valid(value):
            return True
        rule = SCHEMA_RULE[kind]
        if not isinstance(value, dict):
            self.at(rule, "", f"expected a JSON object, found {json_type(value)}")
            return False
        seen: set[str] = set()
        for error in validator.errors(value):
            if error.pointer in seen:
                continue
            seen.add(error.pointer)
            self.at(rule, error.pointer, f"expected {_expectation(error.keyword)}: {error.message}")
        return False

    def named(self, name: object, pointer: str) -> str | None:
        """The root-relative path of a file this one names, once it is known to stay inside the
        directory and to exist (else a finding at ``pointer``)."""
        refused = model.inside_name(name)
        if refused is not None:
            self.at(cx.PATH_ESCAPES, pointer, f"{refused}; found {show(name)}")
            return None
        assert isinstance(name, str)
        path = model.join(self.directory, name)
        if not self.snapshot.exists(path):
            self.at(cx.NAMED_MISSING, pointer, f"expected {path} to exist beside {self.path}")
            return None
        return path if self.stays(path, pointer) else None

    def stays(self, path: str, pointer: str) -> bool:
        """Whether ``path`` (named by this file) really is inside this file's directory once
        its symlinks are followed; a finding at ``pointer`` if not."""
        left = escape(self.snapshot, self.directory, path)
        if isinstance(left, Unreadable):
            self.unreadable(left, pointer)
        elif left is not None:
            self.at(cx.PATH_ESCAPES, pointer, f"{left} ({path})")
        return left is None

    def file_digest(self, path: str, pointer: str) -> tuple[str, int] | None:
        """The SHA-256 (bare hex) and size of the file at ``path``, streamed."""
        digest = self.snapshot.sha256(path)
        if isinstance(digest, Unreadable):
            self.unreadable(digest, pointer)
            return None
        return digest.hex, digest.size

    def document(self, path: str, pointer: str, report: bool = True) -> Any:
        """The parsed value of a neighbour, or :data:`model.MISSING` (reported at the neighbour
        when ``report``: its own check may report it already)."""
        data = self.snapshot.read(path)
        if isinstance(data, Unreadable):
            self.unreadable(data, pointer)
            return model.MISSING
        loaded = strict_json.load(data, max_depth=self.settings.max_depth)
        if isinstance(loaded, strict_json.Problem):
            if report:
                self.findings.append(loaded.finding(path))
            return model.MISSING
        return loaded.value

    def capture_digest(self, path: str, pointer: str) -> tuple[str, int] | None:
        """The capture's digest under the configured basis, and its size."""
        found = self.file_digest(path, pointer)
        if found is None or self.settings.capture_digest == "raw":
            return found
        value = self.document(path, pointer)
        return None if value is model.MISSING else (model.canonical_sha256(value), found[1])


def _expectation(keyword: str) -> str:
    return {
        "required": "every required key",
        "additionalProperties": "only the format's keys",
        "pattern": "the format's text pattern",
        "enum": "one of the format's values",
        "const": "the format's value",
        "type": "the format's type",
        "oneOf": "one operation of the vocabulary",
    }.get(keyword, "the format")


# --- manifest.json ---------------------------------------------------------------------------


def check_manifest(
    path: str,
    data: bytes,
    snapshot: Snapshot,
    settings: Settings,
    is_capture: Callable[[str], bool],
) -> list[Finding]:
    """A manifest and the capture it names. A manifest that names no capture beside it (no
    capture_file, and no capture.json or projection.json next to it) is not a capture manifest
    (OpenProgram keeps manifest.json files of its own): nothing is reported for it."""
    c = Checker(path, snapshot, settings)
    directory = c.directory
    beside = any(snapshot.exists(model.join(directory, name)) for name in (CAPTURE, PROJECTION))
    if not c.load(data):
        return c.findings if beside else []
    assert c.doc is not None
    value = c.doc.value
    if not beside and not (isinstance(value, dict) and "capture_file" in value):
        return []
    c.schema("manifest")
    if not isinstance(value, dict):
        return c.findings
    capture = (
        c.named(value.get("capture_file"), "/capture_file") if "capture_file" in value else None
    )
    if capture is not None and (posixpath.dirname(capture) != directory or not is_capture(capture)):
        # spec §2: the capture lives beside its manifest, as capture.json. Under another name
        # (or in a subdirectory) no check is started by a change to it, and history cannot
        # tell that a published capture was rewritten or deleted: refused, not passed.
        names = "capture.json or projection.json" if is_decision_dir(directory) else "capture.json"
        c.at(
            cx.MANIFEST_SCHEMA,
            "/capture_file",
            f"expected {names} beside the manifest (the names the commit hook and verify guard "
            f"against rewrites), found {quote(value['capture_file'])}",
        )
    if capture is not None:
        pinned = parse_digest(value.get("capture_sha256"))
        found = c.capture_digest(capture, "/capture_file")
        if found is not None:
            actual, size = found
            if pinned is not None and pinned != actual:
                basis = "canonical JSON" if settings.capture_digest == "canonical" else "bytes"
                c.at(
                    cx.CAPTURE_DIGEST,
                    "/capture_sha256",
                    f"expected the SHA-256 of the {basis} of {capture}, {actual}; found "
                    f"{quote(value.get('capture_sha256'))}",
                )
            stated = value.get("capture_bytes")
            # a size that differs with the digest is the same root cause, reported once
            if _whole(stated) not in (None, size) and pinned == actual:
                c.at(
                    cx.CAPTURE_SIZE,
                    "/capture_bytes",
                    f"expected {size} (the size of {capture}), found {stated}",
                )
        if not is_capture(capture):
            # a capture under another name has no check of its own: strict JSON here
            c.document(capture, "/capture_file")
    files = value.get("files")
    if isinstance(files, dict):
        for name, entry in files.items():
            pointer = jp.append("/files", name)
            target = c.named(name, pointer)
            if target is None or not isinstance(entry, dict):
                continue
            found = c.file_digest(target, pointer)
            if found is None:
                continue
            pinned = parse_digest(entry.get("sha256"))
            if pinned is not None and pinned != found[0]:
                c.at(
                    cx.CAPTURE_DIGEST,
                    pointer + "/sha256",
                    f"expected the SHA-256 of {target}, {found[0]}; found {quote(entry['sha256'])}",
                )
            elif _whole(entry.get("bytes")) not in (None, found[1]):
                c.at(
                    cx.CAPTURE_SIZE,
                    pointer + "/bytes",
                    f"expected {found[1]} (the size of {target}), found {entry['bytes']}",
                )
    return c.findings


def _whole(value: object) -> int | None:
    """A size as JSON Schema's "integer" takes it (12.0 is 12: the schema lets it through, so
    it is compared too), else None."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- captures, projections and necessary views ------------------------------------------------


def has_manifest(snapshot: Snapshot, directory: str) -> bool:
    """Whether ``directory`` holds a manifest of ours: what makes a ``capture.json`` beside it
    LoopX's (the manifest's own check says what is wrong with its pin)."""
    return not is_backup_dir(directory) and snapshot.exists(model.join(directory, MANIFEST))


def names_capture(data: bytes | None, directory: str, name: str) -> bool:
    """Whether ``data``, a version of ``directory``'s manifest, names ``name`` as its capture."""
    if data is None:
        return False
    parsed = strict_json.accepts(data)
    if parsed is None or not isinstance(parsed[1], dict):
        return False
    named = parsed[1].get("capture_file")
    return (
        isinstance(named, str)
        and model.inside_name(named) is None
        and (model.join(directory, named) == model.join(directory, name))
    )


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


def _walk(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Every container under ``value`` with its pointer, in document order (pre-order)."""
    stack: list[tuple[str, Any]] = [(pointer, value)]
    while stack:
        here, node = stack.pop()
        yield here, node
        if isinstance(node, dict):
            items: list[tuple[Any, Any]] = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            continue
        for key, child in reversed(items):
            if isinstance(child, (dict, list)):
                stack.append((jp.append(here, key), child))


def _is_stub(value: object) -> bool:
    return isinstance(value, dict) and "context_ref" in value


def check_stubs(c: Checker) -> None:
    """Exact-sharing stubs: shape, backward resolution to a complete record, same todo_id."""
    assert c.doc is not None
    root = c.doc.value
    order: dict[int, int] = {}  # id(container) -> position in document order
    stubs: list[tuple[str, dict[str, Any]]] = []
    for position, (pointer, node) in enumerate(_walk(root)):
        order[id(node)] = position
        if _is_stub(node):
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
            target = model.resolve(root, ref) if isinstance(ref, str) else model.MISSING
        except model.PointerError as exc:
            c.at(cx.STUB_UNRESOLVED, where, f"expected an RFC 6901 pointer: {exc}")
            continue
        if not isinstance(target, dict):
            found = "nothing" if target is model.MISSING else json_type(target)
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
        if _is_stub(target):
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
    for pointer, node in _walk(root):
        if isinstance(node, dict) and isinstance(node.get("todo_id"), str) and not _is_stub(node):
            firsts.setdefault(model.canonical_sha256(node), pointer)
    return firsts


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
        return model.MISSING  # a capture reached through a symlink out is not read (CX102)
    data = c.snapshot.read(path)
    return model.MISSING if isinstance(data, Unreadable) else _Bytes(data)


def check_requirements(c: Checker) -> None:
    """Every requirement record (an item of a ``requirements`` array that carries status,
    agent_review or supporting_material_pointer) and every stored review item."""
    assert c.doc is not None
    capture: Any = None  # read on first need
    requirement = schemas.validator("loopx-requirement")
    review_item = schemas.validator("loopx-review-item")
    for pointer, node in _walk(c.doc.value):
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
                        f"expected {_expectation(error.keyword)}: {error.message}",
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
                        f"expected {_expectation(error.keyword)}: {error.message}",
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
    if capture is model.MISSING:
        c.at(
            cx.SUPPORT_POINTER, at, "expected a capture beside this file to resolve in, found none"
        )
        return
    try:
        if isinstance(capture, _Bytes):
            target = model.select(capture, [pointer])[0]
        else:
            target = model.resolve(capture, pointer)
    except (model.PointerError, model.ScanError) as exc:
        c.at(cx.SUPPORT_POINTER, at, f"expected a pointer that resolves in the capture: {exc}")
        return
    if target is model.MISSING:
        c.at(
            cx.SUPPORT_POINTER,
            at,
            f"expected {quote(pointer)} to resolve in the capture, found nothing",
        )
    elif _is_stub(target):
        c.at(
            cx.SUPPORT_POINTER,
            at,
            f"expected material at {quote(pointer)}, found a context_ref stub",
        )


# --- *.reader.json ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Reader:
    """What check_tree compares across readers."""

    path: str
    capture: str
    capture_sha256: str
    select: tuple[str, ...]
    list_depth: int | None
    selection_sha256: str
    #: line and column of selection_sha256 in the reader, for a finding check_tree makes
    position: tuple[int | None, int | None] = (None, None)


def check_reader(
    path: str, data: bytes, snapshot: Snapshot, settings: Settings
) -> tuple[list[Finding], Reader | None]:
    c = Checker(path, snapshot, settings)
    if not c.load(data):
        return c.findings, None
    assert c.doc is not None
    value = c.doc.value
    valid = c.schema("reader")
    if not isinstance(value, dict):
        return c.findings, None
    select: list[Any] = value["select"] if isinstance(value.get("select"), list) else []
    if select:
        seen: set[object] = set()
        for index, pointer in enumerate(select):
            if isinstance(pointer, str) and pointer in seen:
                c.at(
                    cx.DUPLICATE_POINTER,
                    f"/select/{index}",
                    f"expected each pointer once, found {quote(pointer)} again",
                )
                if settings.duplicate_pointers == "reject":  # an error, not the warning
                    c.findings[-1] = c.findings[-1].with_severity(Severity.ERROR)
            seen.add(pointer if isinstance(pointer, str) else None)
    capture = (
        c.named(value.get("capture_file"), "/capture_file") if "capture_file" in value else None
    )
    if capture is None or not valid:
        return c.findings, None
    pinned = parse_digest(value["capture_sha256"])
    assert pinned is not None
    found = c.capture_digest(capture, "/capture_file")
    if found is None:
        return c.findings, None
    if found[0] != pinned:
        c.at(
            cx.READER_PIN,
            "/capture_sha256",
            f"expected the digest of the current {capture}, {found[0]}; found "
            f"{quote(value['capture_sha256'])}",
        )
        return c.findings, None
    selected = _select(c, capture, select)
    depth = value.get("list_depth")
    stated = parse_digest(value["selection_sha256"])
    assert stated is not None
    resolved_all = selected is not None and len(selected) == len(select)
    if settings.selection_digest == "H1":
        expected: str | None = model.selection_h1(pinned, select, depth)
    elif settings.selection_digest == "H2" and selected is not None and resolved_all:
        expected = model.selection_h2(selected)
    else:
        expected = None
    if expected is not None and expected != stated:
        c.at(
            cx.SELECTION_DIGEST,
            "/selection_sha256",
            f"expected {expected} ({settings.selection_digest} over this selection), found "
            f"{quote(value['selection_sha256'])}",
        )
    if "command" in value:
        _check_command(c, value)
    assert c.doc is not None
    return c.findings, Reader(
        path, capture, pinned, tuple(select), depth, stated, c.doc.position("/selection_sha256")
    )


def _select(c: Checker, capture: str, select: list[Any]) -> list[dict[str, Any]] | None:
    """``[{pointer, value}]`` of the pointers that resolve in the capture (each one that does
    not is a finding), found by scanning its bytes: only the selected values are parsed, so a
    reference to a large capture costs a scan, not a parse. None when the capture cannot be
    read or followed."""
    data = c.snapshot.read(capture)
    if isinstance(data, Unreadable):
        c.unreadable(data, "/capture_file")
        return None
    valid: list[tuple[int, str]] = []
    for index, pointer in enumerate(select):
        try:
            model.tokens(pointer)
            valid.append((index, pointer))
        except model.PointerError as exc:
            c.at(cx.READER_POINTER, f"/select/{index}", f"expected an RFC 6901 pointer: {exc}")
    try:
        values = model.select(data, [p for _, p in valid])
    except model.ScanError as exc:
        c.at(
            cx.READER_POINTER, "/select", f"expected {capture} to be JSON along the pointers: {exc}"
        )
        return None
    selected = []
    for (index, pointer), found in zip(valid, values, strict=True):
        if found is model.MISSING:
            c.at(
                cx.READER_POINTER,
                f"/select/{index}",
                f"expected {quote(pointer)} to resolve in {capture}, found nothing there "
                "(the whole reference fails)",
            )
        else:
            selected.append({"pointer": pointer, "value": found})
    return selected


def _check_command(c: Checker, value: dict[str, Any]) -> None:
    try:
        words = shlex.split(value["command"])
    except ValueError as exc:
        c.at(cx.READER_COMMAND, "/command", f"expected a shell command line: {exc}")
        return
    options: dict[str, list[str]] = {}
    flags: set[str] = set()  # every option given, a bare --list at the end of the line too
    for index, word in enumerate(words):
        if not word.startswith("--"):
            continue
        flag, eq, inline = word.partition("=")
        flags.add(flag)
        if eq:  # --select=/a, as argparse reads it, wherever it stands
            options.setdefault(flag, []).append(inline)
        elif index + 1 < len(words):
            options.setdefault(flag, []).append(words[index + 1])
    problems: list[str] = []
    files = options.get("--capture-file", [])
    name = posixpath.normpath(value["capture_file"])
    given = posixpath.normpath(files[0]) if len(files) == 1 else None
    if given is None or not (given == name or given.endswith("/" + name)):
        problems.append(f"--capture-file naming {name}")
    digests = options.get("--capture-sha256", [])
    if len(digests) != 1 or parse_digest(digests[0]) != parse_digest(value["capture_sha256"]):
        problems.append("--capture-sha256 with the pinned digest")
    if options.get("--select", []) != list(value["select"]):
        problems.append("the same --select pointers in the same order")
    depth = options.get("--list-depth")
    if "list_depth" in value and depth != [str(value["list_depth"])]:
        problems.append(f"--list-depth {value['list_depth']}")
    elif "list_depth" not in value and flags & {"--list", "--list-depth"}:
        # a listing has another selection digest (H1 binds list_depth): not this reference's
        problems.append("no --list or --list-depth (the reference pins no listing)")
    selection = options.get("--selection-sha256")
    if selection is not None and (
        len(selection) != 1 or parse_digest(selection[0]) != parse_digest(value["selection_sha256"])
    ):
        problems.append("--selection-sha256 with the pinned selection digest")
    if problems:
        c.at(
            cx.READER_COMMAND,
            "/command",
            f"expected {'; '.join(problems)}; found {quote(value['command'])}",
        )


# --- decision-<id>/delivery.json ---------------------------------------------------------------


def check_delivery(path: str, data: bytes, snapshot: Snapshot, settings: Settings) -> list[Finding]:
    c = Checker(path, snapshot, settings)
    if not c.load(data):
        return c.findings
    assert c.doc is not None
    value = c.doc.value
    c.schema("delivery")
    if not isinstance(value, dict):
        return c.findings
    for key, name in (("projection_sha256", PROJECTION), ("required_context_sha256", REQUIRED)):
        if key in value:
            _pinned_file(c, name, value[key], "/" + key)
    mode = value.get("mode")
    if mode == "full":
        for key in ("base", "delta"):
            if key in value:
                c.at(
                    cx.FULL_WITH_BASE, "/" + key, f"expected no {key} in a full delivery, found one"
                )
        return c.findings
    if mode != "delta":
        return c.findings
    named: dict[str, str] = {}
    for key, expected in (("base", CYCLE_BASE), ("delta", CYCLE_DELTA)):
        entry = value.get(key)
        if isinstance(entry, dict) and "file" in entry:
            name = entry["file"]
            if model.inside_name(name) is None and model.join(c.directory, name) != model.join(
                c.directory, expected
            ):
                # spec §5: the base is cycle-base.json, the delta cycle-delta.json. Under another
                # name the file has no check of its own (schema, operations) and no guard
                # against rewrites: refused rather than applied unchecked
                c.at(
                    cx.DELIVERY_SCHEMA,
                    f"/{key}/file",
                    f"expected {expected} beside the delivery, found {quote(name)}",
                )
                continue
            target = _pinned_file(
                c, entry["file"], entry.get("sha256"), f"/{key}/file", f"/{key}/sha256"
            )
            if target is not None:
                named[key] = target
    if len(named) == 2 and not c.findings:
        _check_restore(c, named["base"], named["delta"])
    return c.findings


def _pinned_file(
    c: Checker, name: object, digest: object, pointer: str, digest_pointer: str | None = None
) -> str | None:
    """The file ``name`` beside the delivery, checked against ``digest``; its path when the
    digest matches."""
    target = c.named(name, pointer)
    if target is None:
        return None
    found = c.file_digest(target, pointer)
    pinned = parse_digest(digest)
    if found is None or pinned is None:
        return None
    if pinned != found[0]:
        c.at(
            cx.DELIVERY_DIGEST,
            digest_pointer or pointer,
            f"expected the SHA-256 of {target}, {found[0]}; found {quote(digest)}",
        )
        return None
    return target


def _check_restore(c: Checker, base_path: str, delta_path: str) -> None:
    base = c.document(base_path, "/base/file", report=False)
    delta = c.document(delta_path, "/delta/file", report=False)
    projection = c.document(model.join(c.directory, PROJECTION), "/projection_sha256", report=False)
    if model.MISSING in (base, delta, projection) or not isinstance(delta, dict):
        return  # reported by the files' own checks
    try:
        restored = model.apply_delta(base, delta.get("operations", []), c.settings.delta_ops)
    except model.DeltaError:
        return  # CX126 on the delta itself
    if model.canonical_bytes(restored) != model.canonical_bytes(projection):
        c.at(
            cx.DELTA_RESTORE,
            "/delta",
            f"expected {delta_path} applied to {base_path} to restore projection.json exactly "
            f"(canonical SHA-256 {model.canonical_sha256(projection)}), found "
            f"{model.canonical_sha256(restored)}",
        )


# --- cycle-delta.json ------------------------------------------------------------------------


def check_cycle_delta(
    path: str, data: bytes, snapshot: Snapshot, settings: Settings
) -> list[Finding]:
    c = Checker(path, snapshot, settings)
    if not c.load(data):
        return c.findings
    assert c.doc is not None
    value = c.doc.value
    valid = c.schema("cycle-delta")
    if not isinstance(value, dict) or not valid:
        return c.findings
    base_path = model.join(c.directory, CYCLE_BASE)
    if not snapshot.exists(base_path):
        c.at(cx.NAMED_MISSING, "/base_sha256", f"expected the base {base_path} beside {path}")
        return c.findings
    if not c.stays(base_path, "/base_sha256"):
        return c.findings
    found = c.file_digest(base_path, "/base_sha256")
    if found is None:
        return c.findings
    if parse_digest(value["base_sha256"]) != found[0]:
        c.at(
            cx.BASE_DIGEST,
            "/base_sha256",
            f"expected the SHA-256 of {base_path}, {found[0]}; found {quote(value['base_sha256'])}",
        )
        return c.findings
    base = c.document(base_path, "/base_sha256", report=False)
    if base is model.MISSING:
        return c.findings
    try:
        restored = model.apply_delta(base, value["operations"], settings.delta_ops)
    except model.DeltaError as exc:
        c.at(cx.BAD_OPERATION, exc.pointer, f"operation {exc.index}: {exc}")
        return c.findings
    actual = model.canonical_sha256(restored)
    if parse_digest(value["target_sha256"]) != actual:
        c.at(
            cx.DELTA_RESTORE,
            "/target_sha256",
            f"expected the canonical SHA-256 of the restored document, {actual}; found "
            f"{quote(value['target_sha256'])}",
        )
    return c.findings
