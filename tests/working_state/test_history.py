"""Every WS2xx rule: a commit it catches (rule, path, pointer, line) and near-misses it passes.

The checks are driven through the family with a CommitContext holding the real bytes of both
versions, as history mode hands them over.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from continuity_checks.checks import all_rules
from continuity_checks.checks.working_state.family import WorkingStateFamily
from continuity_checks.core.config import Config
from continuity_checks.core.family import Change, Commit, CommitContext
from continuity_checks.core.git.log import RawChange
from continuity_checks.core.snapshot import WorkTree
from continuity_checks.core.symlinks import SYMLINK
from tests.helpers.working_state import CA, CA2, COMPACTED, CP2, WS, line_of, version

SHA = "c0ffee" + "0" * 34


class Link(bytes):
    """The bytes of a symlink (the path it names), committed with git's mode 120000."""


def run(
    tmp_path: Path, changes: list[tuple[str, str, bytes | None, bytes | None]]
) -> list[tuple[str, str, str | None, int | None]]:
    """Check one commit with ``changes`` (path, status, old bytes, new bytes; new bytes that
    are a :class:`Link` are a symlink's, and may be at a path the family does not claim)."""
    family = WorkingStateFamily(Config())
    blobs: dict[str, bytes] = {}
    made = []
    paths = []
    for index, (path, status, old, new) in enumerate(changes):
        ids = []
        for side, data in (("old", old), ("new", new)):
            if data is None:
                ids.append(None)
            else:
                blobs[f"{side}{index}"] = data
                ids.append(f"{side}{index}")
        mode = "" if new is None else SYMLINK if isinstance(new, Link) else "100644"
        paths.append(RawChange(path, status, ids[0], ids[1], "100644" if old else "", mode))
        kind = family.claims(path)
        assert kind is not None or isinstance(new, Link), path
        if kind is not None:
            made.append(Change(path, kind, status, ids[0], ids[1], blobs.__getitem__, mode))
    tree = WorkTree(tmp_path, 1 << 20)
    commit = Commit(SHA, ("p" * 40,), "a commit", {})
    findings = list(family.check_commit(CommitContext(commit, made, tree, tree, paths)))
    for finding in findings:
        assert finding.commit == SHA and "expected" in finding.message
    return [(f.rule, f.path, f.pointer, f.line) for f in findings]


BOUNDARY = "/checkpoint_meta/prune_safe_through_seq"
DECREASED = version("compaction-evacuation", prune_safe_through_seq=90, prune_audit_id=CA2)
NULLED = version("investigative-state", checkpoint_id=CP2, prune_safe_through_seq=None)
NO_AUDIT = version("investigative-state", checkpoint_id=CP2, prune_safe_through_seq=110)
SAME_AUDIT = version("compaction-evacuation", checkpoint_id=CP2, prune_safe_through_seq=110)
OLDER_SCHEMA = COMPACTED.replace(b'"schema_version": 7', b'"schema_version": 6')
EDITED = version("compaction-evacuation", content="a fact added by hand")
FIRST = version(checkpoint_id=CP2, prune_safe_through_seq=5)
RUNTIME = ".dsh/runtime/transactions/tx-commit-1-ab/journal.json"

