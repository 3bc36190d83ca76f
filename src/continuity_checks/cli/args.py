"""What every command's argument parser shares: the parser itself, the checks of values that
argparse does not make (a directory that is a file, a number below its range), the exit-2
refusal, and writing bytes to a text stream. Standard library only: the commit hook imports
it."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def terminal_columns() -> int:
    """The columns ``shutil.get_terminal_size()`` gives (``COLUMNS`` when it is a number above 0,
    else standard output's terminal, else 80), without importing ``shutil``, whose import (with
    its compression modules) costs more than any command's parsing."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80
    return size.columns or 80


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help with the description as written, as wide as argparse makes it (the
    terminal's columns less 2): argparse makes one for every option added, to check its
    ``metavar``."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """An argument parser for ``continuity <prog>``: its description as written (paragraphs
    kept), no abbreviated option names (``--conv`` is not ``--conversation``), and a record of
    its options and subcommands, kept as they are added (options with its own ``add_argument``,
    subcommands with :meth:`add_command`), by which :func:`parse` and :func:`parse_group` read
    the words."""

    def __init__(self, **kwargs: Any) -> None:
        #: every option string (``-h`` and ``--help`` too)
        self.option_names: set[str] = set()
        #: each option string of an option that takes one value -> all the option's strings
        self.value_options: dict[str, tuple[str, ...]] = {}
        #: each subcommand's name and alias -> its parser
        self.commands: dict[str, Parser] = {}
        self._command_factory: Callable[..., Parser] | None = None
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(**kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        """argparse's ``add_argument``, with the option's strings recorded."""
        action = super().add_argument(*args, **kwargs)
        names = tuple(action.option_strings)
        self.option_names.update(names)
        if names and action.nargs is None:
            self.value_options.update(dict.fromkeys(names, names))
        return action

    def add_command(self, name: str, description: str, aliases: tuple[str, ...] = ()) -> Parser:
        """One subcommand of this command group (``baseline``, ``capture``, ...): its first
        line is its line in the group's help. Which one ran is ``args.command`` (None: none was
        given, see :func:`group_usage`)."""
        if self._command_factory is None:
            subparsers = self.add_subparsers(dest="command", metavar="COMMAND", title="commands")
            self._command_factory = subparsers.add_parser
        found = self._command_factory(
            name,
            help=description.split("\n\n", 1)[0].replace("\n", " "),
            description=description,
            aliases=aliases,
        )
        self.commands.update(dict.fromkeys((name, *aliases), found))
        return found


def parser(prog: str, description: str) -> Parser:
    """The argument parser of ``continuity <prog>``."""
    return Parser(prog=f"continuity {prog}", description=description)


def parse(command: Parser, argv: Sequence[str]) -> argparse.Namespace:
    """A command's options and arguments, read as click read them: in any order (``check a
    --format json b``); an option that takes a value takes the next word whatever it is
    (``--sums -S``, ``--stdin-filename -x.json``, ``--change --``); ``-h``/``--help`` anywhere
    shows the help before any value is checked; an unknown option is named; after ``--`` every
    word is an argument (a path that begins with ``-``), wherever the others are."""
    words = _with_values(command, argv)
    end = words.index("--") if "--" in words else len(words)
    options = [word for word in words[:end] if word.startswith("-") and word != "-"]
    arguments = [word for word in words[:end] if not word.startswith("-") or word == "-"]
    for word in options:
        _known_option(command, word)  # before --help, as click did
    if "-h" in options or "--help" in options:
        command.print_help()
        raise SystemExit(0)
    arguments += [DASHES if word == "--" else word for word in words[end + 1 :]]
    # the options, then the arguments (argparse need not read them intermixed); after one --
    # when one begins with -, the one form in which argparse reads such an argument
    if any(word.startswith("-") for word in arguments):
        arguments.insert(0, "--")
    return with_dashes(command.parse_args(options + arguments))


#: ``--`` as a value (``--change --``), which argparse would drop: it is this until parsed
DASHES = "\0--"


def with_dashes(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with each :data:`DASHES` a ``--`` again."""
    for name, value in vars(args).items():
        if value == DASHES:
            setattr(args, name, "--")
        elif isinstance(value, list):
            setattr(args, name, ["--" if item == DASHES else item for item in value])
    return args


