"""The fast paths of ``check --all`` against the slow ones they stand in for: each
must give the same answer for every input, not only for the valid deltas they were made for."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from continuity_checks import checks
from continuity_checks.checks.deltas import files, naming
from continuity_checks.checks.sessions import layout
from continuity_checks.checks.working_state.family import WorkingStateFamily
from continuity_checks.core import strict_json
from continuity_checks.core.config import Config
from continuity_checks.core.family import Claimed, CollectedTree, Family
from continuity_checks.core.globs import Globs, translate
from continuity_checks.core.paths import _normalised
from continuity_checks.core.snapshot import Unreadable, WorkTree, confine
from continuity_checks.engine.discovery import DirectoryClaims
from tests.conftest import write_tree

# --- strict JSON: the compact fast path against the strict decoder ------------------------------

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**320), max_value=10**320)
    | st.floats()
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=6),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
    max_leaves=12,
)


def _outcome(result: strict_json.Document | strict_json.Problem) -> object:
    if isinstance(result, strict_json.Problem):
        return (result.rule.id, result.line, result.column, result.pointer)
    # NaN never gets here (CC006), so == compares values fully
    return (json.dumps(result.value), result.compact)


def _mutations(text: str) -> list[str]:
    """The compact text and near-misses of it: a newline, whitespace, an escape, a repeated
    member (a duplicate key when the text is an object), a second value."""
    out = [text, text + "\n", text + "\n\n", " " + text, text.replace(",", ", ", 1)]
    out.append(text.replace("/", "\\/", 1))
    out.append(text.replace("é", "\\u00e9", 1))
    if text.startswith("{") and len(text) > 2:
        first = text[1 : text.index(",")] if "," in text else text[1:-1]
        out.append(text[:-1] + "," + first + "}")
    out.append(text + text)
    return out


@given(_values, st.integers(min_value=1, max_value=6))
def test_the_compact_fast_path_answers_as_the_strict_path(value: object, depth: int) -> None:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return
    for candidate in _mutations(text):
        fast = strict_json.parse(candidate, max_depth=depth)
        strict = strict_json._parse_strictly(candidate, max_depth=depth)
        assert _outcome(fast) == _outcome(strict), candidate


_texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=4)
_string_trees = st.recursive(
    _texts,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_texts, c, max_size=3),
    max_leaves=10,
)


@given(st.one_of(_string_trees, _values), st.integers(min_value=0, max_value=8))
def test_the_load_of_a_proof_asked_for_answers_as_the_strict_path(
    value: object, depth: int
) -> None:
    """``load(..., compact_proof=True)`` reads the bytes outside the strings for the number and
    depth rules (no walk where only punctuation is there): the same Document or Problem as the
    Python reader, at every depth limit, for values of strings alone and of anything."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return
    for candidate in _mutations(text):
        data = candidate.encode("utf-8", "surrogatepass")
        fast = strict_json.load(data, max_depth=depth, compact_proof=True)
        strict = strict_json._load_strictly(data, max_depth=depth)
        assert _outcome(fast) == _outcome(strict), candidate


@pytest.mark.parametrize(
    "text",
    ['["a",1e400]', '{"a":' + "9" * 400 + "}", '["a",-1E+999]', '["a",true,null]', '[["a"]]'],
)
def test_the_load_of_a_proof_asked_for_walks_where_a_number_may_be(text: str) -> None:
    """Under a depth limit far above their nesting, numbers beyond a double still refused."""
    for depth in (2, 1000):
        fast = strict_json.load(text.encode(), max_depth=depth, compact_proof=True)
        strict = strict_json._load_strictly(text.encode(), max_depth=depth)
        assert _outcome(fast) == _outcome(strict), (text, depth)


def test_the_fast_path_refuses_what_the_strict_one_refuses() -> None:
    for text in (
        '{"a":NaN}',
        '{"a":-Infinity}',
        '{"a":1e400}',
        '{"a":1,"a":1}',
        "[" + "9" * 400 + "]",
    ):
        fast, strict = strict_json.parse(text), strict_json._parse_strictly(text)
        assert isinstance(fast, strict_json.Problem), text
        assert _outcome(fast) == _outcome(strict)


_number_forms = st.sampled_from(["1e5", "1E5", "1.0", "1.50", "-0", "-0.0", "0", "10", "-1e-7",
                                 "2.5E+3", "true", "false", "null", '"e"', '"-0"', '" "'])  # fmt: skip


