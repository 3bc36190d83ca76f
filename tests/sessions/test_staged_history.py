"""The commit being made, where the history rules can find nothing: the sessions family answers
without them (the commit hook of another family's files imports none), and answers as they do."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from continuity_checks.checks.sessions.family import SessionsFamily
from continuity_checks.core.config import Config
from continuity_checks.core.family import STAGED, Change, Commit, CommitContext
from continuity_checks.core.git.log import RawChange
from continuity_checks.core.snapshot import WorkTree
from tests.conftest import Symlink, write_tree

LIMIT = 1 << 24
META = json.dumps({"id": "s", "head_id": "1a2b3c4d_reply"})
#: paths of every kind the rules look at (session repository, registries, memory sources,
#: OpenProgram's state in a project) and of none; no path is another's directory
_PATHS = (
    "meta.json",
    "history/0001-u-1a2b3c4d.json",
    ".openprogram/settings.json",
    ".openprogram/sessions/s1/meta.json",
    "memory/sources/_v2/a.md",
    "memory/sources/b.md",
    "sources/c.md",
    "sessions/index.json",
    "sessions/s2/meta.json",
    "sessions/s2/history/0001-u-1a2b3c4d.json",
    "memory/topics/t.md",
    ".deltalayer/changes/d.json",
    "notes.txt",
)
_CONTENTS = st.sampled_from(["a", "ab", "{}", META, Symlink("notes.txt"), Symlink("missing")])
_TREES = st.dictionaries(st.sampled_from(_PATHS), _CONTENTS, max_size=5)


def being_made(
    tmp: Path, family: SessionsFamily, before: Mapping[str, str], after: Mapping[str, str]
) -> CommitContext:
    """The commit being made from ``before`` (``HEAD``'s files) to ``after`` (the index's), as
    the engine hands it to a family: every changed path, the claimed ones as changes."""
    left, right = write_tree(tmp / "head", before), write_tree(tmp / "index", after)
    blobs: dict[str, bytes] = {}
    changes, paths = [], []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        status = "A" if old is None else "D" if new is None else "M"
        ids = (None if old is None else f"b:{path}", None if new is None else f"a:{path}")
        modes = ("", "")
        for side, (blob, content) in enumerate(zip(ids, (old, new), strict=True)):
            if blob is not None and content is not None:
                blobs[blob] = content.encode()
                mode = "120000" if isinstance(content, Symlink) else "100644"
                modes = (mode, modes[1]) if side == 0 else (modes[0], mode)
        paths.append(RawChange(path, status, *ids, *modes))
        kind = family.claims(path)
        if kind is not None:
            changes.append(Change(path, kind, status, *ids, blobs.get, modes[1]))
    commit = Commit(STAGED, ("p" * 40,), "", {}, {})
    return CommitContext(commit, changes, WorkTree(left, LIMIT), WorkTree(right, LIMIT), paths)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_TREES, _TREES)
# a rule of each kind that finds something, and the commit the shortcut answers
@example({}, {".deltalayer/changes/d.json": "{}"})  # another family's file: nothing to find
@example({"meta.json": META}, {"meta.json": META, "history/0001-u-1a2b3c4d.json": "a"})  # SS205
@example({"memory/sources/b.md": "a"}, {"memory/sources/b.md": "ab"})  # SS210
@example({}, {".openprogram/settings.json": "{}"})  # SS208, brought in
@example({".openprogram/settings.json": "{}"}, {".openprogram/settings.json": "{}", "a": "a"})
@example({"notes.txt": "a"}, {"notes.txt": "a", "memory/topics/t.md": Symlink("notes.txt")})
@example({}, {".deltalayer/changes/d.json": Symlink("notes.txt")})  # a symlink: the rules asked
def test_the_commit_being_made_is_judged_as_the_rules_judge_it(
    tmp_path_factory: object, before: dict[str, str], after: dict[str, str]
) -> None:
    tmp = tmp_path_factory.mktemp("commit")  # type: ignore[attr-defined]
    family = SessionsFamily(Config())
    context = being_made(tmp, family, before, after)
    rules = SessionsFamily(Config()).history  # the rules themselves, on a family of their own
    assert list(family.check_commit(context)) == rules.check_commit(context)
    linked = any(isinstance(content, Symlink) for content in after.values())
    if not before and not linked and not after.keys() - {".deltalayer/changes/d.json"}:
        assert family._history is None  # answered without them: no file, no symlink of its own
