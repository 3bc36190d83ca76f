"""The per-file checker every kind of capture file is judged with: its findings at JSON
Pointers, the schema, the neighbours it names (confined to its directory, read through the
snapshot) and their digests; with the walk over a document's containers and what a stub is."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from continuity_checks.checks.captures import model
from continuity_checks.checks.captures import rules as cx
from continuity_checks.checks.captures.layout import Settings
from continuity_checks.core import pointer as jp
from continuity_checks.core import schemas, strict_json
from continuity_checks.core.display import json_type, show
from continuity_checks.core.findings import Finding
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
            self.at(rule, error.pointer, f"expected {expectation(error.keyword)}: {error.message}")
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
        """The parsed value of a neighbour, or ``core.pointer.MISSING`` (reported at the
        neighbour when ``report``: its own check may report it already)."""
        data = self.snapshot.read(path)
        if isinstance(data, Unreadable):
            self.unreadable(data, pointer)
            return jp.MISSING
        loaded = strict_json.load(data, max_depth=self.settings.max_depth)
        if isinstance(loaded, strict_json.Problem):
            if report:
                self.findings.append(loaded.finding(path))
            return jp.MISSING
        return loaded.value

    def capture_digest(self, path: str, pointer: str) -> tuple[str, int] | None:
        """The capture's digest under the configured basis, and its size."""
        found = self.file_digest(path, pointer)
        if found is None or self.settings.capture_digest == "raw":
            return found
        value = self.document(path, pointer)
        return None if value is jp.MISSING else (model.canonical_sha256(value), found[1])


def expectation(keyword: str) -> str:
    """What a failing schema keyword expected, in the words of a finding."""
    return {
        "required": "every required key",
        "additionalProperties": "only the format's keys",
        "pattern": "the format's text pattern",
        "enum": "one of the format's values",
        "const": "the format's value",
        "type": "the format's type",
        "oneOf": "one operation of the vocabulary",
    }.get(keyword, "the format")


def walk(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
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


def is_stub(value: object) -> bool:
    """Whether ``value`` is an exact-sharing stub (an object with a ``context_ref``)."""
    return isinstance(value, dict) and "context_ref" in value
