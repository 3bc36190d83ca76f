"""Every list-of-strings option (globs, rule ids, identities) follows one rule, through the real
CLI: a list of strings, none empty or blank; anything else is exit 2 with the key and the value."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.conftest import write_tree
from tests.helpers.git import GitRepo, isolate_git

#: (the table's header, the option, its key in the error) for every list option of a family
FAMILY_LISTS = [
    ("[deltas]", "legacy-files", "deltas.legacy-files"),
    ("[deltas]", "owner-allowed", "deltas.owner-allowed"),
    ("[captures]", "roots", "captures.roots"),
    ("[working-state]", "projections", "working-state.projections"),
    ("[provenance]", "sums-files", "provenance.sums-files"),
    ("[provenance]", "manifests", "provenance.manifests"),
]
#: the core's own list options: the same rule
CORE_LISTS = [("", "exclude", "exclude"), ("", "families", "families")]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("a readme", {"README": "x\n"})
    return repo


def _check(repo: GitRepo, capsys: pytest.CaptureFixture[str], table: str) -> tuple[int, str]:
    write_tree(repo.path, {".continuity.toml": table})
    capsys.readouterr()
    code = main(["check", "--all", "--root", str(repo.path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code != 2 or out == ""
    return code, err


#: a bad value in TOML, and as the error shows it
BAD = [
    ('[""]', "['']"),
    ('["docs/**", ""]', "['docs/**', '']"),
    ('[" "]', "[' ']"),
    ('"docs/**"', "'docs/**'"),
    ("[1]", "[1]"),
]


@pytest.mark.parametrize(("header", "option", "key"), FAMILY_LISTS + CORE_LISTS)
def test_a_list_option_refuses_an_empty_entry_naming_key_and_value(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], header: str, option: str, key: str
) -> None:
    for value, shown in BAD:
        code, err = _check(repo, capsys, f"{header}\n{option} = {value}\n")
        assert code == 2, value
        first = err.splitlines()[0]
        assert f": {key}: expected a list of " in first
        assert first.endswith(f", none empty or blank, found {shown}")
    good = '["deltas"]' if option == "families" else '["nothing-here/**"]'
    for value in (good, "[]"):
        assert _check(repo, capsys, f"{header}\n{option} = {value}\n")[0] == 0, value


def test_an_ignore_entry_follows_the_same_rule(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    for (value, shown), name in itertools.product(BAD, ("rules", "paths")):
        entry = {"rules": '["PV103"]', "paths": '["dist/SHA256SUMS"]', "reason": '"built in CI"'}
        entry[name] = value
        table = "[[ignore]]\n" + "".join(f"{k} = {v}\n" for k, v in entry.items())
        code, err = _check(repo, capsys, table)
        assert code == 2
        assert err.splitlines()[0].endswith(
            f": ignore[0].{name}: expected a list of strings, none empty or blank, found {shown}"
        )
