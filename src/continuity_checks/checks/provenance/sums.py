"""SHA256SUMS-style files: parsing every line form ``sha256sum -c`` reads, and writing lines.

Forms (one per line; a file may mix them):

- GNU text ``<hex>  <path>`` and binary ``<hex> *<path>``; the single-space form
  ``<hex> <path>`` of ``sha256 -r`` (BSD) is read as ``sha256sum -c`` reads it: only in a file
  whose earlier lines are not GNU's, and then the rest after the one blank is the path
  (:class:`Forms`); spaces and tabs before a line are skipped, and a tab separates like a space;
- GNU escaped lines: a leading ``\\`` says the path is escaped, ``\\\\`` for a backslash, ``\\n``
  for a newline and ``\\r`` for a carriage return (coreutils 9 also escapes CR); any other escape
  makes the line unusable, as it does for ``sha256sum -c``;
- BSD tag ``SHA256 (<path>) = <hex>`` (also ``SHA256(<path>)= <hex>``), escaped the same way.

Lines end in LF or CRLF (DSH writes CRLF); the CR is not part of the path. Lines starting with
``#`` are comments (``sha256sum -c`` skips them); empty lines are skipped, and a line of only
spaces or tabs is malformed, as ``sha256sum -c --strict`` finds it. Hex digits may be
upper case. Paths are UTF-8 and may hold spaces and any other character; they are returned as
written, and the caller decides what they are relative to.

This module only parses bytes: it reads no file.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from continuity_checks.core.hashing import parse_digest

_BSD_TAG = "SHA256"
_OTHER_TAG = re.compile(r"([A-Z][A-Z0-9-]{1,15}) ?\(")  # MD5 (x) = ..., SHA512 (x) = ...
_ESCAPES = {"\\": "\\", "n": "\n", "r": "\r"}


class Entry(NamedTuple):
    """One checksum line: ``line`` is 1-based, ``digest`` 64 lowercase hex digits."""

    line: int
    digest: str
    path: str
    binary: bool = False


class Malformed(NamedTuple):
    """A line that is not a checksum line, and what was expected of it."""

    line: int
    column: int
    message: str


class BadText(NamedTuple):
    """Bytes that are not UTF-8 text (``line`` 1-based), or a byte order mark (``bom``)."""

    line: int
    column: int
    bom: bool = False


class Parsed:
    __slots__ = ("bad_text", "crlf", "entries", "final_newline", "malformed", "single_space")

    def __init__(
        self,
        entries: list[Entry],
        malformed: list[Malformed],
        bad_text: list[BadText],
        crlf: bool,
        final_newline: bool,
        single_space: bool = False,
    ) -> None:
        self.entries = entries
        self.malformed = malformed
        self.bad_text = bad_text
        #: Whether the file's first line ending is CRLF (new lines are written the same way).
        self.crlf = crlf
        self.final_newline = final_newline
        #: Whether the file's lines are ``sha256 -r``'s ``<hex> <path>`` (new lines are written
        #: so).
        self.single_space = single_space


def parse(data: bytes) -> Parsed:
    """Every line of a sums file: its entries, the lines that are not entries, and the lines
    that are not UTF-8."""
    result = Parsed([], [], [], crlf=False, final_newline=data.endswith(b"\n"))
    lines = data.split(b"\n")
    if result.final_newline or not data:
        lines.pop()  # the empty rest after the last newline
    forms = Forms()
    for index, raw in enumerate(lines):
        number = index + 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
            if index == 0:
                result.crlf = True
        if index == 0 and raw.startswith(b"\xef\xbb\xbf"):
            result.bad_text.append(BadText(1, 1, bom=True))
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            column = len(raw[: exc.start].decode("utf-8", "replace")) + 1
            result.bad_text.append(BadText(number, column))
            continue
        if not text or text.startswith("#"):
            continue
        if not text.strip(_BLANKS):
            result.malformed.append(
                Malformed(
                    number,
                    1,
                    "expected a checksum line, found only spaces or tabs (sha256sum -c --strict "
                    "fails on it; an empty line is skipped)",
                )
            )
            continue
        found = parse_line(text, number, forms)
        if isinstance(found, Entry):
            result.entries.append(found)
        else:
            result.malformed.append(found)
    result.single_space = bool(forms.single_space)
    return result


class Forms:
    """What earlier lines of one file said about its form: ``sha256sum -c`` reads a file's
    single-space lines (``sha256 -r``: ``<hex> <path>``) only when no earlier line was GNU's
    ``<hex>  <path>``/``<hex> *<path>``, and after a single-space line it reads everything after
    the one blank as the path (``<hex>  a`` names `` a``): coreutils' ``bsd_reversed``."""

    def __init__(self) -> None:
        self.single_space: bool | None = None


_BLANKS = " \t"  # coreutils' ISWHITE: the blanks before the digest, after it, around BSD's =


