"""core.frozen and the value classes built on it or on typing.NamedTuple: set once, compared,
hashed, copied with changes and pickled by their fields; and no module under src/ makes a
dataclass (the commit hook would pay for the dataclasses module and each class it makes)."""

from __future__ import annotations

import ast
import pickle

import pytest

from continuity_checks.core.family import Change, Declaration
from continuity_checks.core.findings import Finding, Severity
from continuity_checks.core.git.log import LogRequest
from continuity_checks.core.shard import Shard
from continuity_checks.core.symlinks import Link
from tests.conftest import REPO

PACKAGE = REPO / "src" / "continuity_checks"


def _finding() -> Finding:
    return Finding("a.json", 3, 7, "DL101", "expected x", pointer="/a", hint="fix it")


def test_a_finding_is_set_once() -> None:
    finding = _finding()
    with pytest.raises(AttributeError):
        finding.message = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del finding.hint  # type: ignore[misc]
    assert finding.severity is Severity.ERROR
    assert finding.unstage == ()


def test_findings_are_equal_and_hashed_by_value() -> None:
    assert _finding() == _finding()
    assert hash(_finding()) == hash(_finding())
    assert len({_finding(), _finding(), _finding()._replace(line=4)}) == 2
    assert _finding() != ("a.json", 3, 7, "DL101", "expected x")  # never a tuple


def test_replace_changes_only_what_is_named() -> None:
    moved = _finding()._replace(commit="abc", severity=Severity.WARNING)
    assert (moved.commit, moved.severity, moved.message) == ("abc", Severity.WARNING, "expected x")
    assert _finding().commit is None
    with pytest.raises(TypeError):
        _finding()._replace(colour="red")


def test_values_survive_pickling() -> None:
    """A worker sends its findings to the engine pickled."""
    for value in (_finding(), LogRequest(("Continuity-Delta",)), Shard(2, 4)):
        assert pickle.loads(pickle.dumps(value)) == value


def test_repr_names_every_field_in_order() -> None:
    assert repr(Shard(2, 4)) == "Shard(index=2, count=4)"
    assert repr(_finding()).startswith("Finding(path='a.json', line=3, column=7, rule='DL101'")


def test_checked_values_refuse_what_they_checked_before() -> None:
    with pytest.raises(ValueError, match="unknown commit fields"):
        LogRequest(fields=frozenset({"colour"}))
    with pytest.raises(ValueError, match="two capital letters"):
        Declaration("x", "m:C", "m", "x1", "s", "f", "h")
    declaration = Declaration("x", "m:C", "m", "XX", "s", "f", "h", every_commit=True)
    assert (declaration.prefix, declaration.every_commit, declaration.gitlinks) == (
        "XX",
        True,
        False,
    )
    with pytest.raises(AttributeError):
        declaration.name = "y"  # type: ignore[misc]


def test_a_symlink_found_is_a_value() -> None:
    link = Link("docs", "a directory")
    assert link == Link("docs", "a directory") != Link("docs", "a regular file")
    assert hash(link) == hash(Link("docs", "a directory"))
    assert (link.path, link.expected) == ("docs", "a directory")
    assert repr(link) == "Link(path='docs', expected='a directory')"
    assert pickle.loads(pickle.dumps(link)) == link
    with pytest.raises(AttributeError):
        link.path = "other"  # type: ignore[misc]


def test_changes_compare_without_their_reader() -> None:
    def one(sha: str) -> bytes | None:
        return b"1"

    def two(sha: str) -> bytes | None:
        return b"2"

    first = Change("a.json", "delta", "M", "1" * 40, "2" * 40, one, "100644")
    assert first == Change("a.json", "delta", "M", "1" * 40, "2" * 40, two, "100644")
    again = first.judged_as("A", None)
    assert (again.status, again.old_blob, again.new_blob, again.new()) == (
        "A",
        None,
        "2" * 40,
        b"1",
    )
    assert first.status == "M"


def test_no_module_makes_a_dataclass() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            if "dataclasses" in names:
                found.append(f"{module}:{node.lineno}")
    assert found == []
