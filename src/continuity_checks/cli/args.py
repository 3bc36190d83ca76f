"""What every command's argument parser shares: the parser itself, the checks of values that
argparse does not make (a directory that is a file, a number below its range), the exit-2
refusal, and writing bytes to a text stream. Standard library only: the commit hook imports
it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    """An argument parser for ``continuity <prog>``: its description as written (paragraphs
    kept), no abbreviated option names (``--conv`` is not ``--conversation``)."""
    return argparse.ArgumentParser(
        prog=f"continuity {prog}",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )


def add_subcommands(
    parent: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """The subcommands of a command group (``baseline``, ``capture``, ...); which one ran is
    ``args.command`` (None: none was given, see :func:`group_usage`)."""
    return parent.add_subparsers(dest="command", metavar="COMMAND", title="commands")


def add_subcommand(
    group: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    description: str,
    aliases: tuple[str, ...] = (),
) -> argparse.ArgumentParser:
    """One subcommand of a group: its first line is its line in the group's help."""
    found: argparse.ArgumentParser = group.add_parser(
        name,
        help=description.split("\n\n", 1)[0].replace("\n", " "),
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
        aliases=aliases,
    )
    return found


def parse(command: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """A command's options and arguments, in any order (``check a --format json b``, as click
    read them). After ``--`` everything is an argument (a path that begins with ``-``); the
    arguments must then all come after it: argparse honours ``--`` only when it does not read
    them intermixed."""
    if "--" in argv:
        return command.parse_args(argv)
    return command.parse_intermixed_args(argv)


def parse_group(
    group: argparse.ArgumentParser,
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    argv: Sequence[str],
) -> argparse.Namespace:
    """The arguments of a group's command line (``args.command``: the subcommand, or None).
    A subcommand's options and arguments are read as :func:`parse` reads them (``add a --sums
    S b``), by its own parser: argparse cannot read them intermixed through the group."""
    if argv and argv[0] in commands.choices:
        args = parse(commands.choices[argv[0]], argv[1:])
        args.command = argv[0]
        return args
    return group.parse_args(argv)


def group_usage(parent: argparse.ArgumentParser) -> int:
    """A group run without a subcommand: its help, and exit 2 (nothing was done)."""
    parent.print_help()
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
