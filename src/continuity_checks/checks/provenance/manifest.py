"""The provenance manifest of ours (schema ``provenance-manifest``): parsing and file checks.

``{"version": 1, "artifacts": [{"path", "sha256", "size", "role", ...}]}``; a derived artifact
names its original (``derived_from``, a path of the same manifest with role original) and how it
was made (``derivation``). An artifact with ``"in_repository": false`` is kept elsewhere (a
private original, a large recording): it is part of the chain of provenance, but its bytes are
not in the tree to check.
"""

from __future__ import annotations

import re
from typing import Any

from continuity_checks.checks.provenance import listed
from continuity_checks.checks.provenance import rules as pv
from continuity_checks.checks.provenance.listed import named
from continuity_checks.core import core_rules as cc
from continuity_checks.core import pointer as jp
from continuity_checks.core import schemas, strict_json
from continuity_checks.core.display import quote, show
from continuity_checks.core.findings import Finding
from continuity_checks.core.frozen import Frozen
from continuity_checks.core.hashing import parse_digest
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable
from continuity_checks.core.strict_json import located

SCHEMA = "provenance-manifest"

_EXPECTED = {
    "version": "expected 1",
    "artifacts": "expected an array of artifacts",
    "path": "expected a non-empty root-relative path",
    "sha256": "expected 64 lowercase hex digits",
    "size": "expected a size in bytes (an integer, 0 or more)",
    "role": 'expected "original" or "derived"',
    "in_repository": "expected true or false",
    "derived_from": "expected the path of an original of this manifest",
    "derivation": "expected a description of how the artifact was made",
    "description": "expected a string",
}
_REQUIRED = re.compile(r'"(.+)" is a required property')
_EXTRA = re.compile(r"\('(.+)' (?:was|were) unexpected\)")


class Artifact(Frozen):
    """One schema-valid artifact, with its index in ``artifacts``."""

    _fields = ("index", "path", "sha256", "size", "role", "in_repository", "derived_from")
    __slots__ = _fields
    index: int
    path: str
    sha256: str
    size: int
    role: str
    in_repository: bool
    derived_from: str | None

    def __init__(
        self,
        index: int,
        path: str,
        sha256: str,
        size: int,
        role: str,
        in_repository: bool,
        derived_from: str | None,
    ) -> None:
        self._set(index, path, sha256, size, role, in_repository, derived_from)

    @property
    def pointer(self) -> str:
        return f"/artifacts/{self.index}"


