"""Every commit leaves the continuity files consistent, judged against an oracle that knows
nothing of how history mode is built: ``check --all`` on a commit's tree and on its first
parent's.

A random history starts from the shipped ``examples/`` (one repository, the layout that
``continuity check --all --root examples`` passes) and makes one random mutation of one file per
commit: bytes flipped, a truncation, a deletion, an older version of the file restored, a JSON
integer bumped, a rename, a symlink in the file's place; the files mutated include those no
family claims but continuity files depend on (artifacts a ``SHA256SUMS`` or ``PROVENANCE.json``
lists, ``PROJECT.md``, the memory workspace's id). For each commit the oracle is the multiset of
errors that ``check --all`` finds in its tree and not in its parent's. Both halves of the
promise must report each such error at that commit: the commit hook when the commit is made
(``check --staged`` with the staged files pre-commit would pass), and ``verify`` over the whole
history afterwards. Conversely, ``verify`` must not blame a commit for a file-mode error the
oracle does not show as new there.

A failure names the seed and the commit index; ``CONTINUITY_ORACLE_SEEDS=7,8`` and
``CONTINUITY_ORACLE_COMMITS=40`` replay chosen seeds at a chosen length.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.core.baseline import fingerprint
from continuity_checks.core.findings import Finding, Severity
from tests.conftest import EXAMPLES
from tests.fuzz.mutations import delete_key, flip_bits, truncate
from tests.helpers.git import GitRepo, delta, isolate_git, path_of
from tests.helpers.shortcuts import both_ways, rules, run_cli

#: What the repository is judged by, committed once and never mutated (a change to it inside
#: a range is CC011, and verify judges the range by the base's anyway). A session is a git
#: repository, and git cannot store one inside another: SS102 is off, as in this project's own
#: configuration. The limits are high so that no report leaves a finding out.
CONFIG = """\
[rules]
SS102 = "off"