def parse_line(text: str, number: int, forms: Forms | None = None) -> Entry | Malformed:
    """One line (without its line ending) as an :class:`Entry`, or why it is not one; ``forms``
    carries what the file's earlier lines decided (a fresh one for a line on its own)."""
    forms = forms if forms is not None else Forms()
    start = len(text) - len(text.lstrip(_BLANKS))  # sha256sum -c skips leading blanks
    escaped = text[start : start + 1] == "\\"
    body = text[start + 1 :] if escaped else text[start:]
    offset = start + (2 if escaped else 1)  # the column of body[0]
    after_tag = body[len(_BSD_TAG) :]
    if body.startswith(_BSD_TAG) and (after_tag.startswith(" (") or after_tag.startswith("(")):
        return _bsd(body, escaped, offset, number)
    other = _OTHER_TAG.match(body)
    if other:
        return Malformed(number, offset, f"expected a SHA256 line, found a {other[1]} line")
    hex_end = 0
    while hex_end < len(body) and body[hex_end] in "0123456789abcdefABCDEF":
        hex_end += 1
    if hex_end != 64:
        found = f"{hex_end} hex digits" if hex_end else f"{_first(body)}"
        return Malformed(
            number, offset, f"expected 64 hex digits (a SHA-256) at the start, found {found}"
        )
    rest = body[64:]
    if rest[:1] not in tuple(_BLANKS) or len(rest) < 2:
        if rest[:1] in tuple(_BLANKS):
            return Malformed(number, offset + len(body), "expected a path after the digest")
        return Malformed(
            number,
            offset + 64,
            f"expected two spaces or ' *' after the digest, found {_first(rest)}",
        )
    rest = rest[1:]
    binary = False
    if len(rest) == 1 or rest[0] not in " *":
        if forms.single_space is False:
            return Malformed(
                number,
                offset + 65,
                "expected two spaces or ' *' after the digest, as on the file's earlier lines "
                f"(sha256sum -c skips a single-space line after them), found {_first(rest)}",
            )
        forms.single_space = True
        path = rest
    elif forms.single_space:
        path = rest  # after sha256 -r lines, the blank or * is the path's first character
    else:
        forms.single_space = False
        binary = rest[0] == "*"
        path = rest[1:]
    if escaped:
        unescaped = unescape(path)
        if unescaped is None:
            return Malformed(number, offset + len(body) - len(path), _bad_escape(path))
        path = unescaped
    digest = parse_digest(body[:64])
    assert digest is not None
    return Entry(number, digest, path, binary)


def _bsd(body: str, escaped: bool, offset: int, number: int) -> Entry | Malformed:
    start = body.index("(") + 1
    close = body.rfind(")")
    if close < start:
        return Malformed(number, offset + len(body), "expected `) = <hex>` after the path")
    after = body[close + 1 :]
    stripped = after.lstrip(_BLANKS)
    if not stripped.startswith("="):
        return Malformed(
            number, offset + close + 1, f"expected ` = ` after the path, found {_first(after)}"
        )
    hex_text = stripped[1:].lstrip(_BLANKS)  # nothing may follow the digest, as for sha256sum -c
    digest = parse_digest(hex_text)
    if digest is None or hex_text.startswith("sha256:") or len(hex_text) != 64:
        column = offset + len(body) - len(hex_text)
        return Malformed(number, column, f"expected 64 hex digits, found {_first(hex_text)}")
    path = body[start:close]
    if not path:
        return Malformed(number, offset + start, "expected a path between the parentheses")
    if escaped:
        unescaped = unescape(path)
        if unescaped is None:
            return Malformed(number, offset + start, _bad_escape(path))
        path = unescaped
    return Entry(number, digest, path)


def _first(text: str) -> str:
    if not text:
        return "the end of the line"
    shown = text[:12] + ("…" if len(text) > 12 else "")
    return repr(shown)


def _bad_escape(path: str) -> str:
    return (
        "expected only \\\\, \\n and \\r escapes in the path of an escaped line "
        f"(one starting with \\), found {_first(path)}"
    )


def unescape(path: str) -> str | None:
    """The path of a GNU escaped line with its escapes undone; None for an unknown escape or a
    lone backslash at the end."""
    if "\\" not in path:
        return path
    out: list[str] = []
    index = 0
    while index < len(path):
        char = path[index]
        if char == "\\":
            replacement = _ESCAPES.get(path[index + 1 : index + 2])
            if replacement is None:
                return None
            out.append(replacement)
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


def format_line(digest: str, path: str, single_space: bool = False) -> str:
    """The GNU text-mode line for ``path`` (without a line ending), escaped as coreutils writes
    it when the path holds a backslash, a newline or a carriage return; ``single_space`` writes
    ``sha256 -r``'s ``<hex> <path>`` for a file of such lines, where sha256sum -c would read a
    two-space line's path with a leading blank."""
    separator = " " if single_space else "  "
    if any(c in path for c in "\\\n\r"):
        escaped = path.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        return f"\\{digest}{separator}{escaped}"
    return f"{digest}{separator}{path}"