def _clip(message: str, limit: int = 200) -> str:
    """A schema message cut to ``limit`` characters (it may quote a huge instance)."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def artifacts_of(value: object) -> list[Artifact]:
    """The schema-valid artifacts of a manifest value (the others are reported by the schema)."""
    if not isinstance(value, dict) or not isinstance(value.get("artifacts"), list):
        return []
    validator = schemas.validator(SCHEMA)
    found = []
    for index, item in enumerate(value["artifacts"]):
        if not isinstance(item, dict) or not validator.is_valid(
            {"version": 1, "artifacts": [item]}
        ):
            continue
        found.append(
            Artifact(
                index,
                item["path"],
                item["sha256"],
                item["size"],
                item["role"],
                item.get("in_repository", True),
                item.get("derived_from"),
            )
        )
    return found


def listed_artifacts(value: object) -> list[Artifact]:
    """Every artifact of a manifest value that names a path and a SHA-256 (in any case), even
    one the schema refuses for another reason: history compares what each version lists, and an
    entry with a bad size is still listed (file mode reports the schema error)."""
    if not isinstance(value, dict) or not isinstance(value.get("artifacts"), list):
        return []
    found = []
    for index, item in enumerate(value["artifacts"]):
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        digest = parse_digest(item.get("sha256"))
        if digest is None or not item["path"]:
            continue
        size = item.get("size")
        found.append(
            Artifact(
                index,
                item["path"],
                digest,
                size if isinstance(size, int) else -1,
                "original" if item.get("role") == "original" else str(item.get("role")),
                item.get("in_repository") is not False,
                item.get("derived_from") if isinstance(item.get("derived_from"), str) else None,
            )
        )
    return found


def check_manifest(path: str, data: bytes, snapshot: Snapshot, max_depth: int) -> list[Finding]:
    doc = strict_json.load(data, max_depth=max_depth)
    if isinstance(doc, strict_json.Problem):
        return [doc.finding(path)]
    findings = schema_findings(path, doc)
    value = doc.value
    if isinstance(value, dict) and value.get("artifacts") == []:
        findings.append(
            located(pv.EMPTY, doc, path, "/artifacts", "expected at least one artifact, found []")
        )
    artifacts = artifacts_of(value)
    findings.extend(origin_findings(path, doc, artifacts))
    findings.extend(verify_artifacts(path, doc, artifacts, snapshot))
    return findings


def schema_findings(path: str, doc: strict_json.Document) -> list[Finding]:
    value = doc.value
    if not isinstance(value, dict):
        return [
            located(
                pv.BAD_MANIFEST,
                doc,
                path,
                "",
                f'expected an object {{"version": 1, "artifacts": [...]}}, found {show(value)}',
            )
        ]
    findings = []
    for error in schemas.validator(SCHEMA).errors(value):
        parts = jp.tokens(error.pointer)
        found: Any = jp.value_or_none(value, error.pointer)
        # only the messages these patterns are for: another keyword's message quotes the
        # instance, and searching a huge one backtracks for seconds
        required = _REQUIRED.search(error.message) if error.keyword == "required" else None
        extra = _EXTRA.search(error.message) if error.keyword == "additionalProperties" else None
        if error.keyword == "required" and required:
            key = required[1]
            where = " on a derived artifact" if key in ("derived_from", "derivation") else ""
            message = f"expected the key {key}{where}, found none"
        elif error.keyword == "additionalProperties" and extra:
            message = f"expected only the keys of the schema, found {extra[1]}"
        elif error.keyword in ("derived_from", "derivation"):  # the `false` schema of an original
            message = f"expected no {error.keyword} on an original artifact, found {show(found)}"
        else:
            field = parts[-1] if parts and not parts[-1].isdigit() else ""
            if not parts:
                expected = "expected an object"
            elif field:
                expected = _EXPECTED.get(field, _clip(error.message))
            else:
                expected = "expected an artifact object"
            message = f"{field or 'artifact'}: {expected}, found {show(found)}"
        findings.append(located(pv.BAD_MANIFEST, doc, path, error.pointer, message))
    return findings


def origin_findings(
    path: str, doc: strict_json.Document, artifacts: list[Artifact]
) -> list[Finding]:
    roles: dict[str, str] = {}
    for artifact in artifacts:
        roles.setdefault(artifact.path, artifact.role)
    findings = []
    for artifact in artifacts:
        if artifact.derived_from is None:
            continue
        role = roles.get(artifact.derived_from)
        if role != "original":
            found = "no artifact with that path" if role is None else "a derived artifact"
            findings.append(
                located(
                    pv.BAD_ORIGIN,
                    doc,
                    path,
                    f"{artifact.pointer}/derived_from",
                    f"expected {quote(artifact.derived_from)} to be an original of this manifest, "
                    f"found {found}",
                )
            )
    return findings


def verify_artifacts(
    path: str,
    doc: strict_json.Document,
    artifacts: list[Artifact],
    snapshot: Snapshot,
) -> list[Finding]:
    """Duplicates, escaping paths, missing files, sizes and digests of the artifacts."""
    findings: list[Finding] = []

    def at(rule: Rule, pointer: str, message: str) -> Finding:
        line, column = doc.position(pointer)
        return rule.finding(path, message, line=line, column=column, pointer=pointer)

    first: dict[str, str] = {}
    to_hash: list[tuple[Artifact, str]] = []
    for artifact in artifacts:
        pointer = f"{artifact.pointer}/path"
        earlier = first.get(artifact.path)
        if earlier is not None:
            findings.append(
                at(
                    pv.DUPLICATE,
                    pointer,
                    f"expected each path once, found {named(artifact.path)} again "
                    f"(first at {earlier})",
                )
            )
            continue
        first[artifact.path] = pointer
        if not artifact.in_repository:
            continue
        target = listed.resolve(path, artifact.path, "root")
        if isinstance(target.resolved, Unreadable):
            line, column = doc.position(pointer)
            findings.append(
                target.resolved.finding(path, line=line, column=column, pointer=pointer)
            )
            continue
        to_hash.append((artifact, target.resolved))
    digests = listed.hash_all(snapshot, [resolved for _, resolved in to_hash])
    for (artifact, resolved), digest in zip(to_hash, digests, strict=True):
        pointer = f"{artifact.pointer}/path"
        if isinstance(digest, Unreadable):
            if digest.rule is cc.UNREADABLE and not snapshot.exists(resolved):
                findings.append(
                    at(
                        pv.MISSING,
                        pointer,
                        f"expected the listed file {named(artifact.path)}, found no such file",
                    )
                )
            else:
                line, column = doc.position(pointer)
                findings.append(digest.finding(path, line=line, column=column, pointer=pointer))
            continue
        if digest.size != artifact.size:
            findings.append(
                at(
                    pv.SIZE,
                    f"{artifact.pointer}/size",
                    f"{named(artifact.path)}: expected {artifact.size} bytes, found {digest.size}",
                )
            )
        if digest.hex != artifact.sha256:
            findings.append(
                at(
                    pv.MISMATCH,
                    f"{artifact.pointer}/sha256",
                    f"{named(artifact.path)}: expected SHA-256 {artifact.sha256}, "
                    f"found {digest.hex}",
                )
            )
    return findings