[limits]
max-findings = 10000000
max-findings-per-file = 10000000
"""

#: Files no family claims whose bytes continuity files pin or name: mutated more often than
#: the others, since only they exercise a family's dependents on unclaimed paths.
DEPENDED_ON = (
    "examples/deltalayer/PROJECT.md",
    "examples/openprogram/.openprogram/memory/.scriptorium/workspace-id",
    "examples/provenance/evidence/session-log.txt",
    "examples/provenance/evidence/session-log.redacted.txt",
    "examples/provenance/evidence/usage 2026-08-19 (redacted).csv",
)
#: Files a mutation leaves alone: the configuration the whole history is judged by.
FIXED = frozenset({".continuity.toml"})

DEFAULT_SEEDS = (11, 23, 37)
DEFAULT_COMMITS = 34  # per seed: about 100 commits in the default run
SLOW_SEEDS = (101, 202, 303, 404)
SLOW_COMMITS = 520  # per seed: over 2,000 commits under nox -s slow


def _sizes(seeds: Sequence[int], commits: int) -> list[tuple[int, int]]:
    """The (seed, commits) pairs to run: the given ones, or those the environment names."""
    chosen = os.environ.get("CONTINUITY_ORACLE_SEEDS")
    count = int(os.environ.get("CONTINUITY_ORACLE_COMMITS") or commits)
    picked = [int(s) for s in chosen.split(",")] if chosen else list(seeds)
    return [(seed, count) for seed in picked]


# ----------------------------------------------------------------------------------- the CLI


def errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def key(finding: dict[str, Any]) -> str:
    """A finding as the baseline compares it: rule, path, pointer and message (positions in
    the message masked), without its commit."""
    return fingerprint(
        Finding(
            path=finding["path"],
            line=finding.get("line"),
            column=finding.get("column"),
            rule=finding["rule"],
            message=finding["message"],
            severity=Severity(finding["severity"]),
            pointer=finding.get("pointer"),
        )
    )


def is_file_mode(rule: str) -> bool:
    """File-mode rules are ``CC0xx`` and ``xx1xx``; ``xx2xx`` judge changes, which ``check
    --all`` on a tree cannot see."""
    return rule.startswith("CC0") or rule[2:3] == "1"


#: File-mode rules that ``verify`` documents as reported again at any commit that changes a file
#: in the directory of the file they are about, not only where they first appear: the converse
#: check does not hold them to the oracle there.
#: - CX102 (a named file that leads out of its directory): docs/decisions.md, captures,
#:   "Symlinks": "In history mode ``verify`` reports CX102 with the commit that adds or changes
#:   a family file in the directory".
RESTATED_ON_CHANGE = frozenset({"CX102"})
#: LINKED: a continuity file committed as a symlink is an error at the commit that makes it
#: (DL212, CX203, WS206, PV205, SS211); a later commit that changes only the file it leads to
#: is not followed back to the link (docs/history-checks.md, "Limits"), so what check --all
#: then reads through the link is not asked of that commit.


def restated(finding: dict[str, Any], changed: Sequence[str]) -> bool:
    """Whether ``finding`` is one ``verify`` documents as reported again at a commit that
    changes ``changed``."""
    folder = finding["path"].rpartition("/")[0]
    return finding["rule"] in RESTATED_ON_CHANGE and any(
        p.rpartition("/")[0] == folder for p in changed
    )


def through_a_link(finding: dict[str, Any], linked: set[str]) -> bool:
    """Whether ``finding`` is at, or reads through, a symlink the commit did not change
    (LINKED)."""
    return any(link == finding["path"] or link in finding["message"] for link in linked)


#: COVERED: file-mode errors a history error of the same commit and file names the cause of,
#: so that the family reports the cause alone (docs/decisions.md): an original's bytes changed
#: (PV203), or exempted from its pin (PV204), at the entry that now mismatches; a working state
#: file made a symlink (WS206) that file mode says is one (WS119).
COVERED_BY = {
    "PV103": {"PV203", "PV204"},
    "PV104": {"PV203", "PV204"},
    "PV106": {"PV203", "PV204"},
    "WS119": {"WS206"},
}


#: and any file rule at a node or meta.json that SS205 (a commit writes an invalid one, naming
#: the file rule that fails) reports at the same file.
COVERS_ANY = frozenset({"SS205"})


def covered(finding: dict[str, Any], reported: list[dict[str, Any]]) -> bool:
    causes = COVERED_BY.get(finding["rule"], set()) | COVERS_ANY
    return any(f["rule"] in causes and f["path"] == finding["path"] for f in reported)


def shown(finding: dict[str, Any]) -> str:
    where = f" {finding['pointer']}" if finding.get("pointer") else ""
    return f"{finding['rule']} {finding['path']}{where}: {finding['message']}"


# ------------------------------------------------------------------------------- mutations

#: A JSON string (skipped whole, so no digit inside one is taken) or a number.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')


def bump_integer(rng: random.Random, data: bytes) -> bytes | None:
    """One integer outside strings moved up or down, the rest of the bytes as they were (no
    re-serialisation, so a pinned hash breaks only for the number)."""
    spans = [
        m.span()
        for m in _TOKEN.finditer(data)
        if not m.group().startswith(b'"') and m.group().lstrip(b"-").isdigit()
    ]
    if not spans:
        return None
    start, end = rng.choice(spans)
    value = int(data[start:end])
    step = rng.choice([1, -1, 2, -2, 1000, -1000, -(2 * value) or 1])
    return data[:start] + str(value + step).encode() + data[end:]


def append_line(rng: random.Random, data: bytes) -> bytes:
    return data + rng.choice([b"\n", b"x\n", b'{"extra": 1}\n', b"# note\n"])


#: Byte edits of a regular file's content: None when the edit does not apply to it.
EDITS: dict[str, Callable[[random.Random, bytes], bytes | None]] = {
    "flip bytes": flip_bits,
    "truncate": truncate,
    "bump an integer": bump_integer,
    "delete a JSON key": delete_key,
    "append a line": append_line,
}

#: Each kind of mutation and its weight.
KINDS = {
    "edit": 9,
    "delete": 2,
    "restore": 5,
    "rename": 2,
    "symlink": 2,
}


@dataclass
class Version:
    """A path's content at some commit: a regular file's bytes, or a symlink's target."""

    data: bytes
    link: bool = False


