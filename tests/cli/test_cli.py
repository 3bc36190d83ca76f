"""The command line as a user meets it: exit codes, formats, configuration errors, rules."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from continuity_checks.checks import all_rules
from continuity_checks.cli import commands, main
from tests.conftest import EXAMPLES, write_tree

BAD_DELTA = {".deltalayer/changes/x.json": '{"started_at": 1}\n', "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n",
             "PROJECT.md": "# P\n"}  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_format_lines_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, BAD_DELTA)
    code, out, _ = run(capsys, "check", "--all", "--root", str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(
        ".deltalayer/changes/x.json:1:1: DL102 expected keys started_at, updated_at"
    )
    assert any(
        line.startswith(".deltalayer/changes/x.json:1:16: DL103 started_at:") for line in lines
    )
    assert lines[-1] == "2 files checked: 2 errors, 0 warnings"
    assert "\033[" not in out  # no colour when not a terminal


def test_json_format_is_deterministic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, BAD_DELTA)
    outputs = {
        run(capsys, "check", "--all", "--root", str(tmp_path), "--format", "json")[1]
        for _ in range(3)
    }
    assert len(outputs) == 1
    document = json.loads(outputs.pop())
    assert document["format_version"] == 1
    assert document["summary"] == {
        "files": 2,
        "commits": 0,
        "errors": 2,
        "warnings": 0,
        "not_shown": 0,
        "suppressed": 0,
        "baselined": None,
    }
    assert set(document["findings"][0]) == {"rule", "severity", "path", "line", "column", "pointer", "commit",
                                            "message", "hint"}  # fmt: skip


def test_clean_run_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--all", "--root", str(EXAMPLES))
    assert code == 0 and re.fullmatch(r"\d+ files checked: no problems\n", out)


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ("colour = 1\n", "colour"),
        ('families = ["nope"]\n', "families"),
        ("exclude = 3\n", "exclude"),
        ("[limits]\nmax-depth = 0\n", "limits.max-depth"),
        ("[limits]\nwidth = 1\n", "limits.width"),
        ('[rules]\nDL999 = "off"\n', "rules.DL999"),
        ('[rules]\nDL101 = "loud"\n', "rules.DL101"),
        ('[deltas]\nlegacy = "mutable"\n', "deltas.legacy"),
        ('[deltas]\nownership = "anyone"\n', "deltas.ownership"),
        ("[deltas]\nallow-delete = 1\n", "deltas.allow-delete"),
        ('[deltas]\nlegacy-files = "x"\n', "deltas.legacy-files"),
        ("[deltas]\nfoo = 1\n", "deltas.foo"),
        ("not toml = = \n", "(file)"),
    ],
)
def test_bad_configuration_is_exit_2_with_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str, key: str
) -> None:
    write_tree(tmp_path, {**BAD_DELTA, ".continuity.toml": config})
    code, out, err = run(capsys, "check", "--all", "--root", str(tmp_path))
    assert code == 2
    assert out == ""
    assert f": {key}: " in err.splitlines()[0]
    assert "Traceback" not in err


def test_pyproject_table_and_precedence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(
        tmp_path, {**BAD_DELTA, "pyproject.toml": '[tool.continuity]\nexclude = [".deltalayer"]\n'}
    )
    assert run(capsys, "check", "--all", "--root", str(tmp_path))[0] == 0
    (tmp_path / ".continuity.toml").write_text("exclude = []\n")  # the dedicated file wins
    assert run(capsys, "check", "--all", "--root", str(tmp_path))[0] == 1


def test_usage_errors_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "check")[0] == 2
    assert run(capsys, "check", "--all", "--root", str(tmp_path / "missing"))[0] == 2
    assert run(capsys, "check", "--format", "xml", "--all")[0] == 2
    assert run(capsys, "explain", "XX000")[0] == 2
    assert run(capsys, "no-such-command")[0] == 2


def test_rules_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == [r.id for r in all_rules()]
    code, out, _ = run(capsys, "explain", "dl111")
    assert code == 0
    assert out.startswith(
        "DL111: both X.json and X.frozen.json exist\nfamily: deltas; default severity: error\n"
    )
    assert "What to do:" in out


def test_every_rule_is_documented() -> None:
    for rule in all_rules():
        assert rule.id[:2] in {"CC", "DL", "CX", "WS", "SS", "PV"} and len(rule.id) == 5
        assert rule.summary and len(rule.explanation) > 40 and rule.hint


def test_rules_page_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    _, out, _ = run(capsys, "rules", "--markdown")
    assert page.read_text("utf-8") == out, "regenerate: continuity rules --markdown > docs/rules.md"


def test_module_entry_point(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "continuity_checks", "check", "--all", "--root", str(EXAMPLES)],
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 0
    assert re.fullmatch(r"\d+ files checked: no problems\n", result.stdout)


def test_schema_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from continuity_checks.core import schemas

    code, out, _ = run(capsys, "schema", "list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == schemas.names()
    code, out, _ = run(capsys, "schema", "show", "deltalayer-conversation-delta")
    assert code == 0 and json.loads(out) == schemas.load("deltalayer-conversation-delta")
    assert run(capsys, "schema", "show", "nope")[0] == 2
    assert run(capsys, "schema", "export", str(tmp_path / "out"))[0] == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"{n}.schema.json" for n in schemas.names()
    )


def test_github_annotations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, BAD_DELTA)
    code, out, _ = run(capsys, "check", "--all", "--root", str(tmp_path), "--format", "github")
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith(
        "::error file=.deltalayer/changes/x.json,line=1,col=1,title=DL102::expected keys"
    )
    assert "%0Ahint: " in first  # the hint travels inside the one-line annotation


def test_sarif_results_and_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, BAD_DELTA)
    code, out, _ = run(capsys, "check", "--all", "--root", str(tmp_path), "--format", "sarif")
    assert code == 1
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    (sarif_run,) = sarif["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in all_rules()]
    results = sarif_run["results"]
    assert [r["ruleId"] for r in results] == ["DL102", "DL103"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] == 1 and region["startColumn"] >= 1
    assert results[1]["properties"] == {"pointer": "/started_at"}


SUBCOMMANDS = {
    "baseline": ["check", "verify"],
    "capture": ["manifest", "verify", "read", "list", "diff", "apply"],
    "delta": ["init", "start", "update", "show", "current", "freeze", "recent", "older",
              "rebuild-context"],
    "provenance": ["add"],
    "schema": ["list", "show", "export"],
    "state": ["hash", "project"],
}  # fmt: skip


def test_every_command_and_subcommand_answers_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and out.startswith("usage: continuity ")
    for name in commands():
        assert f"\n  {name} " in out, f"continuity --help does not list {name}"
    for name in commands():
        for flag in ("--help", "-h"):
            code, listing, err = run(capsys, name, flag)
            assert (code, err) == (0, ""), (name, err)
            assert listing.startswith(f"usage: continuity {name} "), listing
        for sub in SUBCOMMANDS.get(name, []):
            assert re.search(rf"^    ({sub}|\w+ \({sub}\))", listing, re.M), (name, sub)
            code, out, err = run(capsys, name, sub, "--help")
            assert (code, err) == (0, ""), (name, sub, err)
            shown = "show" if sub == "current" else sub  # one command, two names
            assert out.startswith(f"usage: continuity {name} {shown} "), out
    assert set(SUBCOMMANDS) < set(commands())


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from continuity_checks import __version__

    assert run(capsys, "--version") == (0, f"continuity, version {__version__}\n", "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--jobs", "0", "x"], "argument --jobs: 0 is less than 1"),
        (["check", "--jobs", "many", "x"], "argument --jobs: 'many' is not an integer"),
        (["check", "--format", "xml", "--all"], "argument --format: invalid choice: 'xml'"),
        (["check", "--no-such-option"], "unrecognized arguments: --no-such-option"),
        (["check", "--sta", "x"], "unrecognized arguments: --sta"),  # no abbreviations
        (["verify", "--range"], "argument --range: expected one argument"),
        (["capture", "verify", "missing-dir"], "directory 'missing-dir' does not exist"),
        (["state", "hash", "."], "argument FILE: file '.' is a directory"),
        (["provenance", "add"], "the following arguments are required: FILES"),
        (["no-such-command"], "invalid choice: 'no-such-command'"),
    ],
)
def test_usage_errors_name_the_option(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert err.startswith("usage: continuity") and message in err, err


def test_a_directory_option_refuses_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "f").write_text("x")
    code, out, err = run(capsys, "check", "--all", "--root", str(tmp_path / "f"))
    assert (code, out) == (2, "") and "argument --root: directory" in err and "is a file" in err
    code, _, err = run(capsys, "check", "--all", "--root", str(tmp_path), "--config", str(tmp_path))
    assert code == 2 and "argument --config: file" in err and "is a directory" in err


@pytest.mark.parametrize("group", sorted(SUBCOMMANDS))
def test_a_group_without_its_subcommand_shows_its_help(
    capsys: pytest.CaptureFixture[str], group: str
) -> None:
    code, out, err = run(capsys, group)  # on stderr, as click printed it: nothing was done
    assert (code, out) == (2, "") and err.startswith(f"usage: continuity {group} ")


def test_the_bare_command_shows_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert (code, out) == (2, "") and "Exit codes: 0 no error" in err and "\n  check " in err


def test_paths_and_options_in_any_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, {**BAD_DELTA, "-notes.txt": "x\n"})
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(
        capsys, "check", ".deltalayer/changes/x.json", "--format", "json", "AGENTS.md"
    )
    assert code == 1 and json.loads(out)["summary"]["files"] == 2
    # after --, a path that begins with a dash is a path
    code, out, _ = run(capsys, "check", "--", ".deltalayer/changes/x.json", "-notes.txt")
    assert code == 1 and "not checked, no family claims them: -notes.txt\n" in out
    assert out.endswith("1 file checked: 2 errors, 0 warnings\n")
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    code, out, _ = run(capsys, "provenance", "add", "a.txt", "--sums", "SUMS.sha256", "b.txt")
    assert code == 0 and (tmp_path / "SUMS.sha256").read_text().count("\n") == 2, out