BAD = [
    ("WS201 lower boundary", [(WS, "M", COMPACTED, DECREASED)],
     [("WS201", WS, BOUNDARY, line_of(DECREASED, "prune_safe_through_seq"))]),
    ("WS201 boundary dropped", [(WS, "M", COMPACTED, NULLED)],
     [("WS201", WS, BOUNDARY, line_of(NULLED, "prune_safe_through_seq"))]),
    ("WS202 investigative checkpoint moves it", [(WS, "M", COMPACTED, NO_AUDIT)],
     [("WS202", WS, BOUNDARY, line_of(NO_AUDIT, "prune_safe_through_seq"))]),
    ("WS202 no new audit", [(WS, "M", COMPACTED, SAME_AUDIT)],
     [("WS202", WS, BOUNDARY, line_of(SAME_AUDIT, "prune_safe_through_seq"))]),
    ("WS202 first boundary without audit", [(WS, "M", version(), FIRST)],
     [("WS202", WS, BOUNDARY, line_of(FIRST, "prune_safe_through_seq"))]),
    ("WS203 older schema", [(WS, "M", COMPACTED, OLDER_SCHEMA)], [("WS203", WS, "/schema_version", 2)]),
    ("WS204 edited under the same checkpoint", [(WS, "M", COMPACTED, EDITED)],
     [("WS204", WS, "/checkpoint_meta/checkpoint_id", line_of(EDITED, '"checkpoint_id"'))]),
    ("WS205 journal added", [(RUNTIME, "A", None, b"{}\n")], [("WS205", RUNTIME, None, None)]),
    ("WS205 once per journal", [(RUNTIME, "A", None, b"{}\n"), (RUNTIME.replace("journal.json", "after/000.bin"), "A", None, b"x")],
     [("WS205", RUNTIME.replace("journal.json", "after/000.bin"), None, None)]),
    ("WS205 lock owner changed", [(".dsh/runtime/project.lock/owner.json", "M", b"{}\n", b'{"pid":2}\n')],
     [("WS205", ".dsh/runtime/project.lock/owner.json", None, None)]),
    ("WS206 state replaced by a symlink", [(WS, "M", COMPACTED, Link(b"../../backup/ws.json"))],
     [("WS206", WS, None, None)]),
    ("WS206 runtime directory as a symlink", [(".dsh/runtime", "A", None, Link(b"../elsewhere"))],
     [("WS206", ".dsh/runtime", None, None)]),
    ("WS206 the .dsh directory as a symlink, its files gone with it",
     [(".dsh", "A", None, Link(b"copy")), (WS, "D", COMPACTED, None)], [("WS206", ".dsh", None, None)]),
    ("WS206 a projection as a symlink", [("x.projection.json", "A", None, Link(b"y.projection.json"))],
     [("WS206", "x.projection.json", None, None)]),
    ("WS205, not WS206, for a runtime file as a symlink", [(RUNTIME, "A", None, Link(b"x"))],
     [("WS205", RUNTIME, None, None)]),
]  # fmt: skip

GOOD = [
    ("a new audit advances the boundary",
     [(WS, "M", COMPACTED, version("compaction-evacuation", checkpoint_id=CP2, prune_safe_through_seq=110,
                                   prune_audit_id=CA2))]),
    ("an investigative checkpoint carries the boundary",
     [(WS, "M", COMPACTED, version(content="new fact", checkpoint_id=CP2, prune_safe_through_seq=100))]),
    ("the first boundary through /compress", [(WS, "M", version(), COMPACTED.replace(CA.encode(), CA2.encode()))]),
    ("content changes with a new checkpoint", [(WS, "M", version(), version(content="x", checkpoint_id=CP2))]),
    ("metadata alone changes", [(WS, "M", version(), version(session_revision=130))]),
    ("a new state", [(WS, "A", None, COMPACTED)]),
    ("a deleted state", [(WS, "D", COMPACTED, None)]),
    ("a runtime file removed", [(RUNTIME, "D", b"{}\n", None)]),
    ("an unparseable version is file mode's", [(WS, "M", b"{", DECREASED)]),
    ("a project file", [(".dsh/project/state.json", "M", b"{}\n", b"[]\n")]),
    ("a symlink that is none of DSH's", [("docs/runtime", "A", None, Link(b"../.dsh/runtime"))]),
    ("a directory named project outside .dsh", [("project", "A", None, Link(b"elsewhere"))]),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_commit_is_caught(
    tmp_path: Path,
    changes: list[tuple[str, str, bytes | None, bytes | None]],
    expected: list[tuple[str, str, str | None, int | None]],
) -> None:
    assert run(tmp_path, changes) == expected


@pytest.mark.parametrize("changes", [c[1] for c in GOOD], ids=[c[0] for c in GOOD])
def test_good_commit_passes(
    tmp_path: Path, changes: list[tuple[str, str, bytes | None, bytes | None]]
) -> None:
    assert run(tmp_path, changes) == []


def test_every_ws_history_rule_has_a_bad_commit() -> None:
    caught = {rule for _, _, expected in BAD for rule, *_ in expected}
    assert {r.id for r in all_rules() if r.id.startswith("WS2")} == caught


def test_messages_name_both_sides(tmp_path: Path) -> None:
    family = WorkingStateFamily(Config())
    tree = WorkTree(tmp_path, 1 << 20)
    data = {"o": COMPACTED, "n": DECREASED}
    change = Change(WS, "state", "M", "o", "n", data.__getitem__)
    commit = Commit(SHA, (), "s", {})
    [finding] = family.check_commit(CommitContext(commit, [change], tree, tree))
    assert finding.message == (
        "expected prune_safe_through_seq 100 or more (its last good version's), found a number 90"
    )