@dataclass
class Step:
    """One commit of the history: what it did, its id, and what the hook said when it was made."""

    index: int
    what: str
    sha: str = ""
    changed: list[str] = field(default_factory=list)  # every path it adds, changes or deletes
    staged_files: list[str] = field(default_factory=list)
    staged: list[dict[str, Any]] = field(default_factory=list)
    new: list[dict[str, Any]] = field(default_factory=list)  # the oracle's new errors
    #: continuity files that are symlinks the commit did not change: see LINKED
    linked: set[str] = field(default_factory=set)


class History:
    """A repository that starts as the shipped examples and takes one random mutation of one
    file per commit, remembering every version each path has had."""

    def __init__(self, repo: GitRepo, rng: random.Random) -> None:
        self.repo = repo
        self.rng = rng
        self.versions: dict[str, list[Version]] = defaultdict(list)
        self._paths: list[str] = []

    def paths(self) -> list[str]:
        """The tracked paths a mutation may touch, as of the last commit."""
        return self._paths

    # what is there now

    def listed(self) -> list[str]:
        listed = self.repo.git("ls-files", "-z").split("\0")
        return sorted(p for p in listed if p and p not in FIXED)

    def current(self, path: str) -> Version | None:
        full = self.repo.path / path
        if full.is_symlink():
            return Version(os.readlink(full).encode(), link=True)
        if full.is_file():
            return Version(full.read_bytes())
        return None

    def record(self) -> None:
        """Each path's version in the tree just committed, when it is new for the path."""
        self._paths = self.listed()
        for path in self._paths:
            version = self.current(path)
            if version is not None and version not in self.versions[path]:
                self.versions[path].append(version)

    # choosing

    def pick(self, candidates: Sequence[str]) -> str:
        weights = [4.0 if p in DEPENDED_ON else 1.0 for p in candidates]
        return self.rng.choices(list(candidates), weights)[0]

    def mutate(self) -> str:
        """Apply one mutation to the work tree and stage it; return what it was. Tries again
        until the index differs from HEAD."""
        for _ in range(100):
            kind = self.rng.choices(list(KINDS), list(KINDS.values()))[0]
            done = getattr(self, f"_{kind}")()
            if done is None:
                continue
            self.repo.git("add", "-A")
            if self.repo.git("diff", "--staged", "--name-only"):
                return str(done)
        raise AssertionError("no mutation changed the tree in 100 tries")

    def _edit(self) -> str | None:
        files = [p for p in self.paths() if not (self.repo.path / p).is_symlink()]
        if not files:
            return None
        path = self.pick(files)
        name = self.rng.choice(list(EDITS))
        new = EDITS[name](self.rng, (self.repo.path / path).read_bytes())
        if new is None:
            return None
        self._write(path, Version(new))
        return f"{name}: {path}"

    def _delete(self) -> str | None:
        paths = self.paths()
        if not paths:
            return None
        path = self.pick(paths)
        (self.repo.path / path).unlink()
        return f"delete: {path}"

    def _restore(self) -> str | None:
        """An older version of a path (re-adding it when it is gone)."""
        choices = [
            (p, v)
            for p, vs in self.versions.items()
            for v in vs
            if v != self.current(p) and self._creatable(p)
        ]
        if not choices:
            return None
        path = self.pick(sorted({p for p, _ in choices}))
        version = self.rng.choice([v for p, v in choices if p == path])
        at = self.versions[path].index(version)
        self._write(path, version)
        return f"restore version {at} ({'link' if version.link else 'file'}): {path}"

    def _rename(self) -> str | None:
        """A path moved to a sibling name: one it had before, or a variant of its own."""
        paths = self.paths()
        if not paths:
            return None
        path = self.pick(paths)
        folder, _, name = path.rpartition("/")
        stem, dot, ext = name.partition(".")
        variants = [
            stem + "-2" + dot + ext,
            stem[:-1] + self.rng.choice("0179aZ") + dot + ext,
            name.replace(".frozen.json", ".json")
            if ".frozen." in name
            else name.replace(".json", ".frozen.json"),
            *(p.rpartition("/")[2] for p in self.versions if p.rpartition("/")[0] == folder),
        ]
        targets = [
            t
            for v in variants
            if v and (t := f"{folder}/{v}" if folder else v) != path and self._creatable(t)
        ]
        targets = [t for t in targets if not os.path.lexists(self.repo.path / t)]
        if not targets:
            return None
        target = self.rng.choice(sorted(set(targets)))
        self.repo.git("mv", "--", path, target)
        return f"rename: {path} -> {target}"

    def _symlink(self) -> str | None:
        """A path replaced by a symlink to another file of the repository."""
        paths = self.paths()
        files = [p for p in paths if (self.repo.path / p).is_file()]
        if len(paths) < 2 or not files:
            return None
        path = self.pick(paths)
        target = self.rng.choice([p for p in files if p != path] or files)
        if target == path:
            return None
        link = os.path.relpath(self.repo.path / target, (self.repo.path / path).parent)
        self._write(path, Version(link.encode(), link=True))
        return f"symlink: {path} -> {target}"

    def _creatable(self, path: str) -> bool:
        """No file stands where one of the path's directories would be, and no directory where
        the path would be."""
        full = self.repo.path / path
        if full.is_dir() and not full.is_symlink():
            return False
        parent = full.parent
        while parent != self.repo.path:
            if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
                return False
            parent = parent.parent
        return True

    def _write(self, path: str, version: Version) -> None:
        full = self.repo.path / path
        if os.path.lexists(full):
            full.unlink()
        full.parent.mkdir(parents=True, exist_ok=True)
        if version.link:
            os.symlink(version.data.decode(), full)
        else:
            full.write_bytes(version.data)

    def staged(self) -> tuple[list[str], list[str]]:
        """Every path the staged change adds, modifies or deletes (a rename as both), and the
        staged files pre-commit passes to a hook: the added, copied, modified, renamed or
        type-changed paths that exist and (the hook's default ``types: [file]``) are not
        symlinks."""
        fields = self.repo.git("diff", "--staged", "--name-status", "--no-renames", "-z")
        parts = fields.rstrip("\0").split("\0") if fields else []
        changes = list(zip(parts[0::2], parts[1::2], strict=True))
        changed = [path for _, path in changes]
        passed = [
            path
            for status, path in changes
            if status in set("ACMRTUXB")
            and os.path.lexists(self.repo.path / path)
            and not (self.repo.path / path).is_symlink()
        ]
        return changed, passed


