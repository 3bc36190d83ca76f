"""File checks for deltas (``continuity check``): one delta, one legacy file, AGENTS.md, and the
project files beside ``.deltalayer/``."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from continuity_checks.checks.deltas import naming, records, timestamps
from continuity_checks.checks.deltas import rules as dl
from continuity_checks.core import pointer as jp
from continuity_checks.core import schemas, strict_json
from continuity_checks.core.display import json_type, show
from continuity_checks.core.family import Claimed, FileInput
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot
from continuity_checks.core.strict_json import located

DELTA_SCHEMA = "deltalayer-conversation-delta"
LEGACY_SCHEMA = "deltalayer-legacy-record"
DELTA_TIMES = ("started_at", "updated_at")
LEGACY_TIMES = ("time",)
#: the schema the check of a file of each kind validates against
SCHEMAS = {"delta": DELTA_SCHEMA, "legacy": LEGACY_SCHEMA}

# lifecycle and reducer metadata that DeltaLayer v0.2.1 says a delta must not carry
FORBIDDEN_KEYS = frozenset(
    {
        "status", "state", "lifecycle", "reason", "superseded_by", "supersedes", "priority",
        "impact", "type", "before", "after", "seq", "sequence", "sequence_id", "lamport",
        "lamport_clock", "vector_clock",
    }
)  # fmt: skip

#: compiled (by ``re``, once) when an AGENTS.md is first checked
MARKER = rb"<!-- deltalayer-(?:v0|conversation-v0\.2(?:\.1)?) -->"

# upstream's messages (records.py), so that the checker and the helper say the same
_SUBJECT = {
    "source": records.BAD_SOURCE,
    "changes": records.BAD_CHANGES,
    "conversation_id": records.BAD_CONVERSATION_ID,
}


# File mode cannot tell whether the frozen file is committed yet: a freeze only staged (or not
# yet added) can still be mended, so the rule's own hint stays, and the advice to accept the
# finding applies once committed.
FROZEN_HINT = (
    "this delta is frozen: once committed its bytes never change (DL207), so keep it as it is and "
    "accept the finding with `continuity baseline check` (or an [[ignore]] entry)"
)


def _frozen_hint(hint: str | None) -> str:
    if not hint:
        return FROZEN_HINT
    return f"{hint} (while the freeze is not committed); {FROZEN_HINT}"


#: Parses a delta's bytes as ``strict_json.load`` does (with the run's ``max_depth``).
Load = Callable[[bytes], "strict_json.Document | strict_json.Problem"]
#: Parses a stored time as ``timestamps.parse`` does (raising ``TimestampError`` as it does).
ParseTime = Callable[[object], timestamps.Timestamp]


def check_file(
    file: FileInput,
    max_depth: int,
    load: Load | None = None,
    slugs: naming.SourceSlugs | None = None,
    parse: ParseTime = timestamps.parse,
) -> list[Finding]:
    """The findings of one claimed file; a delta is parsed by ``load`` when given (the history
    checks' parses, shared), else by ``strict_json.load``, and its times by ``parse`` (the
    history checks' parses, shared); ``slugs`` keeps the slugs of the sources met (a family's,
    for its run)."""
    if file.kind == "delta":
        findings = check_delta(file, max_depth, load, slugs, parse)
        if findings and naming.is_frozen(file.path):
            # the rules' own hints say to edit the file, which DL207 forbids once it is committed
            return [f._replace(hint=_frozen_hint(f.hint)) for f in findings]
        return findings
    if file.kind == "legacy":
        return check_legacy(file, max_depth)
    if file.kind == "nested":
        store = file.path[: file.path.rindex(".deltalayer/changes/") + len(".deltalayer/changes")]
        return [
            dl.NESTED.finding(
                file.path,
                f"expected a delta directly in {store}/ (DeltaLayer reads no subdirectory), "
                f"found it in {file.path.rpartition('/')[0]}/",
            )
        ]
    if file.kind == "temp":
        return [
            dl.STRAY_TEMP.finding(
                file.path, "expected no temporary files in .deltalayer/changes, found one"
            )
        ]
    return check_agents(file)


def compile_schemas(kinds: Collection[str]) -> None:
    """Compiles the schemas the checks of files of ``kinds`` validate against (each once a
    process: ``schemas.validator``)."""
    for kind in kinds:
        if kind in SCHEMAS:
            schemas.validator(SCHEMAS[kind])


# --- records --------------------------------------------------------------------------------


def check_record(
    doc: strict_json.Document,
    path: str,
    schema: str,
    time_keys: Sequence[str],
    parse: ParseTime = timestamps.parse,
) -> tuple[list[Finding], dict[str, timestamps.Timestamp]]:
    """Schema and timestamp findings for one record, and its parsed timestamps (by
    ``parse``)."""
    value = doc.value
    findings: list[Finding] = []
    times: dict[str, timestamps.Timestamp] = {}
    if not isinstance(value, dict):
        message = records.NOT_OBJECT if schema == DELTA_SCHEMA else records.LEGACY_NOT_OBJECT
        found = f"{message}; found {json_type(value)}"
        return [located(dl.NOT_OBJECT, doc, path, "", found)], times
    for key in time_keys:
        if key in value:
            try:
                times[key] = parse(value[key])
            except timestamps.TimestampError as exc:
                findings.append(
                    located(
                        dl.BAD_TIMESTAMP,
                        doc,
                        path,
                        jp.append("", key),
                        f"{key}: {exc}; found {show(value[key])}",
                    )
                )
    validator = schemas.validator(schema)
    if not validator.is_valid(value):
        findings.extend(_schema_findings(doc, value, path, schema, time_keys, validator))
    return findings, times


def _schema_findings(
    doc: strict_json.Document,
    value: dict[str, object],
    path: str,
    schema: str,
    time_keys: Sequence[str],
    validator: schemas.Validator,
) -> list[Finding]:
    """The findings of ``value`` (the object ``doc`` holds) where the schema refuses it, but
    for its timestamps (check_record's own)."""
    findings: list[Finding] = []

    def at(rule: Rule, pointer: str, message: str) -> Finding:
        return located(rule, doc, path, pointer, message)

    required = schemas.load(schema)["required"]
    missing = [k for k in required if k not in value]
    if missing:
        findings.append(
            at(
                dl.MISSING_KEY,
                "",
                f"expected keys {', '.join(required)}; missing {', '.join(missing)}",
            )
        )
    for error in validator.errors(value):
        parts = jp.tokens(error.pointer)
        if not parts or parts[0] in time_keys:
            continue  # the object itself (missing keys, above) or a timestamp (parsed above)
        field = parts[0]
        found = show(jp.value_or_none(value, error.pointer))
        if field == "changes" and len(parts) == 2 and error.keyword == "pattern":
            findings.append(
                at(
                    dl.EMPTY_CHANGE,
                    error.pointer,
                    f"change items must say something; found {found}",
                )
            )
            continue
        rule = {"source": dl.BAD_SOURCE, "changes": dl.BAD_CHANGES}.get(
            field, dl.BAD_CONVERSATION_ID
        )
        subject = _SUBJECT[field]
        if field == "conversation_id" and schema == LEGACY_SCHEMA:
            subject = records.LEGACY_BAD_CONVERSATION_ID
        findings.append(at(rule, error.pointer, f"{subject}; found {found}"))
    return findings


# --- a Conversation Delta ----------------------------------------------------------------------


def check_delta(
    file: FileInput,
    max_depth: int,
    load: Load | None = None,
    slugs: naming.SourceSlugs | None = None,
    parse: ParseTime = timestamps.parse,
) -> list[Finding]:
    data = file.data
    doc = (
        strict_json.load(data, max_depth=max_depth, compact_proof=True)
        if load is None
        else load(data)
    )
    if isinstance(doc, strict_json.Problem):
        return [doc.finding(file.path)]
    findings, times = check_record(doc, file.path, DELTA_SCHEMA, DELTA_TIMES, parse)
    record_valid = not findings  # before the findings of the rules below join them
    value = doc.value
    if not isinstance(value, dict):
        return findings
    for key in () if FORBIDDEN_KEYS.isdisjoint(value) else value:
        if key in FORBIDDEN_KEYS:
            findings.append(
                located(
                    dl.FORBIDDEN_KEY,
                    doc,
                    file.path,
                    jp.append("", key),
                    f"expected no lifecycle or reducer metadata, found key {key!r}",
                )
            )
    started, updated = times.get("started_at"), times.get("updated_at")
    if started and updated and timestamps.earlier(updated, started):
        findings.append(
            located(
                dl.UPDATED_BEFORE_STARTED,
                doc,
                file.path,
                "/updated_at",
                f"expected updated_at at or after started_at {started.isoformat()}, "
                f"found {updated.isoformat()}",
            )
        )
    source = value.get("source")
    if started and isinstance(source, str) and source.strip():
        name = file.path.rpartition("/")[2]
        expected = naming.stem(started.slug(), source, slugs)
        # the name itself with .json or .frozen.json (most deltas), else with a --N suffix
        plain = name[len(expected) :] in _SUFFIXES and name.startswith(expected)
        if not plain and naming.collision_of(name, expected) is None:
            suffix = naming.FROZEN_SUFFIX if naming.is_frozen(name) else naming.SUFFIX
            findings.append(
                dl.NAME_MISMATCH.finding(
                    file.path,
                    f"expected file name {expected}{suffix} (or with a --N suffix) from started_at "
                    f"and source, found {name}",
                )
            )
    if record_valid and not (data[-1:] == b"\n" and doc.compact):
        findings.append(
            dl.NOT_COMPACT.finding(
                file.path,
                "expected one line of compact JSON ending in a newline, found other formatting",
                line=1,
                column=1,
            )
        )
    return findings


_SUFFIXES = (naming.SUFFIX, naming.FROZEN_SUFFIX)


#: Claimed deltas in one directory from which listing it is cheaper than one look-up each.
LIST_FROM = 64
#: The twins found in one directory (the plain names), and the count of its names then.
Twins = tuple[int, set[str]]


def twins(snapshot: Snapshot, claimed: Iterable[Claimed]) -> list[Finding]:
    """X.json and X.frozen.json side by side; reported once, on X.json. A twin claimed in this
    run is known without asking. Otherwise a few claimed deltas (the commit hook) cost one
    look-up each, whatever the size of the store, and many (``--all``) one listing per
    directory."""
    deltas, _ = _by_kind(claimed)
    return _twins(snapshot, deltas)


def _by_kind(
    claimed: Iterable[Claimed], leave_out: str | None = None
) -> tuple[dict[str, list[str]], set[str]]:
    """The claimed deltas' names by directory, and the paths of every other kind claimed but
    ``leave_out``."""
    grouped = ByKind(leave_out)
    for path, kind in claimed:
        grouped.add(path, kind)
    return grouped.deltas, grouped.others


class ByKind:
    """Claimed paths grouped as they come (:meth:`add`): the deltas' names by directory
    (``deltas``), and the paths of every other kind but ``leave_out`` (``others``)."""

    __slots__ = ("deltas", "leave_out", "others")

    def __init__(self, leave_out: str | None) -> None:
        self.leave_out = leave_out
        self.deltas: dict[str, list[str]] = {}
        self.others: set[str] = set()

    def add(self, path: str, kind: str) -> None:
        if kind == "delta":
            parent, _, name = path.rpartition("/")
            names = self.deltas.get(parent)
            if names is None:
                self.passed()
                names = self.deltas[parent] = []
            names.append(name)
        elif kind != self.leave_out:
            self.passed()
            self.others.add(path)

    def passed(self) -> None:
        """Called when a path comes that is not a delta of the last directory of deltas
        added (the stream has most often moved past that directory): nothing here."""

    def leave_out_paths(self, paths: Collection[str]) -> None:
        """Drops ``paths`` from both groups."""
        self.others.difference_update(paths)
        for parent, names in self.deltas.items():
            prefix = f"{parent}/"
            names[:] = [name for name in names if prefix + name not in paths]


def _twins(
    snapshot: Snapshot, deltas: dict[str, list[str]], known: Mapping[str, Twins] | None = None
) -> list[Finding]:
    """The findings of the twins among ``deltas``; a directory of ``known`` whose count of
    names is still the one its twins were found with takes them from there."""
    findings = []
    for parent, names in sorted(deltas.items()):
        early = known.get(parent) if known else None
        if early is not None and early[0] == len(names):
            pairs = early[1]
        elif len(names) >= LIST_FROM:
            pairs = _listed_twins(snapshot, parent, names)
        else:
            pairs = _looked_up_twins(snapshot, parent, set(names))
        for plain in sorted(pairs):
            frozen_name = naming.frozen_name(plain)
            findings.append(
                dl.FROZEN_TWIN.finding(
                    f"{parent}/{plain}", f"expected either {plain} or {frozen_name}, found both"
                )
            )
    return findings


def _looked_up_twins(snapshot: Snapshot, parent: str, claimed: set[str]) -> set[str]:
    """The plain names (X.json) of the twins among ``claimed`` names of ``parent``: the other
    side from the claimed names, else one look-up each."""
    found = set()
    for name in claimed:
        frozen = naming.is_frozen(name)
        other = naming.unfrozen_name(name) if frozen else naming.frozen_name(name)
        if other in claimed:
            if frozen:
                continue  # found from the X.json side, also claimed
        elif not snapshot.exists(f"{parent}/{other}"):
            continue
        found.add(other if frozen else name)
    return found


def _listed_twins(snapshot: Snapshot, parent: str, claimed: Collection[str]) -> set[str]:
    """:func:`_looked_up_twins` from one listing of ``parent``, instead of a test per name: a
    claimed X.json whose X.frozen.json is there, and the X.json of a claimed X.frozen.json,
    when that X.json is there (and not claimed: then it is found from its own side). The sets
    made are of the frozen names and their plain names alone, not of every name there."""
    listing = snapshot.list(parent)
    listed = listing if isinstance(listing, list) else []
    frozen = _frozen(claimed)  # the claimed X.frozen.json
    present = frozen | _frozen(listed)  # every X.frozen.json claimed or listed
    plains = {naming.unfrozen_name(name) for name in present}
    plains_claimed = plains.intersection(claimed)
    plains_listed = plains.intersection(listed)
    found = set()
    for name in present:
        plain = naming.unfrozen_name(name)
        if plain in plains_claimed:
            if plain not in present:  # an X.frozen.json is frozen itself, never the plain side
                found.add(plain)
        elif name in frozen and plain in plains_listed:
            found.add(plain)
    return found


def _frozen(names: Iterable[str]) -> set[str]:
    """The names of ``names`` that end with ``.frozen.json`` (``in`` first: a name without it
    is told apart for less than ``endswith`` costs)."""
    suffix = naming.FROZEN_SUFFIX
    return {name for name in names if suffix in name and name.endswith(suffix)}


# --- legacy changes.jsonl ----------------------------------------------------------------------


def check_legacy(file: FileInput, max_depth: int) -> list[Finding]:
    findings: list[Finding] = []
    data = file.data
    lines = data.split(b"\n")
    terminated = data.endswith(b"\n")
    if terminated:
        lines.pop()
    last = len(lines)
    for number, raw in enumerate(lines, start=1):
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line.strip():
            continue
        doc = strict_json.load(line, max_depth=max_depth, first_line=number)
        torn = number == last and not terminated
        if isinstance(doc, strict_json.Problem):
            if torn:
                findings.append(
                    dl.TORN_LINE.finding(
                        file.path,
                        f"expected a complete record ending in a newline, found a torn line "
                        f"({doc.message})",
                        line=number,
                        column=doc.column,
                    )
                )
            else:
                findings.append(doc.finding(file.path))
            continue
        record_findings, _ = check_record(doc, file.path, LEGACY_SCHEMA, LEGACY_TIMES)
        findings.extend(record_findings)
        if torn:
            findings.append(
                dl.NO_FINAL_NEWLINE.finding(
                    file.path,
                    "expected the last record to end in a newline, found none",
                    line=number,
                    column=len(line.decode("utf-8", "replace")) + 1,
                )
            )
    return findings


# --- AGENTS.md, PROJECT.md -----------------------------------------------------------------------


def check_agents(file: FileInput) -> list[Finding]:
    if not file.snapshot.is_dir(posixpath.join(file.path.rpartition("/")[0], ".deltalayer")):
        return []
    markers = list(re.finditer(MARKER, file.data))
    if not markers:
        return [
            dl.NO_MARKER.finding(
                file.path,
                "expected a DeltaLayer continuity section marked <!-- deltalayer-conversation-"
                "v0.2.1 -->, found no DeltaLayer marker",
            )
        ]
    if len(markers) > 1:
        second = markers[1]
        line = file.data.count(b"\n", 0, second.start()) + 1
        return [
            dl.DOUBLE_SECTION.finding(
                file.path,
                f"expected one continuity section, found {len(markers)} markers",
                line=line,
                column=second.start() - file.data.rfind(b"\n", 0, second.start()),
            )
        ]
    return []


def project_roots(directories: Iterable[str]) -> set[str]:
    """The project roots (directories holding ``.deltalayer/``) of files in ``directories``."""
    roots = set()
    for directory in directories:
        head, sep, _ = f"{directory}/".rpartition(".deltalayer/")
        if sep and (not head or head.endswith("/")):
            roots.add(head)
    return roots


def check_tree(snapshot: Snapshot, claimed: list[Claimed]) -> list[Finding]:
    """The twins and the project files of the claimed deltas (:class:`DeltasTree`, fed
    ``claimed``)."""
    tree = DeltasTree(snapshot)
    for path, kind in claimed:
        tree.add(path, kind)
    return tree.finish(())


def tree_may_find(path: str, snapshot: Snapshot) -> bool:
    """Whether :class:`DeltasTree`, fed the delta ``path``, can find anything it would not
    find without it: its twin, or a project file missing beside its store."""
    parent, _, name = path.rpartition("/")
    twin = naming.unfrozen_name(name) if naming.is_frozen(name) else naming.frozen_name(name)
    if snapshot.exists(f"{parent}/{twin}"):
        return True
    roots = project_roots((parent,))
    return any(
        not (snapshot.exists(f"{root}PROJECT.md") and snapshot.exists(f"{root}AGENTS.md"))
        for root in roots
    )


class DeltasTree(ByKind):
    """The family's :class:`~continuity_checks.core.family.TreeCheck`: the claimed files
    grouped as they stream by (a delta in a subdirectory, DL114, is no member of its project:
    no reader sees it), judged at the end: twins, and PROJECT.md and AGENTS.md beside each
    store. A directory of LIST_FROM deltas or more has its twins found when the stream moves
    past it (while workers still check files), kept for the end while no delta was added to
    it since and every claimed file could be read."""

    __slots__ = ("early", "snapshot")

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__("nested")
        self.snapshot = snapshot
        self.early: dict[str, Twins] = {}

    def passed(self) -> None:
        if not self.deltas:
            return
        parent = next(reversed(self.deltas))  # the directory of deltas added last
        count = len(self.deltas[parent])
        early = self.early.get(parent)
        if count >= LIST_FROM and (early is None or early[0] != count):
            twins = _listed_twins(self.snapshot, parent, self.deltas[parent])
            self.early[parent] = (count, twins)

    def finish(self, unread: Collection[str]) -> list[Finding]:
        if unread:
            self.leave_out_paths(unread)
            self.early.clear()  # found with names that are now left out
        deltas = {parent: names for parent, names in self.deltas.items() if names}
        return _project_findings(self.snapshot, deltas, self.others, self.early)


def _project_findings(
    snapshot: Snapshot,
    deltas: dict[str, list[str]],
    others: set[str],
    known: Mapping[str, Twins] | None = None,
) -> list[Finding]:
    """The twins among ``deltas`` (names by directory; ``known`` as for :func:`_twins`), and
    the project files missing beside the stores of ``deltas`` and ``others`` (paths)."""
    findings = _twins(snapshot, deltas, known)
    directories = deltas.keys() | {path.rpartition("/")[0] for path in others}
    for project in sorted(project_roots(directories)):
        if not snapshot.exists(f"{project}PROJECT.md"):
            findings.append(
                dl.NO_PROJECT.finding(
                    f"{project}PROJECT.md",
                    "expected PROJECT.md beside .deltalayer/, found none",
                )
            )
        agents = f"{project}AGENTS.md"
        if agents not in others and not snapshot.exists(agents):
            findings.append(
                dl.NO_MARKER.finding(
                    agents,
                    "expected AGENTS.md with a DeltaLayer continuity section beside .deltalayer/, "
                    "found no AGENTS.md",
                )
            )
    return findings
