"""Options and plumbing shared by the commands that report findings."""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from continuity_checks import checks
from continuity_checks.core import config as config_module
from continuity_checks.core.config import Config, ConfigError
from continuity_checks.core.findings import Report
from continuity_checks.report import FORMATS, render

F = TypeVar("F", bound=Callable[..., Any])


def root_option(f: F) -> F:
    return click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path("."),
        show_default=True,
        help="Where to look: --all checks every file under it. Findings name files relative to "
        "the top of the repository that contains it (ROOT itself outside a repository), whose "
        "configuration applies.",
    )(f)


def config_option(f: F) -> F:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Configuration file (default: ROOT/.continuity.toml, "
        "else [tool.continuity] in ROOT/pyproject.toml).",
    )(f)


def format_option(f: F) -> F:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="Output format.",
    )(f)


class FamilyChoice(click.Choice[str]):
    """The registered families, asked when the option is used (not when this module loads)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return checks.names()

    @choices.setter
    def choices(self, value: object) -> None:
        pass  # the registry decides


def family_option(f: F) -> F:
    return click.option(
        "--family",
        "families",
        type=FamilyChoice(),
        multiple=True,
        help="Check only this family (repeatable). Default: all, or the configured ones.",
    )(f)


def fail(message: str, hint: str | None = None) -> click.exceptions.Exit:
    """Print a one-line reason (and a hint) on stderr; the caller raises the result (exit 2)."""
    click.echo(f"continuity: {message}", err=True)
    if hint:
        click.echo(f"hint: {hint}", err=True)
    return click.exceptions.Exit(2)


def load_config(root: Path, config_path: Path | None) -> Config:
    """The configuration of ``root`` (the top of the repository), or ``config_path``."""
    if not root.is_dir():
        raise fail(f"root {root} is not a directory")
    try:
        return config_module.load(root.resolve(), checks.known(), config_path)
    except ConfigError as exc:
        raise fail(
            f"configuration error in {exc}", "fix the key named above; see README, Configuration"
        ) from None


def use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def emit(report: Report, fmt: str) -> int:
    """Print the report; the exit code: 1 when any error-severity finding, else 0."""
    click.echo(encodable(render(report, fmt, color=fmt == "text" and use_color())), nl=False)
    return report.exit_code


def encodable(text: str) -> str:
    """``text`` with what the console cannot encode (a file name on a cp1252 or latin-1
    console) written as ``\\uXXXX`` escapes (UTF-16, as JSON writes them), so that JSON and
    SARIF stay valid and read back as the same characters; not a UnicodeEncodeError."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, _JSON_ESCAPE).decode(encoding)
    except LookupError:  # an encoding Python does not know: leave it to the stream
        pass
    return text


def _json_escapes(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    units = error.object[error.start : error.end].encode("utf-16-be", "surrogatepass")
    escaped = "".join(
        f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)
    )
    return escaped, error.end


_JSON_ESCAPE = "continuity-json-escape"
codecs.register_error(_JSON_ESCAPE, _json_escapes)


def only(families: tuple[str, ...]) -> tuple[str, ...] | None:
    return families or None