@given(_values, st.data())
def test_the_compact_proof_is_the_compact_encoding(value: object, data: st.DataObject) -> None:
    """``Document.compact`` against encoding the value and comparing: for the compact text,
    its near-misses, and texts with other number forms put in."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return
    candidates = _mutations(text)
    form = data.draw(_number_forms)
    candidates += [f"[{form}]", f'{{"a":{form},"b":[{form},{text}]}}', f"[{text}, {form}]"]
    for candidate in candidates:
        doc = strict_json.parse(candidate)
        if isinstance(doc, strict_json.Problem):
            continue
        body = candidate[:-1] if candidate.endswith("\n") else candidate
        expected = json.dumps(doc.value, ensure_ascii=False, separators=(",", ":")) == body
        assert doc.compact == expected, candidate
        # the proof from the bytes load read (a Document whose text is decoded when asked)
        loaded = strict_json.load(candidate.encode("utf-8", "surrogatepass"))
        assert isinstance(loaded, strict_json.Document)
        assert loaded.compact == expected, candidate
        assert loaded.text == candidate


@pytest.mark.parametrize(
    "text",
    ['"a"', '"a"\n', '\n"a"', '\n"a"\n', '"a"\n\n', '["a",\n"b"]', '{"a":["b"]}\n', "[1,-2]",
     "[1,-0]", '{"a":1}\r\n', '{"a":true}', "\t[]", "[]", "{}\n", '{"a":"b c, d: e"}\n'],
)  # fmt: skip
def test_the_compact_proof_of_texts_around_their_strings(text: str) -> None:
    """Newlines before, after and between the strings, and the one-test case at its edges."""
    body = text[:-1] if text.endswith("\n") else text
    for doc in (strict_json.parse(text), strict_json.load(text.encode())):
        assert isinstance(doc, strict_json.Document)
        expected = json.dumps(doc.value, ensure_ascii=False, separators=(",", ":")) == body
        assert doc.compact == expected


def test_the_compact_proof_of_a_text_with_a_lone_surrogate() -> None:
    """A text given as such (not decoded from bytes) may hold one; the proof still answers."""
    for text, expected in (('["\ud800"]', True), ('["\ud800", 1]', False)):
        doc = strict_json.parse(text)
        assert isinstance(doc, strict_json.Document)
        assert doc.compact is expected


@given(st.lists(st.text(max_size=8) | st.sampled_from(["ci agent", "gpt/5", "codex"]), max_size=30))
def test_the_kept_source_slugs_are_the_slugs(sources: list[str]) -> None:
    slugs = naming.SourceSlugs()
    slugs.KEPT = 4  # emptied along the way
    for source in sources:
        assert slugs[source] == naming.source_slug(source)
        assert naming.stem("t", source, slugs) == naming.stem("t", source)
        assert len(slugs) <= 4


# --- globs: the literal tail test in front of the expression ------------------------------------

_segment = st.sampled_from(["a", "b.json", ".dsh", "x.projection.json", "*", "**", "?", "*.json"])
_name = st.sampled_from(["a", "b.json", ".dsh", "x.projection.json", "c.raw.txt", "ab"])


@given(
    st.lists(st.lists(_segment, min_size=1, max_size=3).map("/".join), min_size=1, max_size=3),
    st.lists(_name, min_size=1, max_size=4).map("/".join),
)
@example(["**/a"], "a")  # the / of **/ is optional: not part of the literal tail
@example(["**/*.projection.json"], "x.projection.json/a")  # a directory covers what it holds
def test_globs_answer_as_their_expression(patterns: list[str], path: str) -> None:
    expression = re.compile("|".join(f"(?:{translate(p)})" for p in patterns), re.DOTALL)
    assert Globs(patterns).match(path) == (expression.fullmatch(path) is not None)


@given(
    st.lists(st.lists(_segment, min_size=1, max_size=3).map("/".join), min_size=1, max_size=3),
    st.lists(st.lists(_name, min_size=1, max_size=4).map("/".join), min_size=1, max_size=6),
)
def test_one_globs_answers_every_path_as_its_expression(
    patterns: list[str], paths: list[str]
) -> None:
    """The expression is compiled when a path first needs it: the paths before and after that
    are answered alike."""
    expression = re.compile("|".join(f"(?:{translate(p)})" for p in patterns), re.DOTALL)
    globs = Globs(patterns)
    assert [globs.match(p) for p in paths] == [expression.fullmatch(p) is not None for p in paths]


# --- claims: the early rejects against the full tests ---------------------------------------------

_parts = st.sampled_from(
    ["sessions", "s1", "history", "0001-u-n.json", "meta.json", "file_backups", "7",
     "manifest.json", "x.tmp", "meta.json.1.tmp", "memory", "topics", "t.md", ".dsh",
     "project", "runtime", "transactions", "tx-1", "WORKING_STATE.json", "a.projection.json",
     ".deltalayer", "changes", "d.json"]
)  # fmt: skip
_paths = st.lists(_parts, min_size=1, max_size=5).map("/".join)


def _session_claims_in_full(path: str) -> str | None:
    """layout.claims before its early reject: the expression decides every path."""
    head, _, name = path.rpartition("/")
    if name == "index.json" and (head == "sessions" or head.endswith("/sessions")):
        return layout.INDEX
    if name == "locations.json" and (head == "sessions" or head.endswith("/sessions")):
        return layout.LOCATIONS
    if name == "projects.json" and (head == "projects" or head.endswith("/projects")):
        return layout.PROJECTS
    if name == ".gitignore" and (head == ".openprogram" or head.endswith("/.openprogram")):
        return layout.GITIGNORE
    if "memory/" in path:
        for expression, kind in (
            (layout._ARCHIVE, layout.ARCHIVE),
            (layout._TOPIC, layout.TOPIC),
            (layout._RECORDS, layout.RECORDS),
        ):
            if expression.search(path):
                return kind
    found = layout.session_path(path)
    if found is None:
        return None
    rest = found.rest
    if rest.startswith("history/"):
        return (
            layout.NODE
            if rest.endswith(".json")
            else layout.TEMP
            if rest.endswith(".tmp")
            else None
        )
    if rest == "meta.json":
        return layout.META
    if rest.startswith("file_backups/"):
        return layout.BACKUP
    if found.directory or rest.startswith(("meta.json.", "jobs.json.")):
        return layout.TEMP
    return None


@given(_paths)
def test_session_claims_reject_early_only_what_the_expression_rejects(path: str) -> None:
    assert layout.claims(path) == _session_claims_in_full(path)


def _working_state_claims_in_full(family: WorkingStateFamily, path: str) -> str | None:
    """WorkingStateFamily.claims before its early reject: every path split into its parts."""
    from continuity_checks.checks.working_state.family import _in_transaction

    parts = path.split("/")
    name = parts[-1]
    if name == "WORKING_STATE.json":
        return "state"
    if ".dsh" in parts[:-1]:
        at = parts.index(".dsh")
        below = parts[at + 1 : -1]
        if below == ["project"] and name.endswith(".json"):
            return "project"
        if below and below[0] == "runtime":
            return "transaction" if _in_transaction(parts[at + 1 :]) else "runtime"
        if _in_transaction(parts[at + 1 :]):
            return "transaction"
    return "projection" if family.projections.match(path) else None


@given(_paths)
def test_working_state_claims_reject_early_only_what_the_full_test_rejects(path: str) -> None:
    family = WorkingStateFamily(Config())
    assert family.claims(path) == _working_state_claims_in_full(family, path)


# --- twins: one listing against one look-up per delta ---------------------------------------------


@given(
    st.sets(
        st.sampled_from(["a", "b", "c", "d.frozen", "e"]).flatmap(
            lambda stem: st.sampled_from([f"{stem}.json", f"{stem}.frozen.json"])
        ),
        max_size=10,
    ),
    st.data(),
)
def test_twins_from_a_listing_are_the_twins_looked_up(
    tmp_path_factory: pytest.TempPathFactory, present: set[str], data: st.DataObject
) -> None:
    root = tmp_path_factory.mktemp("t")
    write_tree(root, {f".deltalayer/changes/{n}": "{}" for n in present})
    claimed = data.draw(st.sets(st.sampled_from(sorted(present)))) if present else set()
    snapshot = WorkTree(root, 1 << 20)
    parent = ".deltalayer/changes"
    assert files._listed_twins(snapshot, parent, claimed) == files._looked_up_twins(
        snapshot, parent, claimed
    )
    items = [Claimed(f"{parent}/{n}", "delta") for n in claimed]
    for found in files.twins(snapshot, items):
        assert naming.frozen_name(found.path.rpartition("/")[2]) in present


_tree_paths = st.sampled_from(
    [".deltalayer/changes/a.json", ".deltalayer/changes/a.frozen.json",
     ".deltalayer/changes/b.json", ".deltalayer/changes/sub/c.json", ".deltalayer/changes.jsonl",
     "AGENTS.md", "PROJECT.md", "p/.deltalayer/changes/d.json", "p/.deltalayer/changes/d.frozen.json",
     "p/AGENTS.md", "q/.deltalayer/changes/x.tmp"]
)  # fmt: skip


@given(st.sets(_tree_paths), st.lists(_tree_paths, unique=True), st.sets(_tree_paths))
def test_the_deltas_tree_fed_as_a_stream_is_the_check_of_the_collected_files(
    present: set[str], claimed_paths: list[str], unread: set[str]
) -> None:
    """The deltas family's own TreeCheck (grouped as the files come, the unread left out at
    the end) against the default one (every file kept, the unread left out, then
    check_tree)."""
    _assert_streamed_is_collected(present, claimed_paths, unread)


def _assert_streamed_is_collected(present: set[str], claimed: list[str], unread: set[str]) -> None:
    """The deltas family's TreeCheck fed ``claimed`` in order finds what the default one does
    over the same files, with ``present`` on disk and ``unread`` left out."""
    family = _families(Config())[0]
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_tree(root, {path: "{}" for path in present})
        snapshot = WorkTree(root, 1 << 20)
        streamed, collected = family.tree(snapshot), CollectedTree(snapshot, family.check_tree)
        for path in claimed:
            kind = family.claims(path)
            if kind is None:  # PROJECT.md: only looked up
                continue
            streamed.add(path, kind)
            collected.add(path, kind)
        assert list(streamed.finish(unread)) == list(collected.finish(unread))


@given(st.sets(_tree_paths), st.lists(_tree_paths, unique=True), st.sets(_tree_paths))
def test_the_twins_found_as_the_stream_moves_on_are_the_twins_found_at_the_end(
    present: set[str], claimed_paths: list[str], unread: set[str]
) -> None:
    """The deltas family's TreeCheck finds a directory's twins when the stream moves past it
    (from LIST_FROM deltas, lowered to 1 here), kept for the end while nothing changes: the
    findings are the default TreeCheck's, whatever the order of the paths (a directory met
    again after others), with files left unread."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files, "LIST_FROM", 1)
        _assert_streamed_is_collected(present, claimed_paths, unread)


