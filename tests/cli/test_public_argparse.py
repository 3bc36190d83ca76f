"""The command line uses argparse through its public interface only: no class, function or
attribute of argparse whose name begins with an underscore is named anywhere in the source
(an attribute is judged in the modules that import argparse, where its objects are made)."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from tests.conftest import REPO

SOURCE = REPO / "src" / "continuity_checks"


def private_names() -> frozenset[str]:
    """The names argparse keeps to itself: of the module, and of every kind of object it
    makes (their classes' and their instances' attributes)."""
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    made = [
        parser,
        parser.add_argument("--x"),
        parser.add_argument_group("group"),
        parser.add_mutually_exclusive_group(),
        subparsers,
        subparsers.add_parser("command", help="a command"),
        argparse.Namespace(),
        argparse.HelpFormatter("prog"),
        argparse,
    ]
    names = {name for thing in made for name in dir(thing)}
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__") and n != "_")


def uses(path: Path, private: frozenset[str]) -> list[str]:
    """Where ``path`` names a private name of argparse: ``line: name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports_argparse = any(
        (isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and node.module == "argparse")
        for node in ast.walk(tree)
    )
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "argparse":
            found += [f"{node.lineno}: {a.name}" for a in node.names if a.name in private]
        elif isinstance(node, ast.Attribute) and node.attr in private:
            of_module = isinstance(node.value, ast.Name) and node.value.id == "argparse"
            if of_module or imports_argparse:
                found.append(f"{node.lineno}: {node.attr}")
        elif isinstance(node, ast.Constant) and node.value in private and imports_argparse:
            found.append(f"{node.lineno}: {node.value!r}")  # getattr(parser, "_actions")
    return found


def test_no_private_argparse_name_is_used() -> None:
    private = private_names()
    found = {
        str(path.relative_to(REPO)): where
        for path in sorted(SOURCE.rglob("*.py"))
        if (where := uses(path, private))
    }
    assert found == {}


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    """Each form the scan refuses is found in a module that has it."""
    module = tmp_path / "m.py"
    module.write_text(
        "import argparse\n"
        "from argparse import _SubParsersAction\n"
        "def f(parser: argparse.ArgumentParser) -> object:\n"
        "    return parser._actions, argparse._ActionsContainer, getattr(parser, '_defaults')\n",
        encoding="utf-8",
    )
    assert uses(module, private_names()) == [
        "2: _SubParsersAction",
        "4: _actions",
        "4: _ActionsContainer",
        "4: '_defaults'",
    ]
