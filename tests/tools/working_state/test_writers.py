"""Working states written as DSH's JavaScript host writes them have zero errors.

DSH writes ``JSON.stringify(state, null, 2)`` and a newline, and records as ``state_hash`` the
SHA-256 of ``JSON.stringify`` of the nine semantic keys. A string cut at a UTF-16 boundary
inside an emoji keeps half of a surrogate pair, which ``JSON.stringify`` writes as a ``\\udXXX``
escape: DSH reads and hashes such a file, and so must ``continuity`` (it was CC009, and
``state hash`` exited 2). The documents here are generated, written by a Python reproduction of
those rules and, where ``node`` is installed, by real ``JSON.stringify``; both are committed
to a real repository and judged by ``check``, ``verify`` and ``state hash``.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks.working_state import state as dsh
from continuity_checks.cli import main
from tests.conftest import CORPUS, RunCLI
from tests.helpers.git import GitRepo, isolate_git
from tests.helpers.working_state import base, js_escaped, oracle_hash

WS = ".dsh/project/WORKING_STATE.json"
EMOJI = "\U0001f600"
_WORDS = ["build", "Папка", "日本語", 'say "hi"', "a\\b", "tab\there", "line\nbreak", "x\u2028y"]


def item(rnd: random.Random) -> str:
    """A trimmed item; about one in four is cut inside an emoji at either end."""
    words = " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(1, 3)))
    cut = rnd.random()
    if cut < 0.15:  # cut after the high surrogate: the string's end lost the low one
        return f"{words} \ud83d"
    if cut < 0.25:  # the other half: a string that starts after the cut
        return f"\ude00{words}"
    return f"{words} {EMOJI}" if cut < 0.4 else words


def checkpoint(rnd: random.Random, previous: dict[str, Any] | None, seq: int) -> dict[str, Any]:
    """The next state DSH's merge would write: each list extended by new unique items."""
    state = copy.deepcopy(previous) if previous is not None else base()
    for name in dsh.SEMANTIC_FIELDS:
        added = [item(rnd) for _ in range(rnd.randint(0, 2))]
        state[name] = list(dict.fromkeys([*(state[name] if previous else []), *added]))
    meta = state["checkpoint_meta"]
    meta.update(
        checkpoint_id=f"CP-{uuid.UUID(int=rnd.getrandbits(128), version=4)}",
        updated_at=f"2026-08-26T13:{seq:02d}:42.731Z",
        protocol_committed_through_seq=100 + seq,
        session_revision=102 + seq,
    )
    meta["state_hash"] = oracle_hash(state)
    return state


def python_writer(state: dict[str, Any]) -> bytes:
    """``JSON.stringify(state, null, 2) + "\\n"`` reproduced: json.dumps with 2-space indent
    writes the same text but for a lone surrogate, which JavaScript escapes."""
    return (js_escaped(json.dumps(state, ensure_ascii=False, indent=2)) + "\n").encode("utf-8")


def python_writes(states: list[dict[str, Any]]) -> list[bytes]:
    return [python_writer(state) for state in states]


NODE_WRITER = """
const crypto = require("crypto");
const keys = ["task_id", "known", "constraints", "decisions", "evidence", "failed_hypotheses",
  "do_not_repeat", "open_acceptance", "next_action"];
const written = JSON.parse(require("fs").readFileSync(0, "utf8")).map(state => {
  const semantic = Object.fromEntries(keys.map(k => [k, state[k]]));
  state.checkpoint_meta.state_hash =
    crypto.createHash("sha256").update(JSON.stringify(semantic)).digest("hex");
  return JSON.stringify(state, null, 2) + "\\n";
});
process.stdout.write(JSON.stringify(written));
"""


def node_writes(states: list[dict[str, Any]]) -> list[bytes]:
    """The bytes real ``JSON.stringify`` writes for each state, with the hash Node computes
    (one process; the input is ASCII JSON: a lone surrogate crosses as an escape and is parsed
    back into one, and the output texts are ASCII-safe JSON strings holding the file texts)."""
    done = subprocess.run(
        ["node", "-e", NODE_WRITER], input=json.dumps(states).encode(), capture_output=True
    )
    assert done.returncode == 0, done.stderr
    return [text.encode("utf-8") for text in json.loads(done.stdout)]


def histories(seed: int, projects: int, versions: int) -> dict[str, list[dict[str, Any]]]:
    rnd = random.Random(seed)
    out: dict[str, list[dict[str, Any]]] = {}
    for project in range(projects):
        states: list[dict[str, Any]] = []
        for seq in range(versions):
            states.append(checkpoint(rnd, states[-1] if states else None, seq))
        out[f"p{project}/{WS}"] = states
    return out


def has_cut(state: dict[str, Any]) -> bool:
    return any(
        "\ud800" <= char <= "\udfff"
        for name in dsh.SEMANTIC_FIELDS
        for text in state[name]
        for char in text
    )


def state_hash_of(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["state", "hash", str(path)]) == 0
    return capsys.readouterr().out.strip()


