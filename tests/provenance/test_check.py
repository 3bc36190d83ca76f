"""Every PV1xx rule: a fixture it catches (with its line or pointer) and near-misses it passes;
the sums-line forms; the DSH corpus; hashing through the snapshot."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks import all_rules
from continuity_checks.checks.provenance import listed, sums
from continuity_checks.core.hashing import Digest
from continuity_checks.core.snapshot import Unreadable, WorkTree
from tests.conftest import CORPUS, RunCLI, rules_of, write_tree

A, B = b"alpha\n", b"beta\r\n"
HA, HB = hashlib.sha256(A).hexdigest(), hashlib.sha256(B).hexdigest()
ODD = "evidence/z 0.8 лайв (часть).md"  # spaces, Cyrillic, parentheses, as DSH names files
HODD = hashlib.sha256(b"odd").hexdigest()
SUMS = "SHA256SUMS"
FILES: dict[str, bytes | str] = {"a.txt": A, "dir/b.txt": B, ODD: b"odd"}


def sums_file(text: str, name: str = SUMS) -> dict[str, bytes | str]:
    return {**FILES, name: text.encode("utf-8")}


def manifest(
    artifacts: list[dict[str, Any]], name: str = "PROVENANCE.json"
) -> dict[str, bytes | str]:
    return {**FILES, name: json.dumps({"version": 1, "artifacts": artifacts}, indent=2) + "\n"}


ORIGINAL = {"path": "a.txt", "sha256": HA, "size": len(A), "role": "original"}
DERIVED = {"path": "dir/b.txt", "sha256": HB, "size": len(B), "role": "derived",
           "derived_from": "a.txt", "derivation": "redacted"}  # fmt: skip
M = "PROVENANCE.json"
Row = tuple[str, str, int | None]

# (case id, files, expected (rule, path, line) findings — exactly these)
BAD: list[tuple[str, dict[str, bytes | str], list[Row]]] = [
    ("PV101 empty", sums_file(""), [("PV101", SUMS, 1)]),
    ("PV101 only comments", sums_file("# nothing yet\n\n"), [("PV101", SUMS, 1)]),
    ("PV102 short digest", sums_file(f"{HA}  a.txt\n{HB[:40]}  dir/b.txt\n"), [("PV102", SUMS, 2)]),
    ("PV102 one space then nothing", sums_file(f"{HA}  a.txt\n{HB} \n"), [("PV102", SUMS, 2)]),
    ("PV102 md5 tag", sums_file(f"{HA}  a.txt\nMD5 (a.txt) = {HA[:32]}\n"), [("PV102", SUMS, 2)]),
    ("PV102 unknown escape", sums_file(f"\\{HA}  a\\t.txt\n"), [("PV102", SUMS, 1)]),
    ("PV102 sha256 -r line after a GNU line", sums_file(f"{HA}  a.txt\n{HB} dir/b.txt\n"),
     [("PV102", SUMS, 2)]),
    ("PV103 GNU line after sha256 -r lines names a leading space",
     sums_file(f"{HA} a.txt\n{HB}  dir/b.txt\n"), [("PV103", SUMS, 2)]),
    ("PV102 bsd digest followed by a blank", sums_file(f"SHA256 (a.txt) = {HA} \n"), [("PV102", SUMS, 1)]),
    ("PV103 missing", sums_file(f"{HA}  a.txt\n{HB}  dir/gone.txt\n"), [("PV103", SUMS, 2)]),
    ("PV104 changed byte", {**sums_file(f"{HA}  a.txt\r\n{HB}  dir/b.txt\r\n"), "dir/b.txt": b"beta\n"},
     [("PV104", SUMS, 2)]),
    ("PV104 bsd", sums_file(f"SHA256 (a.txt) = {HB}\n"), [("PV104", SUMS, 1)]),
    ("PV104 lists itself", sums_file(f"{HA}  a.txt\n{HA}  SHA256SUMS\n"), [("PV104", SUMS, 2)]),
    ("PV105 twice, another digest", sums_file(f"{HA}  a.txt\n{HB}  ./a.txt\n"), [("PV105", SUMS, 2)]),
    ("PV109 twice, the same digest", sums_file(f"{HA}  a.txt\n{HA}  ./a.txt\n"), [("PV109", SUMS, 2)]),
    ("PV102 a line of only blanks", sums_file(f"{HA}  a.txt\n \t\n"), [("PV102", SUMS, 2)]),
    ("CC010 climbs out", sums_file(f"{HA}  a.txt\n{HA}  ../outside.txt\n"), [("CC010", SUMS, 2)]),
    ("CC010 absolute", sums_file(f"{HA}  /etc/passwd\n"), [("CC010", SUMS, 1)]),
    ("CC010 bsd absolute", sums_file(f"SHA256 (/etc/passwd) = {HA}\n"), [("CC010", SUMS, 1)]),
    ("CC001 directory", sums_file(f"{HA}  dir\n"), [("CC001", SUMS, 1)]),
    ("CC002 not utf-8", {**FILES, SUMS: HA.encode() + b"  a\xff.txt\n"}, [("CC002", SUMS, 1)]),
    ("CC003 bom", {**FILES, SUMS: b"\xef\xbb\xbf" + HA.encode() + b"  a.txt\n"}, [("CC003", SUMS, 1)]),
    ("PV104 *.sha256 file", sums_file(f"{HB} *a.txt\n", "a.txt.sha256"), [("PV104", "a.txt.sha256", 1)]),
    # manifests
    ("PV101 manifest without artifacts", manifest([]), [("PV101", M, 3)]),
    ("PV107 not an object", {**FILES, M: "[]\n"}, [("PV107", M, 1)]),
    ("PV107 uppercase digest", manifest([{**ORIGINAL, "sha256": HA.upper()}]), [("PV107", M, 6)]),
    ("PV107 unknown role", manifest([{**ORIGINAL, "role": "copy"}]), [("PV107", M, 8)]),
    ("PV107 derived without origin", manifest([ORIGINAL, {**DERIVED, "derived_from": None}]),
     [("PV107", M, 15)]),
    ("PV107 derived without how", manifest([ORIGINAL, {k: v for k, v in DERIVED.items() if k != "derivation"}]),
     [("PV107", M, 10)]),
    ("PV107 original with origin", manifest([{**ORIGINAL, "derived_from": "x"}]), [("PV107", M, 9)]),
    ("PV107 extra key", manifest([{**ORIGINAL, "mtime": 3}]), [("PV107", M, 4)]),
    ("PV108 origin not listed", manifest([{**DERIVED, "derived_from": "nowhere.txt"}]), [("PV108", M, 9)]),
    ("PV108 origin is derived", manifest([ORIGINAL, DERIVED, {**DERIVED, "path": ODD, "sha256": HODD, "size": 3,
                                                              "derived_from": "dir/b.txt"}]),
     [("PV108", M, 23)]),
    ("PV103 manifest missing", manifest([{**ORIGINAL, "path": "gone.bin"}]), [("PV103", M, 5)]),
    ("PV104 manifest digest", manifest([{**ORIGINAL, "sha256": HB}]), [("PV104", M, 6)]),
    ("PV106 manifest size", manifest([{**ORIGINAL, "size": 99}]), [("PV106", M, 7)]),
    ("PV105 manifest twice", manifest([ORIGINAL, ORIGINAL]), [("PV105", M, 11)]),
    ("CC010 manifest climbs out", manifest([{**ORIGINAL, "path": "a/../../x"}]), [("CC010", M, 5)]),
    ("CC004 manifest syntax", {**FILES, M: '{"version": 1,\n "artifacts": [,]}\n'}, [("CC004", M, 2)]),
]  # fmt: skip

GOOD_CASES: list[tuple[str, dict[str, bytes | str]]] = [
    ("gnu text, lf", sums_file(f"{HA}  a.txt\n{HB}  dir/b.txt\n")),
    ("crlf, unsorted, non-ascii, no final newline",
     sums_file(f"{HODD}  {ODD}\r\n{HB}  dir/b.txt\r\n{HA}  a.txt")),
    ("binary marker and upper-case hex", sums_file(f"{HA.upper()} *a.txt\n")),
    ("bsd tag forms", sums_file(f"SHA256 (a.txt) = {HA}\nSHA256(dir/b.txt)= {HB}\n")),
    ("bsd -r single space", sums_file(f"{HA} a.txt\n")),
    ("blanks before the digest", sums_file(f"  {HA}  a.txt\n\t\\{HB}  dir/b.txt\n")),
    ("tab separators", sums_file(f"{HA}\ta.txt\n{HB}\tdir/b.txt\nSHA256 ({ODD})\t=\t{HODD}\n")),
    ("comments and empty lines", sums_file(f"# evidence\n\n{HA}  a.txt\r\n\r\n\n")),
    ("escaped backslash-free line", sums_file(f"\\{HA}  a.txt\n")),
    ("escaped newline in a name", {**FILES, "new\nline.txt": A, SUMS: f"\\{HA}  new\\nline.txt\n"}),
    ("./ prefix", sums_file(f"{HA}  ./a.txt\n")),
    ("a path through .. that stays inside", sums_file(f"{HA}  dir/../a.txt\n")),
    ("other names are not ours", {**FILES, "SHA256SUMS.old": "junk\n", "notes.sha256.txt": "junk\n"}),
    ("manifest", manifest([ORIGINAL, DERIVED])),
    ("manifest with an original kept elsewhere",
     manifest([{"path": "private/usage.csv", "sha256": HODD, "size": 12, "role": "original",
                "in_repository": False},
               {**DERIVED, "derived_from": "private/usage.csv"}], name="x.provenance.json")),
]  # fmt: skip


@pytest.mark.parametrize(("files", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_fixture_is_caught(tmp_path: Path, run_json: RunCLI, files: dict[str, bytes | str],
                               expected: list[Row]) -> None:  # fmt: skip
    write_tree(tmp_path, files)
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert rules_of(report) == expected, report["findings"]
    assert code == (0 if expected[0][0] == "PV109" else 1)  # PV109 is a warning
    finding = report["findings"][0]
    assert finding["message"] and (finding["line"] or finding["pointer"] is not None)


@pytest.mark.parametrize("files", [c[1] for c in GOOD_CASES], ids=[c[0] for c in GOOD_CASES])
def test_good_fixture_passes(
    tmp_path: Path, run_json: RunCLI, files: dict[str, bytes | str]
) -> None:
    write_tree(tmp_path, files)
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


def test_every_file_rule_has_a_bad_fixture() -> None:
    caught = {rule for _, _, expected in BAD for rule, _, _ in expected}
    assert {r.id for r in all_rules() if r.id.startswith("PV1")} <= caught


def test_manifest_findings_carry_pointers(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, manifest([ORIGINAL, {**ORIGINAL, "path": "dir/b.txt", "size": 1}]))
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    assert [(f["rule"], f["pointer"]) for f in report["findings"]] == [
        ("PV104", "/artifacts/1/sha256"),
        ("PV106", "/artifacts/1/size"),
    ]


def test_an_escaping_path_is_never_opened(tmp_path: Path, run_json: RunCLI) -> None:
    """A listed file outside the root whose digest would match: still CC010, never a pass."""
    secret = tmp_path / "secret.txt"
    secret.write_bytes(A)
    root = write_tree(tmp_path / "repo", sums_file(f"{HA}  ../secret.txt\n"))
    os.symlink(secret, root / "link.txt")
    (root / SUMS).write_text(f"{HA}  ../secret.txt\n{HA}  link.txt\n", encoding="utf-8")
    code, report = run_json("check", "--all", "--root", str(root))
    assert code == 1
    assert rules_of(report) == [("CC010", SUMS, 1), ("CC001", SUMS, 2)]
    assert "secret.txt" in report["findings"][0]["message"]


def test_paths_relative_to_the_sums_file(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(
        tmp_path, {**FILES, "dir/SHA256SUMS": f"{HB}  b.txt\n{HA}  ../a.txt\n{HA}  ../../x\n"}
    )
    (tmp_path / ".continuity.toml").write_text('[provenance]\nrelative-to = "sums-file"\n')
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    assert rules_of(report) == [("CC010", "dir/SHA256SUMS", 3)]


def test_configured_sums_names(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, {**FILES, "release/CHECKSUMS": f"{HB}  a.txt\n", SUMS: "junk\n"})
    (tmp_path / ".continuity.toml").write_text('[provenance]\nsums-files = ["release/*"]\n')
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    assert rules_of(report) == [("PV104", "release/CHECKSUMS", 1)]


@pytest.mark.parametrize(
    ("table", "key"),
    [('sums-files = "SHA256SUMS"', "provenance.sums-files"),
     ('relative-to = "cwd"', "provenance.relative-to"),
     ("digest = 1", "provenance.digest")],
)  # fmt: skip
def test_bad_options_are_exit_2(tmp_path: Path, table: str, key: str,
                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from continuity_checks.cli import main

    (tmp_path / ".continuity.toml").write_text(f"[provenance]\n{table}\n")
    assert main(["check", "--all", "--root", str(tmp_path)]) == 2
    assert key in capsys.readouterr().err


# --- the DSH corpus ------------------------------------------------------------------------------

DSH = CORPUS / "dsh"
DSH_SUMS = "evidence/provenance/SHA256SUMS.txt"


def test_dsh_sums_verifies_what_the_corpus_holds(run_json: RunCLI) -> None:
    """The four listed files the corpus holds match; the other eighteen are missing, by name."""
    data = (DSH / DSH_SUMS).read_bytes()  # fails, not skips, without the corpus
    entries = sums.parse(data).entries
    assert len(entries) == 22
    code, report = run_json("check", "--root", str(DSH), str(DSH / DSH_SUMS))
    assert code == 1
    assert {f["rule"] for f in report["findings"]} == {"PV103"}
    missing = {e.path for e in entries if not (DSH / e.path).is_file()}
    assert len(missing) == 18
    messages = [f["message"] for f in report["findings"]]
    for entry in entries:
        named = [m for m in messages if json.dumps(entry.path, ensure_ascii=False) in m]
        assert len(named) == (1 if entry.path in missing else 0), entry.path
    assert sorted(f["line"] for f in report["findings"]) == sorted(
        e.line for e in entries if e.path in missing
    )


def test_dsh_sums_shape() -> None:
    parsed = sums.parse((DSH / DSH_SUMS).read_bytes())
    assert parsed.crlf and parsed.final_newline and not parsed.malformed and not parsed.bad_text
    assert any("лайв" in e.path and " " in e.path for e in parsed.entries)


@pytest.mark.parametrize("mutation", ["byte", "line"])
def test_dsh_mutations_are_caught(tmp_path: Path, run_json: RunCLI, mutation: str) -> None:
    """A changed byte in a listed file is PV104 at its line."""
    for rel in [
        "evidence/provenance/SHA256SUMS.txt",
        "evidence/memory-injections/WORKING_STATE.json",
    ]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes((DSH / rel).read_bytes())
    target = tmp_path / "evidence/memory-injections/WORKING_STATE.json"
    data = bytearray(target.read_bytes())
    if mutation == "byte":
        data[100] ^= 1
    else:
        data = bytearray(bytes(data).replace(b"\n", b"\r\n"))  # what autocrlf would do
    target.write_bytes(bytes(data))
    _, report = run_json("check", "--root", str(tmp_path), str(tmp_path / DSH_SUMS))
    assert ("PV104", DSH_SUMS, 13) in rules_of(report)


# --- parsing -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "path", "binary"),
    [(f"{HA}  a b.txt", "a b.txt", False),
     (f"{HA} *a b.txt", "a b.txt", True),
     (f"{HA}   lead", " lead", False),
     (f"\\{HA}  a\\\\b", "a\\b", False),
     (f"\\{HA}  a\\nb\\rc", "a\nb\rc", False),
     (f"\\SHA256 (a\\nb) = {HA}", "a\nb", False),
     (f"SHA256 (x (1).txt) = {HA}", "x (1).txt", False),
     (f"{HA}  a\\b", "a\\b", False)],
)  # fmt: skip
def test_line_forms(line: str, path: str, binary: bool) -> None:
    entry = sums.parse_line(line, 7)
    assert entry == sums.Entry(7, HA, path, binary)


_NAMES = ["a", "b", " a", "*a", "a ", "a\\b", "x y", "(p)", "a)b"]


def _listing(seed: int) -> bytes:
    """A listing mixing every line form with blanks, tabs, escapes, upper case and bad lines."""
    rnd = random.Random(seed)
    lines = []
    for _ in range(rnd.randint(1, 5)):
        name, lead = rnd.choice(_NAMES), rnd.choice(["", "", " ", "\t", "\\"])
        digest = rnd.choice([HA, HA.upper(), HA[:63]])
        if rnd.random() < 0.2:
            blank = ["", " ", "\t"]
            tag = f"SHA256{rnd.choice([' ', ''])}({name}){rnd.choice(blank)}={rnd.choice(blank)}"
            lines.append(lead + tag + rnd.choice([digest, digest + " "]))
        else:
            lines.append(lead + digest + rnd.choice(["  ", " *", " ", "\t", "\t ", "   "]) + name)
    eol = rnd.choice(["\n", "\r\n"])
    return (eol.join(lines) + rnd.choice([eol, ""])).encode()


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs GNU sha256sum")
def test_listings_are_read_as_sha256sum_reads_them(tmp_path: Path) -> None:
    """Which lines are checksum lines, and which files they name, as `sha256sum -c` says."""
    write_tree(tmp_path, dict.fromkeys(_NAMES, A))
    for seed in range(80):
        data = _listing(seed)
        (tmp_path / "L").write_bytes(data)
        gnu = subprocess.run(
            ["sha256sum", "-c", "--warn", "L"], cwd=tmp_path, capture_output=True, text=True
        )
        parsed = sums.parse(data)
        assert [m.line for m in parsed.malformed] == [
            int(n) for n in re.findall(r"L: (\d+): improperly", gnu.stderr)
        ], data
        named = [line[: -len(": OK")] for line in gnu.stdout.splitlines() if line.endswith(": OK")]
        assert [e.path for e in parsed.entries if e.path in _NAMES] == named, data
        assert len(parsed.entries) == len(gnu.stdout.splitlines()), data


@pytest.mark.parametrize("path", ["a.txt", "with space/é.txt", "back\\slash", "new\nline", "cr\rx"])
def test_written_lines_read_back(path: str) -> None:
    line = sums.format_line(HA, path)
    assert "\n" not in line and "\r" not in line
    assert sums.parse_line(line, 1) == sums.Entry(1, HA, path)


@pytest.mark.parametrize(
    "data",
    [b"", b"\n", b"x", b"\\", b"\\\n", HA.encode() + b"  ", b"SHA256 (", b"SHA256 () = " + HA.encode(),
     b"SHA256 (a) = sha256:" + HA.encode(), b"\xff\xfe", b"\r\r\n\r", bytes(range(256))],
)  # fmt: skip
def test_any_bytes_parse_without_raising(data: bytes) -> None:
    parsed = sums.parse(data)
    assert (
        len(parsed.entries) + len(parsed.malformed) + len(parsed.bad_text) <= data.count(b"\n") + 1
    )


def test_hashing_through_the_snapshot_in_parallel_equals_hashlib(tmp_path: Path) -> None:
    """Many files (some large enough for the thread pool) hash to what hashlib says, in order;
    unreadable ones come back as Unreadable in their place."""
    paths = []
    for index in range(12):
        data = os.urandom(700_000 + index)
        (tmp_path / f"f{index}").write_bytes(data)
        paths.append(f"f{index}")
    paths.insert(3, "missing")
    snapshot = WorkTree(tmp_path, 1 << 30)
    results = listed.hash_all(snapshot, paths)
    for path, result in zip(paths, results, strict=True):
        if path == "missing":
            assert isinstance(result, Unreadable)
        else:
            assert isinstance(result, Digest)
            assert result.hex == hashlib.sha256((tmp_path / path).read_bytes()).hexdigest()


def _manifest_values() -> list[object]:
    values: list[object] = [
        json.loads(text)
        for _, files, _ in [*BAD, *[(c[0], c[1], []) for c in GOOD_CASES]]
        for name, text in files.items()
        if name.endswith(".json")
        and isinstance(text, str)
        and text.strip().startswith("{")
        and "[,]" not in text
    ]
    values += [
        {"version": 1, "artifacts": [{**ORIGINAL, "size": -1}]},
        {"version": 2},
        {},
        {"version": 1, "artifacts": [{**DERIVED, "derivation": " "}]},
        None,
        "x",
    ]
    return values


@pytest.mark.parametrize("value", _manifest_values())
def test_schema_engines_agree_on_manifests(value: object) -> None:
    import jsonschema

    from continuity_checks.core import schemas

    oracle = jsonschema.Draft202012Validator(
        schemas.load("provenance-manifest"),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    assert schemas.validator("provenance-manifest").is_valid(value) == oracle.is_valid(value)


def test_provenance_example_is_clean_and_guards_its_bytes(tmp_path: Path, run_json: RunCLI) -> None:
    import shutil

    from tests.conftest import EXAMPLES

    code, report = run_json("check", "--all", "--root", str(EXAMPLES), "--family", "provenance")
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 2)
    shutil.copytree(EXAMPLES / "provenance", tmp_path / "examples/provenance")
    (tmp_path / ".git").mkdir()  # the copy is a repository: paths are relative to its top
    log = tmp_path / "examples/provenance/evidence/session-log.txt"
    log.write_bytes(log.read_bytes().replace(b"12 passed", b"13 passed"))
    _, report = run_json("check", "--all", "--root", str(tmp_path / "examples"))
    assert sorted(rules_of(report)) == [
        ("PV104", "examples/provenance/PROVENANCE.json", 7),
        ("PV104", "examples/provenance/evidence/SHA256SUMS.txt", 1),
    ]


@pytest.mark.parametrize(
    "path",
    ["SHA256SUMS", "evidence/provenance/SHA256SUMS.txt", "dist/x.tar.gz.sha256", "PROVENANCE.json",
     "a/b.provenance.json", "SHA256SUMS.old", "notSHA256SUMS", "x.sha256.txt", "provenance.json",
     "SHA256SUMS/inner", "sha256sums", "evidence/sha256sums.txt", "Sha256Sums.TXT", "checksums.txt",
     "sha256sums.txt.bak"],
)  # fmt: skip
def test_the_hook_pattern_and_the_claims_agree(path: str) -> None:
    """pre-commit passes the hook the files its pattern matches: exactly what the family claims
    with the default options."""
    import re

    from continuity_checks.checks.provenance import DECLARATION
    from continuity_checks.checks.provenance.family import ProvenanceFamily
    from continuity_checks.core.config import Config

    claimed = ProvenanceFamily(Config()).claims(path) is not None
    assert bool(re.search(DECLARATION.files, path)) == claimed


def test_explain_names_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from continuity_checks.cli import main

    assert main(["explain", "PV202"]) == 0
    assert "entry was removed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("options", "endings"),
    [
        ({}, ("SHA256SUMS", "SHA256SUMS.txt", ".sha256", "PROVENANCE.json", ".provenance.json")),
        ({"sums-files": ["CHECKSUMS", "*.sums"]}, ("CHECKSUMS", ".sums", "PROVENANCE.json",
                                                   ".provenance.json")),
        ({"sums-files": ["SUMS*"]}, None),  # ends with a wildcard: any name
        ({"manifests": ["evidence/**"]}, None),  # a path pattern: anything below it
    ],
)  # fmt: skip
def test_the_quick_test_of_claims_never_changes_an_answer(
    options: dict[str, list[str]], endings: tuple[str, ...] | None
) -> None:
    """claims() first rules a path out by the literal ends of the name patterns; it must answer
    exactly as the patterns alone do."""
    from continuity_checks.checks.provenance.family import ProvenanceFamily
    from continuity_checks.core.config import Config

    family = ProvenanceFamily(Config(options={"provenance": options}))
    assert family.listing_endings == endings
    paths = [
        "SHA256SUMS", "a/SHA256SUMS.txt", "a/b.sha256", "x.sums", "CHECKSUMS", "a/CHECKSUMS",
        "SUMS-1", "SUMS", "notSHA256SUMS", "PROVENANCE.json", "a/x.provenance.json",
        "evidence/a/b.txt", "evidence", "a/evidence/b", ".deltalayer/changes/x.json", "README",
    ]  # fmt: skip
    for path in paths:
        name = path.rpartition("/")[2]
        expected = (
            "manifest"
            if family.manifest_names.match(name) or family.manifest_paths.match(path)
            else "sums"
            if family.sums_names.match(name) or family.sums_paths.match(path)
            else None
        )
        assert family.claims(path) == expected, path


@pytest.mark.parametrize(
    "pattern", ["SHA256SUMS", "*.sums", "SUMS*", "a?b.txt", "*.x?y", "??", "x*y?z.txt", "?", "*"]
)
def test_a_patterns_literal_end_is_what_follows_its_last_wildcard(pattern: str) -> None:
    """The literal end of a name pattern is what a split at its wildcards leaves last (an empty
    end: the pattern ends with a wildcard, and no ending rules a name out)."""
    import re

    from continuity_checks.checks.provenance.family import _endings
    from continuity_checks.core.globs import Globs

    tail = re.split(r"[*?]", pattern)[-1]
    assert _endings(Globs([pattern]), Globs([])) == ((tail,) if tail else None)