def tree_errors(repo: GitRepo, sha: str, scratch: Path) -> list[dict[str, Any]]:
    """The oracle's view of one commit: the errors of ``check --all`` on its tree, written out
    with ``git archive`` into a directory of its own (no repository around it)."""
    tree = scratch / sha
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", sha], cwd=repo.path, check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    try:
        _, report, _ = run_cli("check", "--all", "--root", str(tree))
    finally:
        shutil.rmtree(tree)
    return errors(report)


def new_errors(after: list[dict[str, Any]], before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``after - before`` as multisets of findings compared by :func:`key`."""
    known = Counter(key(f) for f in before)
    found = []
    for finding in after:
        k = key(finding)
        if known[k]:
            known[k] -= 1
        else:
            found.append(finding)
    return found


# ---------------------------------------------------------------------------------- the test


def build(repo: GitRepo, seed: int, commits: int, scratch: Path) -> list[Step]:
    """The history of ``seed``: the examples, then ``commits`` mutations, each staged, put to
    the commit hook, committed, and judged by the oracle."""
    rng = random.Random(seed)
    shutil.copytree(EXAMPLES, repo.path / "examples", symlinks=True)
    (repo.path / ".continuity.toml").write_text(CONFIG, encoding="utf-8")
    start = Step(0, "the shipped examples", sha=repo.commit("the shipped examples"))
    before = tree_errors(repo, start.sha, scratch)
    assert not before, f"seed {seed}: the examples are not clean: {[shown(f) for f in before]}"
    history = History(repo, rng)
    history.record()
    steps = [start]
    for index in range(1, commits + 1):
        step = Step(index, history.mutate())
        step.changed, step.staged_files = history.staged()
        _, report, _ = run_cli("check", "--staged", *step.staged_files)
        step.staged = errors(report)
        repo.git("commit", "-q", "--no-verify", "-m", f"{index}: {step.what}")
        step.sha = repo.head()
        after = tree_errors(repo, step.sha, scratch)
        step.new = new_errors(after, before)
        step.linked = {
            path
            for path in history.listed()
            if path not in step.changed and (repo.path / path).is_symlink()
        }
        before = after
        history.record()
        steps.append(step)
    return steps


def mismatches(seed: int, steps: list[Step], verified: list[dict[str, Any]]) -> list[str]:
    """Every way the hook and verify disagree with the oracle, one block per commit, each
    named by seed and commit index."""
    at: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for finding in errors({"findings": verified}):
        at[finding.get("commit") or ""].append(finding)
    problems = []
    for step in steps:
        lines = []
        reported = {(f["rule"], f["path"]) for f in at.get(step.sha, [])}
        hooked = {(f["rule"], f["path"]) for f in step.staged}
        for finding in step.new:
            if through_a_link(finding, step.linked):
                continue
            place = (finding["rule"], finding["path"])
            if place not in reported and not covered(finding, at.get(step.sha, [])):
                lines.append(f"  verify misses:          {shown(finding)}")
            if place not in hooked and not covered(finding, step.staged):
                lines.append(f"  check --staged misses:  {shown(finding)}")
        new = {(f["rule"], f["path"]) for f in step.new}
        for finding in at.get(step.sha, []):
            if (
                is_file_mode(finding["rule"])
                and (finding["rule"], finding["path"]) not in new
                and not restated(finding, step.changed)
            ):
                lines.append(f"  verify, not new there:  {shown(finding)}")
        if lines:
            files = " ".join(step.staged_files) or "(none)"
            problems.append(
                f"seed {seed}, commit {step.index} ({step.sha[:12]}): {step.what}\n"
                f"  staged files passed: {files}\n" + "\n".join(lines)
            )
    stray = sorted(set(at) - {s.sha for s in steps})
    problems.extend(f"seed {seed}: verify reports errors at unknown commit {c!r}" for c in stray)
    return problems


def run_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, commits: int
) -> list[str]:
    print(f"commit-state oracle: seed {seed}, {commits} commits")
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    monkeypatch.chdir(repo.path)  # where pre-commit runs the hook, with paths relative to it
    steps = build(repo, seed, commits, tmp_path / "trees")
    # an oracle that sees no new error anywhere would make every comparison pass vacuously
    assert any(step.new for step in steps), f"seed {seed}: no commit made a new error"
    # from the first commit, which holds the configuration: a range with a base is judged by
    # the base's configuration (a range without one may be judged by the defaults); the first
    # commit itself leaves no error (asserted in build)
    walked = f"{steps[0].sha}..HEAD"
    _, report, _ = run_cli("verify", "--range", walked, "--root", str(repo.path))
    assert report["summary"]["commits"] == len(steps) - 1
    return mismatches(seed, steps, report["findings"])


SHOWN = 25  # commits described in a failure message


def _judge(problems: list[str], seed: int) -> None:
    shown_problems = "\n".join(problems[:SHOWN])
    more = f"\n... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    assert not problems, (
        f"{len(problems)} commits disagree with the oracle "
        f"(replay: CONTINUITY_ORACLE_SEEDS={seed})\n"
        f"{shown_problems}{more}"
    )


@pytest.mark.parametrize(("seed", "commits"), _sizes(DEFAULT_SEEDS, DEFAULT_COMMITS))
def test_every_commit_reports_the_errors_it_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, commits: int
) -> None:
    _judge(run_history(tmp_path, monkeypatch, seed, commits), seed)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "commits"), _sizes(SLOW_SEEDS, SLOW_COMMITS))
def test_every_commit_of_a_long_history_reports_the_errors_it_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, commits: int
) -> None:
    _judge(run_history(tmp_path, monkeypatch, seed, commits), seed)


# ------------------------------------------------- the work left out, held to the work it replaces

# A tree check that reads no bytes is not fed a file whose bytes alone changed
# (``Family.tree_reads_bytes``), a family called on every commit is not called where it says
# nothing can be found (``Family.commit_needed``), a family is not asked for the dependents of
# a path it says none can have (``Family.may_depend``), and AGENTS.md is not judged for a
# change under ``.deltalayer/`` that leaves the directory there on both sides
# (``Family.dependents_between``), and a commit that only rewrites the bytes of files whose
# checks read nothing else is judged by their file checks alone (``CommitState._rewritten``,
# without the general path's items and tree checks), and a delta whose twin is absent and
# whose project has PROJECT.md and AGENTS.md is not fed to the deltas tree check
# (``Family.tree_may_find``). With these turned off,
# ``verify`` and ``check --staged`` report the same findings, byte for byte, on a random
# history of the shipped examples and on commits made to exercise the deltas tree check (an
# edit beside a twin, PROJECT.md or AGENTS.md coming and going).


def test_a_random_history_is_judged_alike(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(EXAMPLES, repo.path / "examples", symlinks=True)
    (repo.path / ".continuity.toml").write_text(CONFIG, encoding="utf-8")
    base = repo.commit("the shipped examples")
    history = History(repo, random.Random(5))
    history.record()
    for index in range(30):
        what = history.mutate()
        repo.git("commit", "-q", "--no-verify", "-m", f"{index}: {what}")
        history.record()
    fast, slow = both_ways(monkeypatch, "verify", "--range", f"{base}..HEAD")
    assert len(rules(fast)) > 3  # the history breaks things, of several kinds
    assert fast == slow


def test_edits_beside_the_files_the_deltas_tree_check_reads(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = path_of("2026-09-21T16-20-00p08-00--agent.json")
    other = path_of("2026-09-22T10-00-00p08-00--agent.json")
    frozen = plain.replace(".json", ".frozen.json")

    def edit(n: int) -> dict[str, str]:
        return {plain: delta(changes=[f"edit {n}"])}

    base = repo.commit(
        "a project",
        {
            # the tree check's warnings made errors: the state a commit leaves weighs errors
            ".continuity.toml": '[rules]\nDL130 = "error"\nDL131 = "error"\n',
            "PROJECT.md": "# project\n",
            "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n",
            **edit(0),
            other: delta(started="2026-09-22T10:00:00+08:00"),
        },
    )
    repo.commit("an edit and its twin added", {**edit(1), frozen: delta()})
    repo.commit("an edit and the twin deleted", edit(2), delete=[frozen])
    repo.commit("an edit and PROJECT.md deleted", edit(3), delete=["PROJECT.md"])
    repo.commit("an edit, PROJECT.md still missing", edit(4))
    repo.commit("an edit and PROJECT.md back", {**edit(5), "PROJECT.md": "# project\n"})
    repo.commit("an edit and AGENTS.md deleted", edit(6), delete=["AGENTS.md"])
    repo.commit("an edit of the other delta", {other: delta(changes=["other"])})
    repo.commit("AGENTS.md back without a marker", {**edit(7), "AGENTS.md": "# agents\n"})
    repo.write({**edit(8), frozen: delta()})
    repo.git("rm", "-q", "--", "PROJECT.md")
    repo.git("add", "-A")
    fast, slow = both_ways(monkeypatch, "check", "--staged", plain, frozen)
    assert {"DL111", "DL131"} <= rules(fast)  # the twin, and PROJECT.md missing
    assert fast == slow
    repo.git("commit", "-q", "--no-verify", "-m", "an edit, a twin and PROJECT.md deleted")
    fast, slow = both_ways(monkeypatch, "verify", "--range", f"{base}..HEAD")
    assert {"DL111", "DL130", "DL131"} <= rules(fast)
    assert fast == slow