def judged(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_json: RunCLI,
    capsys: pytest.CaptureFixture[str],
    writes: Callable[[list[dict[str, Any]]], list[bytes]],
) -> int:
    """Commit generated histories written by ``writes``; assert zero errors in file mode, in
    history mode and from ``state hash``; return how many final states hold a cut character."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    base_commit = repo.commit("start", {"README.md": "x\n"})
    found = histories(seed=19, projects=4, versions=3)
    for version in range(3):
        paths = list(found)
        texts = writes([found[path][version] for path in paths])
        repo.commit(f"checkpoint {version}", dict(zip(paths, texts, strict=True)))
    code, report = run_json("check", "--all", "--root", str(repo.path))
    cut = [p for p, states in found.items() if has_cut(states[-1])]
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [("WS120", p) for p in cut]
    assert (code, report["summary"]["errors"]) == (0, 0)
    code, report = run_json(
        "verify", "--range", f"{base_commit}..HEAD", "--root", str(repo.path), "--no-baseline"
    )
    assert (code, report["summary"]["errors"]) == (0, 0), report["findings"]
    for path, states in found.items():
        recorded = json.loads((repo.path / path).read_bytes())["checkpoint_meta"]["state_hash"]
        assert state_hash_of(repo.path / path, capsys) == recorded == oracle_hash(states[-1])
    return len(cut)


def test_states_written_as_json_stringify_has_zero_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_json: RunCLI,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert judged(tmp_path, monkeypatch, run_json, capsys, python_writes) >= 2


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run JSON.stringify")
def test_states_written_by_real_json_stringify_have_zero_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_json: RunCLI,
    capsys: pytest.CaptureFixture[str],
) -> None:
    every = [state for states in histories(19, 4, 3).values() for state in states]
    assert node_writes(every) == python_writes(every)  # the reproduction, byte for byte
    assert judged(tmp_path, monkeypatch, run_json, capsys, node_writes) >= 2


def test_a_cut_character_is_hashed_as_dsh_hashes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``state hash`` hashes the escape JSON.stringify writes (six ASCII bytes), not U+FFFD
    (which Node's UTF-8 encoder would give for a raw lone surrogate)."""
    state = base()
    state["known"] = ["cut \ud83d"]
    state["checkpoint_meta"]["state_hash"] = oracle_hash(state)
    path = tmp_path / "WORKING_STATE.json"
    path.write_bytes(python_writer(state))
    assert b'"cut \\ud83d"' in path.read_bytes()
    replaced = copy.deepcopy(state)
    replaced["known"] = ["cut \ufffd"]
    assert state_hash_of(path, capsys) == oracle_hash(state) != oracle_hash(replaced)


SAMPLE = CORPUS / "dsh/evidence/memory-injections/WORKING_STATE.json"


@pytest.mark.parametrize(
    ("given", "shown"), [("12000.5", "12000.5"), ("1.2e4", "12000"), ("12000.0", "12000")]
)
def test_a_fractional_budget_is_accepted_as_dsh_accepts_it(
    capsys: pytest.CaptureFixture[str], given: str, shown: str
) -> None:
    """DSH's runtime takes any finite positive snapshot_max_chars (``Number``); the option took
    only integers (exit 2 on 12000.5). The budget is written back as JavaScript writes it."""
    capsys.readouterr()
    assert main(["state", "project", str(SAMPLE), "--json", "--soft-max-chars", given]) == 0
    assert f'"soft_max_chars": {shown},' in capsys.readouterr().out


@pytest.mark.parametrize("given", ["0", "-1", "0.0", "inf", "nan", "1e400", "1_000", "x"])
def test_a_budget_dsh_refuses_is_exit_2(given: str) -> None:
    assert main(["state", "project", str(SAMPLE), "--soft-max-chars", given]) == 2


def test_cut_characters_anywhere_give_findings_in_every_format(
    tmp_path: Path, run_json: RunCLI, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lone surrogate in a key, in a value a pattern judges, and in another .dsh/project file:
    findings in every format and a baseline, never a traceback (the schema engine and the
    reports cannot take a raw surrogate: it is judged as U+FFFD and quoted as its escape)."""
    state = base()
    state["checkpoint_meta"]["checkpoint_id"] = "CP-\ud83d"
    state["checkpoint_meta"]["state_hash"] = oracle_hash(state)
    state["legacy \udc00"] = {"\ud800": 1}
    files = {
        WS: python_writer(state),
        ".dsh/project/RUNTIME_POLICY.json": b'{"\\ud800": {"a\\udfff": 1}}\n',
        ".dsh/project/state.json": b'{"schema": "\\ud800"}\n',
    }
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert code == 1
    assert {(f["rule"], f["path"]) for f in report["findings"] if f["rule"] == "WS120"} == {
        ("WS120", rel) for rel in files
    }
    assert any('"CP-\\ud83d"' in f["message"] for f in report["findings"])  # the escape
    for fmt in ("text", "sarif", "github"):
        capsys.readouterr()
        assert main(["check", "--all", "--root", str(tmp_path), "--format", fmt]) == 1
        capsys.readouterr().out.encode("utf-8")  # every report is UTF-8 text
    assert main(["baseline", "check", "--root", str(tmp_path)]) == 0
