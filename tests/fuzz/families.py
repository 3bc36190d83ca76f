"""What the fuzzer mutates, family by family: the files of ``examples/`` (copied into a scratch
repository), donors from the corpus, and the mutations known to break one of the family's
invariants (from the specs, written here without the checker's code) with, for history, the
rule that must answer."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fuzz.mutations import Mutation, dump, parse

EX = "examples"
CHANGES = f"{EX}/deltalayer/.deltalayer/changes"
DELTA = f"{CHANGES}/2026-09-22T14-00-00p02-00--claude.json"
FROZEN = f"{CHANGES}/2026-09-21T10-00-00p02-00--codex.frozen.json"
LEGACY = f"{EX}/deltalayer/.deltalayer/changes.jsonl"
CAPTURE_DIR = f"{EX}/captures/turn-0007"
DECISION_DIR = f"{EX}/captures/decision-k3j2x9q0"
STATE = f"{EX}/working-state/.dsh/project/WORKING_STATE.json"
SUMS = f"{EX}/provenance/evidence/SHA256SUMS.txt"
LOG = f"{EX}/provenance/evidence/session-log.txt"
SESSION = f"{EX}/openprogram/.openprogram/sessions/local_0a1b2c3d4e"
BLANKS = [" ", "", "\t", "\u001c", "\u001f", "\u0085", "\u00a0", "\u2028", "\u3000", " \n "]


@dataclass
class Target:
    path: str
    """The mutated file, relative to the scratch root."""
    check: tuple[str, ...]
    """What ``check`` is given for it: the file, or the records that point to it."""
    json: bool = True
    invalid: dict[str, Mutation] = field(default_factory=dict)
    """Mutations known to break an invariant of the family: an error must appear."""
    allowed: tuple[str, ...] = ()
    """Generic invalid mutations the format allows (a projection is captured text: a BOM)."""


@dataclass
class HistoryCase:
    """A commit that breaks a history invariant: ``verify`` must report ``rule``."""

    name: str
    path: str
    mutate: Callable[[random.Random, bytes], bytes | None]
    rule: str
    trailer: bool = False


@dataclass
class Family:
    name: str
    targets: list[Target]
    donors: list[str]
    """Corpus files (relative to the corpus) spliced into, or put in place of, a target."""
    history: list[HistoryCase] = field(default_factory=list)


def _edit(change: Callable[[Any, random.Random], Any]) -> Mutation:
    """A mutation of the parsed document (None when it does not apply)."""

    def mutate(rng: random.Random, data: bytes) -> bytes | None:
        try:
            doc = parse(data)
        except (ValueError, RecursionError):
            return None
        changed = change(doc, rng)
        return None if changed is None else dump(rng, changed)

    return mutate


def _without(key: str) -> Mutation:
    return _edit(lambda d, _r: {k: v for k, v in d.items() if k != key})


def _with(key: str, *values: Any) -> Mutation:
    return _edit(lambda d, r: {**d, key: r.choice(values)})


def _listed_again_with_another_digest(rng: random.Random, data: bytes) -> bytes | None:
    """The first line again, with another digest: sha256sum -c fails one of the two (the same
    line twice passes it, a warning only)."""
    first = data.split(b"\n", 1)[0]
    flipped = _hex_flip(rng, first)
    return None if flipped is None else data + flipped + b"\n"


def _hex_flip(rng: random.Random, data: bytes) -> bytes | None:
    """One hex digit of a 64-digit digest changed."""
    found = list(re.finditer(rb"[0-9a-f]{64}", data))
    if not found:
        return None
    match = rng.choice(found)
    at = match.start() + rng.randrange(64)
    old = data[at : at + 1]
    new = rng.choice([c for c in b"0123456789abcdef" if bytes([c]) != old])
    return data[:at] + bytes([new]) + data[at + 1 :]


def _append(extra: bytes) -> Mutation:
    return lambda _rng, data: data + extra


def _changed_leaf(doc: Any, rng: random.Random) -> Any:
    """One string or number leaf given another value of the same type."""
    leaves: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, (dict, list)):
                walk(value)
            elif isinstance(value, str) or (
                isinstance(value, (int, float)) and not isinstance(value, bool)
            ):
                leaves.append((node, key))

    if isinstance(doc, (dict, list)):
        walk(doc)
    if not leaves:
        return None
    node, key = rng.choice(leaves)
    value = node[key]
    node[key] = value + " changed" if isinstance(value, str) else value + 1
    return doc


def _added_item(field_name: str, item: Callable[[Any], Any]) -> Mutation:
    def change(doc: Any, _rng: random.Random) -> Any:
        values = doc.get(field_name)
        if not isinstance(values, list):
            return None
        doc[field_name] = [*values, item(values)]
        return doc

    return _edit(change)


def _in_repository_digest_flipped(doc: Any, rng: random.Random) -> Any:
    """The digest of an artifact kept in the repository (one kept outside cannot be hashed)."""
    kept = [a for a in doc["artifacts"] if a.get("in_repository", True)]
    artifact = rng.choice(kept)
    digest = artifact["sha256"]
    at = rng.randrange(len(digest))
    artifact["sha256"] = digest[:at] + ("0" if digest[at] != "0" else "1") + digest[at + 1 :]
    return doc


def _first_legacy_line_changed(_rng: random.Random, data: bytes) -> bytes | None:
    first, sep, rest = data.partition(b"\n")
    if not first:
        return None
    record = json.loads(first)
    record["changes"] = [*record.get("changes", []), "rewritten"]
    return json.dumps(record).encode() + sep + rest


DELTAS = Family(
    "deltas",
    targets=[
        Target(
            DELTA,
            (DELTA,),
            invalid={
                "no-source": _without("source"),
                "no-started_at": _without("started_at"),
                "no-updated_at": _without("updated_at"),
                "no-changes": _without("changes"),
                "blank-source": _with("source", *BLANKS),
                "changes-not-strings": _with("changes", [42], "x", [None], {"a": "b"}),
                "blank-change": _with("changes", *[[b] for b in BLANKS]),
                "bad-started_at": _with("started_at", "yesterday", "2026-13-01", "", 20260922),
                "renamed-start": _with("started_at", "2026-01-02T03:04:05+00:00", "2025-12-31"),
                "not-an-object": _edit(lambda d, r: r.choice([[d], "x", 1, None])),
            },
        ),
        Target(FROZEN, (FROZEN,), invalid={"no-source": _without("source")}),
        Target(LEGACY, (LEGACY,), json=False, invalid={"torn-end": _append(b'{"time":"20')}),
        Target(f"{EX}/deltalayer/AGENTS.md", (f"{EX}/deltalayer/AGENTS.md",), json=False),
    ],
    donors=[
        "deltalayer/prototype/examples/.deltalayer/changes/2026-09-21T16-40-00p08-00--agent.json",
        "deltalayer/prototype/examples/.deltalayer/changes.jsonl",
        "deltalayer/evidence/workbench-20260921/changes.jsonl",
        "deltalayer/experiments/public-deltas.jsonl",
    ],
    history=[
        HistoryCase("frozen-edited", FROZEN, lambda _r, d: d.rstrip(b"\n") + b" \n", "DL207"),
        HistoryCase("legacy-rewritten", LEGACY, _first_legacy_line_changed, "DL209"),
        HistoryCase(
            "updated_at-back",
            DELTA,
            _with("updated_at", "2026-09-22T14:10:00+02:00"),
            "DL205",
            trailer=True,
        ),
    ],
)

CAPTURES = Family(
    "captures",
    targets=[
        Target(
            f"{CAPTURE_DIR}/capture.json",
            (CAPTURE_DIR,),
            invalid={"value-changed": _edit(_changed_leaf)},
        ),
        Target(
            f"{CAPTURE_DIR}/manifest.json",
            (CAPTURE_DIR,),
            invalid={
                "digest-flipped": _hex_flip,
                "size-off": _edit(lambda d, _r: {**d, "capture_bytes": d["capture_bytes"] + 1}),
                "leaves-directory": _with("capture_file", "../turn-0007/capture.json", "/etc/x"),
                "names-nothing": _with("capture_file", "missing.json"),
                "no-schema_version": _without("schema_version"),
            },
        ),
        Target(f"{CAPTURE_DIR}/recovery.reader.json", (CAPTURE_DIR,)),
        Target(
            f"{DECISION_DIR}/delivery.json",
            (DECISION_DIR,),
            invalid={"digest-flipped": _hex_flip},
        ),
        Target(f"{DECISION_DIR}/cycle-delta.json", (DECISION_DIR,)),
        Target(f"{DECISION_DIR}/required-context.json", (DECISION_DIR,)),
        Target(f"{DECISION_DIR}/projection.json", (DECISION_DIR,)),
    ],
    donors=["dsh/evidence/memory-injections/WORKING_STATE.json"],
    history=[
        HistoryCase(
            "capture-rewritten",
            f"{CAPTURE_DIR}/capture.json",
            _edit(_changed_leaf),
            "CX201",
        ),
    ],
)

#: what JSON.stringify writes for a string cut inside an emoji: DSH reads it (a WS120 warning)
JS_WRITTEN = ("lone-surrogate",)

WORKING_STATE = Family(
    "working_state",
    targets=[
        Target(
            STATE,
            (STATE,),
            invalid={
                "schema_version": _with("schema_version", 6, 8, "7", None),
                "known-not-a-list": _with("known", "text", 1, {"a": "b"}),
                "known-twice": _added_item("known", lambda items: items[0]),
                "known-padded": _added_item("known", lambda _i: " padded "),
                "known-edited": _edit(
                    lambda d, _r: {**d, "known": [*d["known"][:-1], d["known"][-1] + "!"]}
                ),
                "no-decisions": _without("decisions"),
            },
            allowed=JS_WRITTEN,
        ),
        Target(
            f"{EX}/working-state/.dsh/project/RUNTIME_POLICY.json",
            (f"{EX}/working-state",),
            allowed=JS_WRITTEN,
        ),
        Target(
            f"{EX}/working-state/.dsh/project/state.json",
            (f"{EX}/working-state",),
            allowed=JS_WRITTEN,
        ),
        Target(
            f"{EX}/working-state/notes/turn-12.projection.json",
            (f"{EX}/working-state",),
            allowed=("bom", *JS_WRITTEN),
        ),
    ],
    donors=[
        "dsh/evidence/memory-injections/WORKING_STATE.json",
        "dsh/derived/live-log-2026-08-25-qualification-v080.WORKING_STATE.reconstructed.json",
    ],
    history=[
        HistoryCase("schema-down", STATE, _with("schema_version", 6), "WS203"),
    ],
)

PROVENANCE = Family(
    "provenance",
    targets=[
        Target(
            SUMS,
            (SUMS,),
            json=False,
            invalid={
                "digest-flipped": _hex_flip,
                "listed-twice-other-digest": _listed_again_with_another_digest,
                "not-a-sums-line": _append(b"this is not a checksum line\n"),
                "names-nothing": _append(b"0" * 64 + b"  examples/provenance/evidence/none.txt\n"),
            },
        ),
        Target(
            LOG,
            (SUMS,),
            json=False,
            invalid={"listed-bytes-changed": lambda r, d: d + bytes([r.randrange(256)])},
        ),
        Target(
            f"{EX}/provenance/PROVENANCE.json",
            (f"{EX}/provenance/PROVENANCE.json",),
            invalid={"digest-flipped": _edit(_in_repository_digest_flipped)},
        ),
    ],
    donors=[
        "dsh/evidence/provenance/SHA256SUMS.txt",
        "deltalayer/experiments/public-provenance.json",
    ],
    history=[
        HistoryCase("entry-removed", SUMS, lambda _r, d: d.split(b"\n", 1)[1], "PV202"),
    ],
)

SESSIONS = Family(
    "sessions",
    targets=[
        Target(
            f"{SESSION}/meta.json",
            (f"{EX}/openprogram",),
            invalid={
                "not-an-object": _edit(lambda d, r: r.choice([[d], "x", 1, None])),
                "head-names-nothing": _with("head_id", "nope", ""),
            },
        ),
        Target(
            f"{SESSION}/history/0001-u-1a2b3c4d.json",
            (f"{EX}/openprogram",),
            invalid={
                "bad-role": _with("role", "robot", "", None),
                "no-caller": _without("caller"),
                "extra-key": _with("extra", 1),
            },
        ),
        Target(f"{SESSION}/history/0002-l-1a2b3c4d_reply.json", (f"{EX}/openprogram",)),
        Target(f"{EX}/openprogram/.openprogram/sessions/index.json", (f"{EX}/openprogram",)),
        Target(f"{EX}/openprogram/.openprogram/sessions/locations.json", (f"{EX}/openprogram",)),
        Target(f"{EX}/openprogram/.openprogram/projects/projects.json", (f"{EX}/openprogram",)),
    ],
    donors=[
        "openprogram/synthetic/home/alice/.openprogram/sessions/local_8b21e47a90/meta.json",
        "openprogram/synthetic/home/alice/.openprogram/sessions/local_8b21e47a90/history/"
        "0002-l-64fa3073579f_reply.json",
        "openprogram/synthetic/home/alice/.openprogram/sessions/index.json",
        "openprogram/synthetic/home/alice/.openprogram/projects/projects.json",
    ],
)

FAMILIES = {f.name: f for f in (DELTAS, CAPTURES, WORKING_STATE, PROVENANCE, SESSIONS)}


def donor_bytes(corpus: Path, family: Family) -> list[bytes]:
    """The corpus files of ``family`` (the corpus must be there: it is the fuzzer's input)."""
    return [(corpus / rel).read_bytes() for rel in family.donors]