def test_a_directory_of_deltas_passed_by_the_stream_has_its_twins_found_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's twins are found when the next claimed file (AGENTS.md) comes, not at the
    end: the end lists nothing, and finds the same twin."""
    monkeypatch.setattr(files, "LIST_FROM", 2)
    names = ["a.json", "a.frozen.json", "b.json"]
    write_tree(root := tmp_path, {f".deltalayer/changes/{n}": "{}" for n in names})
    listed: list[str] = []

    class Counted(WorkTree):
        def list(self, directory: str) -> list[str] | Unreadable:
            listed.append(directory)
            return super().list(directory)

    tree = files.DeltasTree(Counted(root, 1 << 20))
    for name in sorted(names):
        tree.add(f".deltalayer/changes/{name}", "delta")
    tree.add("AGENTS.md", "agents")
    assert listed == [".deltalayer/changes"]
    found = tree.finish(set())
    assert listed == [".deltalayer/changes"]
    assert [f.path for f in found if f.rule == "DL111"] == [".deltalayer/changes/a.json"]


# --- claims by directory: the names each family may claim, against asking it of every path -------

_claim_parts = st.sampled_from(
    ["sessions", "s1", "history", "0001-u-n.json", "meta.json", "file_backups", "manifest.json",
     "x.tmp", "memory", "topics", "t.md", ".dsh", "project", "runtime", "WORKING_STATE.json",
     "a.projection.json", "x-injection.raw.txt", ".deltalayer", "changes", "d.json", "d.frozen.json",
     "changes.jsonl", "AGENTS.md", "PROJECT.md", "SHA256SUMS", "sha256Sums.TXT", "a.sha256",
     "PROVENANCE.json", "b.provenance.json", "capture.json", "decision-1", "projection.json",
     "delivery.json", "required-context.json", "cycle-base.json", "r.reader.json", ".reader.json",
     "caps", "index.json", "locations.json", "projects", "projects.json", ".openprogram",
     ".gitignore", "log.jsonl", "notes.txt"]
)  # fmt: skip
_claim_paths = st.lists(_claim_parts, min_size=1, max_size=5).map("/".join)

#: every family under the defaults, and under options that give each its own globs
_CONFIGS = (
    Config(),
    Config(
        options={
            "deltas": {"legacy-files": ["**/log.jsonl"]},
            "captures": {"roots": ["caps", "caps/**"]},
            "working-state": {"projections": ["notes.txt"]},
            "provenance": {"sums-files": ["SUMS/**"], "manifests": ["*.provenance.json"]},
        }
    ),
    Config(options={"provenance": {"sums-files": ["*.sha256"], "manifests": ["PROVENANCE.json"]}}),
)


def _families(config: Config) -> list[Family]:
    return checks.build(config, checks.selected(config, None))


@given(_claim_paths)
@example(".deltalayer/changes/.deltalayer/changes.jsonl")  # a store's name in a store
@example("a.projection.json/notes.txt")  # a directory a projection glob covers whole
@example("x/SHA256SUMS")
def test_a_family_claims_only_names_it_may_claim_in_the_directory(path: str) -> None:
    directory, _, name = path.rpartition("/")
    for config in _CONFIGS:
        for family in _families(config):
            names = family.claimable(directory)
            if family.claims(path) is not None and names is not None:
                assert name in names.names or name.endswith(names.endings), (family, path)


@given(st.lists(_claim_paths, max_size=12))
def test_claims_by_directory_are_the_claims_of_every_family(paths: list[str]) -> None:
    for config in _CONFIGS:
        families = _families(config)
        by_directory = DirectoryClaims(families)
        for path in sorted(paths) + paths:  # a directory at a time, and in any order
            every = tuple(
                (i, kind) for i, f in enumerate(families) if (kind := f.claims(path)) is not None
            )
            assert by_directory.of(path) == every, path


def test_the_files_one_family_claims_as_one_kind_share_their_claimants() -> None:
    """One tuple for every delta: a batch of them for a worker pickles it once."""
    by_directory = DirectoryClaims(_families(Config()))
    first = by_directory.of(".deltalayer/changes/a.json")
    assert first == ((0, "delta"),)
    assert by_directory.of("p/.deltalayer/changes/b.frozen.json") is first
    assert by_directory.of(".deltalayer/changes/c.tmp") == ((0, "temp"),)


# --- confine: the test of a normal path against the normalisation by names -----------------------


def _comparable(result: str | Unreadable) -> object:
    return (result.rule.id, result.message) if isinstance(result, Unreadable) else result


@given(st.lists(st.sampled_from(["a", "", ".", "..", "b.json", "c:", "d\\e", "f\0"]), max_size=5))
@example(["", ""])  # "/"
@example(["."])
@example([])  # the root
def test_confine_answers_as_the_normalisation_by_names(names: list[str]) -> None:
    path = "/".join(names)
    assert _comparable(confine(path)) == _comparable(_normalised(path))


# --- the read: its own first open against open_file ---------------------------------------------


def test_the_read_opens_every_kind_of_path_as_open_file(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_tree(root, {"a/one.json": "1", "a/dir/x.json": "2"})
    (tmp_path / "secret.json").write_text("secret")
    os.symlink(tmp_path / "secret.json", root / "a" / "out.json")
    os.symlink("one.json", root / "a" / "in.json")
    os.symlink("gone.json", root / "a" / "dangling.json")
    os.symlink("loop.json", root / "a" / "loop.json")
    os.symlink("dir", root / "a" / "to-dir.json")
    os.mkfifo(root / "a" / "fifo.json")
    snapshot = WorkTree(root, 1 << 20)
    paths = ["a/one.json", "a/in.json", "a/out.json", "a/dangling.json", "a/loop.json"]
    paths += ["a/to-dir.json", "a/dir", "a/fifo.json", "a/none.json", "../x", "a//one.json"]
    for path in paths:
        opened, read = snapshot.open_file(path), snapshot.read(path)
        if isinstance(opened, Unreadable):
            assert _comparable(read) == _comparable(opened), path
        else:  # opened: what the read then finds
            os.close(opened)
            assert _comparable(read) == _read_after_opening[path], path


_read_after_opening = {
    "a/one.json": b"1",
    "a/in.json": b"1",
    "a//one.json": b"1",
    "a/dir": ("CC001", "cannot read: Is a directory"),
    "a/fifo.json": ("CC001", "expected a regular file"),
}
