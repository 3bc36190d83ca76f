"""One implementation of each idea in core/: a second copy anywhere in the package fails here.

Each test scans the source (its syntax tree, not its text, so that comments and docstrings do
not count) for the mark of the idea, and names every place outside its one module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from continuity_checks.core import strict_json
from tests.conftest import REPO

PACKAGE = REPO / "src" / "continuity_checks"


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        yield name, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _calls(tree: ast.AST) -> Iterator[ast.Call]:
    return (node for node in ast.walk(tree) if isinstance(node, ast.Call))


def _dotted(node: ast.expr) -> str:
    """``hashlib.sha256`` for the expression ``hashlib.sha256``; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def test_sha256_of_bytes_is_made_only_in_core_hashing() -> None:
    found = [
        f"{name}:{call.lineno}"
        for name, tree in _modules()
        for call in _calls(tree)
        if _dotted(call.func) in ("hashlib.sha256", "sha256") and name != "core/hashing.py"
    ]
    assert found == [], "use core.hashing.sha256_hex (or sha256_bytes for a Digest)"


def test_json_pointers_are_parsed_only_in_core_pointer() -> None:
    """The escapes ``~0`` and ``~1`` are read and written in one module, and no other module
    splits a pointer into its tokens."""
    escapes = [
        f"{name}:{node.lineno}"
        for name, tree in _modules()
        if name != "core/pointer.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.search("~[01]", node.value)
    ]
    assert escapes == [], "parse and escape pointers with core.pointer"
    splits = [
        f"{name}:{call.lineno}"
        for name, tree in _modules()
        if name != "core/pointer.py"
        for call in _calls(tree)
        if isinstance(call.func, ast.Attribute)
        and call.func.attr in ("split", "rsplit", "rpartition", "partition")
        and "pointer" in _dotted(call.func.value).lower()
        and any(isinstance(a, ast.Constant) and a.value == "/" for a in call.args)
    ]
    assert splits == [], "core.pointer.tokens and parent take a pointer apart"


def test_json_for_people_is_written_only_by_core_pretty_json() -> None:
    """Indented JSON from the standard library (what a person reads: reports, helper output,
    the files helpers write) comes from one function, so that every command writes it byte for
    byte alike. (``canonical_json``'s indent is JavaScript's, for hashes: another idea.)"""
    found = [
        f"{name}:{call.lineno}"
        for name, tree in _modules()
        if name != "core/pretty_json.py"
        for call in _calls(tree)
        if _dotted(call.func) in ("json.dumps", "json.dump", "json.JSONEncoder")
        and any(keyword.arg == "indent" for keyword in call.keywords)
    ]
    assert found == [], "write JSON for people with core.pretty_json.dumps"


def _entry_points(doc: str) -> set[str]:
    """The names in the first column of the docstring's table of entry points."""
    table = doc.split("Which to call for what:", 1)[1].split("\n\n", 2)[1]
    return {
        name
        for line in table.splitlines()
        if line and not line.startswith("=")
        for name in re.findall(r"``(\w+)", line[:32])
    }


def test_the_strict_reader_names_its_entry_points_and_keeps_the_rest_private() -> None:
    """Every public name of ``core.strict_json`` is in the table at its top, and every name
    there exists: what is not an entry point is private."""
    assert strict_json.__doc__ is not None and "Which to call for what:" in strict_json.__doc__
    listed = _entry_points(strict_json.__doc__)
    tree = ast.parse(Path(strict_json.__file__).read_text(encoding="utf-8"))
    public = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            public.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            public.update(t.id for t in targets if isinstance(t, ast.Name))
    public = {name for name in public if not name.startswith("_")}
    assert public == listed