def _with_values(command: Parser, argv: Sequence[str]) -> list[str]:
    """``argv`` with each option that takes a value joined with the next word (``--sums=-S``),
    so that argparse takes that word as the value even when it begins with ``-``; up to the
    first ``--`` that is no value."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if word == "--":
            return [*out, word, *argv[i:]]
        names = command.value_options.get(word)
        if names is None:
            out.append(word)
            continue
        if i == len(argv):  # said here: moved before the arguments, it would take one of them
            command.error(f"argument {'/'.join(names)}: expected one argument")
        value = DASHES if argv[i] == "--" else argv[i]
        long = [name for name in names if name.startswith("--")]
        out.append(f"{long[0]}={value}" if long else word + value)
        i += 1
    return out


def _known_option(command: Parser, word: str) -> None:
    """Refuse, naming it, a word that looks like an option and is none of ``command``'s (which
    argparse would rather report as a missing argument)."""
    name = word.split("=", 1)[0] if word.startswith("--") else word[:2]
    if name not in command.option_names:
        command.error(f"unrecognized arguments: {word}")


def parse_group(group: Parser, argv: Sequence[str]) -> argparse.Namespace:
    """The arguments of a group's command line (``args.command``: the subcommand, or None).
    A subcommand's options and arguments are read as :func:`parse` reads them (``add a --sums
    S b``), by its own parser: argparse cannot read them intermixed through the group. A ``--``
    before the subcommand's name is passed over, as click did."""
    commands = group.commands
    words = list(argv)
    for i, word in enumerate(words):
        if word == "--" and i + 1 < len(words) and words[i + 1] in commands:
            del words[i]
            break
        if word in commands or not word.startswith("-"):
            break
        if word not in ("-h", "--help"):
            group.error(f"unrecognized arguments: {word}")
    if words and words[0] in commands:
        args = parse(commands[words[0]], words[1:])
        args.command = words[0]
        return args
    return group.parse_args(words)


def group_usage(parent: Parser) -> int:
    """A group run without a subcommand: its help on standard error (as click printed it), and
    exit 2 (nothing was done)."""
    parent.print_help(sys.stderr)
    return 2


def fail(message: str, hint: str | None = None) -> SystemExit:
    """Print a one-line reason (and a hint) on stderr; the caller raises the result (exit 2)."""
    print(f"continuity: {message}", file=sys.stderr)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    return SystemExit(2)


def write_bytes(data: bytes, *, err: bool = False) -> None:
    """``data`` as it is on standard output (or error), after what was printed before."""
    stream = sys.stderr if err else sys.stdout
    stream.flush()
    stream.buffer.write(data)
    stream.buffer.flush()


# Paths are checked as they are given, and kept as given (a trailing slash and all).


def directory(value: str) -> str:
    """A directory option or argument: it need not exist, but must not be a file."""
    if os.path.isfile(value):
        raise argparse.ArgumentTypeError(f"directory {value!r} is a file")
    return value


def existing_directory(value: str) -> str:
    """A directory that must exist."""
    if not os.path.isdir(value):
        reason = "is a file" if os.path.exists(value) else "does not exist"
        raise argparse.ArgumentTypeError(f"directory {value!r} {reason}")
    return value


def file(value: str) -> str:
    """A file option or argument: it need not exist, but must not be a directory."""
    if os.path.isdir(value):
        raise argparse.ArgumentTypeError(f"file {value!r} is a directory")
    return value


def directory_path(value: str) -> Path:
    return Path(directory(value))


def file_path(value: str) -> Path:
    return Path(file(value))


#: compiled (by ``re``, once) when a command first reads a number: the commit hook reads none
_DECIMAL = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


def positive_number(value: str) -> int | float:
    """A finite decimal number above 0 (``12000``, ``12000.5``, ``1.2e4``), as JavaScript's
    ``Number`` reads it; a whole number is an int (``12000.0`` is ``12000``, as JavaScript
    writes it)."""
    text = value.strip()
    number = float(text) if re.fullmatch(_DECIMAL, text) else math.nan
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"{value!r} is not a finite decimal number")
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not above 0")
    return int(number) if number.is_integer() else number


def at_least(minimum: int) -> Callable[[str], int]:
    """An integer option of ``minimum`` or more."""

    def convert(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"{number} is less than {minimum}")
        return number

    return convert
