"""The pre-commit hook registry: the single source of ``.pre-commit-hooks.yaml``.

Each hook is plain data. :func:`render` turns the registry into the manifest text without a YAML
library, and a test keeps the committed file equal to it. Regenerate the file with::

    python -m continuity_checks.hooks --write .pre-commit-hooks.yaml
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from continuity_checks.checks import declarations
from continuity_checks.core.family import Declaration

# Stage names ``pre-push`` and ``manual`` are the pre-commit >= 3.2 spellings.
MINIMUM_PRE_COMMIT = "3.2.0"

MANIFEST = ".pre-commit-hooks.yaml"

HEADER = (
    "# Generated from src/continuity_checks/hooks/__init__.py; do not edit by hand.\n"
    "# Regenerate: python -m continuity_checks.hooks --write .pre-commit-hooks.yaml\n"
)


# the manifest keys a hook can have, in the order they are written
KEYS = (
    "id",
    "name",
    "description",
    "entry",
    "language",
    "files",
    "types",
    "stages",
    "always_run",
    "pass_filenames",
    "require_serial",
    "verbose",
    "minimum_pre_commit_version",
)


class Hook(NamedTuple):
    """One entry of the manifest. ``None`` and empty values are left out of the YAML, so
    pre-commit's defaults apply to them."""

    id: str
    name: str
    entry: str
    description: str
    language: str = "python"
    files: str | None = None
    types: tuple[str, ...] = ()
    stages: tuple[str, ...] = ()
    always_run: bool | None = None
    pass_filenames: bool | None = None
    require_serial: bool | None = None
    #: every hook shows its output on a passing run too: pre-commit hides a passing hook's
    #: output otherwise, and with it every warning and note (a user sets ``verbose: false``)
    verbose: bool | None = True
    minimum_pre_commit_version: str | None = MINIMUM_PRE_COMMIT

    @property
    def command(self) -> list[str]:
        """The ``entry`` split into words (pre-commit splits it with ``shlex``; ours are simple)."""
        return self.entry.split()

    def items(self) -> list[tuple[str, str | bool | tuple[str, ...]]]:
        """The keys that appear in the manifest, with their values, in manifest order."""
        out: list[tuple[str, str | bool | tuple[str, ...]]] = []
        for key in KEYS:
            value = getattr(self, key)
            if value is None or value == ():
                continue
            out.append((key, value))
        return out


#: The stage of the per-family hooks in the manifest: opt-in. Each checks a part of what
#: ``continuity-check`` checks, so a run of every hook the repository offers (``pre-commit
#: try-repo``, a config that lists them all) would print each finding twice or more. A user who
#: picks a family hook instead of ``continuity-check`` sets ``stages: [pre-commit]`` on it.
FAMILY_STAGES = ("manual",)


def family_hook(declaration: Declaration) -> Hook:
    """The hook that checks one family's files, from its declaration (opt-in: see
    :data:`FAMILY_STAGES`)."""
    return Hook(
        id=declaration.hook_id,
        name=f"continuity check ({declaration.name})",
        description=(
            f"Check {declaration.summary} (the {declaration.name} family only; instead of "
            "continuity-check, with stages: [pre-commit] in your config)."
        ),
        entry=f"continuity check --staged --family {declaration.name}",
        files=declaration.files,
        stages=FAMILY_STAGES,
        pass_filenames=True,
        # every family's hook runs when no staged file matches `files` too: pre-commit passes
        # no name for a deleted file (a commit that only deletes a delta or a published
        # capture), a family may claim files beyond `files` through its configuration (legacy
        # files, projections), and provenance judges an original changed without its listing.
        # `files` then only filters the names passed; --staged still sees the whole commit
        always_run=True,
        require_serial=True,
    )


CHECK = Hook(
    id="continuity-check",
    name="continuity check",
    description=(
        "Check the continuity files of every family in the staged files: strict JSON, schema, "
        "file names, cross-file consistency. Files no family claims are named in a note, not "
        "checked."
    ),
    # --staged: the history rules judge the commit being made, not only the pushed ones
    entry="continuity check --staged",
    # No `files` or `types` filter: every family's files matter, and `continuity check` itself
    # ignores the rest.
    pass_filenames=True,
    # a commit that only deletes a delta passes no file name, yet --staged must see it
    always_run=True,
    # one process sees all the files, so a cross-file finding is reported once
    require_serial=True,
)

VERIFY = Hook(
    id="continuity-verify",
    name="continuity verify (history)",
    description=(
        "Check every commit being pushed ($PRE_COMMIT_FROM_REF..$PRE_COMMIT_TO_REF): "
        "ownership, frozen and legacy history, monotonic times."
    ),
    # without --range, `continuity verify` takes the range pre-commit exports for a push:
    # PRE_COMMIT_FROM_REF..PRE_COMMIT_TO_REF (or the new commits of PRE_COMMIT_LOCAL_BRANCH)
    entry="continuity verify",
    stages=("pre-push", "manual"),
    always_run=True,
    pass_filenames=False,
    require_serial=True,
)

HOOKS: tuple[Hook, ...] = (CHECK, *map(family_hook, declarations()), VERIFY)


# --- a small YAML emitter for the values a hook has ---------------------------------------------

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _./()$-]*")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def _plain_ok(text: str, *, in_flow: bool = False) -> bool:
    """Whether ``text`` can be written as a plain scalar and read back as the same string."""
    return (
        _PLAIN.fullmatch(text) is not None
        and not text.endswith(" ")
        and text.lower() not in _RESERVED
        and not (in_flow and any(c in text for c in ",[]{}"))
    )


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar; every character Python does not call printable is escaped."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif char == "\n":
            out.append("\\n")
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def scalar(value: str | bool, *, in_flow: bool = False) -> str:
    """One YAML scalar: plain when unambiguous, else single-quoted (no escapes to get wrong),
    else double-quoted JSON (a subset of YAML) for text with line breaks or control characters."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if _plain_ok(value, in_flow=in_flow):
        return value
    if value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    return _double_quoted(value)


def render(hooks: Sequence[Hook] = HOOKS) -> str:
    """The text of ``.pre-commit-hooks.yaml`` for ``hooks``."""
    lines = [HEADER.rstrip("\n")]
    for hook in hooks:
        lines.append("")
        for index, (key, value) in enumerate(hook.items()):
            lead = "- " if index == 0 else "  "
            if isinstance(value, tuple):
                text = "[" + ", ".join(scalar(v, in_flow=True) for v in value) + "]"
            else:
                text = scalar(value)
            lines.append(f"{lead}{key}: {text}")
    return "\n".join(lines) + "\n"
