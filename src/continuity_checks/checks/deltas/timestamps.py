"""The DeltaLayer timestamp grammar (specs/deltalayer.md §2.3), independent of the Python version.

Upstream parses with ``datetime.fromisoformat`` after trimming and turning a final ``Z`` into
``+00:00``; what that accepts changed between Python 3.10 and 3.11. This module accepts what 3.11
accepts wherever 3.11 reads every character the way ISO 8601 means it: extended or basic date
and time, ``T``, ``t`` or a space between them, ``HH``/``HH:MM``/``HH:MM:SS``, any number of
fraction digits after ``.`` or ``,`` cut to six, one space before the offset after whole fields
(git's ``2026-09-21 00:01:00 +0800``), offsets ``Z``, ``±HH``, ``±HHMM``, ``±HH:MM`` and with
seconds, normalised as 3.11 does (``+00:60`` is ``+01:00``). So a file means the same thing on
every interpreter. Where 3.11 drops or misreads characters (ISO week dates, any character between
date and time, a decimal point without digits, a fraction of an hour read as one of a second, a
character it skips before the offset) the value is rejected: see docs/decisions.md.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

EMPTY = "time must be a non-empty ISO 8601 date or timestamp"
INVALID = "time must be a valid ISO 8601 date or timestamp"
NAIVE = "timestamp must include a timezone offset"

# The shape of an accepted value, as an ECMA-262 and Python regular expression. The JSON Schemas
# carry it in $defs/timestamp; tests keep the two in agreement with parse().
PATTERN = (
    r"^\s*(?:[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"|(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{8})[Tt ]"
    r"(?:(?:[0-9]{2}(?::[0-9]{2}(?::[0-9]{2})?)?|[0-9]{2}(?:[0-9]{2}(?:[0-9]{2})?)?) ?"
    r"|(?:[0-9]{2}:[0-9]{2}:[0-9]{2}|[0-9]{6})[.,][0-9]+)"
    r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2}(?::?[0-9]{2}(?:[.,][0-9]+)?)?)?))\s*$"
)

# the slow path's expressions, compiled (by ``re``, once) when a value is not canonical
_DATE_ONLY = r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
_DATETIME = r"""
    (?P<y>[0-9]{4}) (?P<dsep>-?) (?P<mo>[0-9]{2}) (?P=dsep) (?P<d>[0-9]{2})
    [Tt ]
    (?P<h>[0-9]{2})
    (?: (?P<tsep>:?) (?P<mi>[0-9]{2})
        (?: (?P=tsep) (?P<s>[0-9]{2}) (?: [.,] (?P<f>[0-9]+) )? )? )?
    (?(f) | (?P<gap>[ ])? )  # one space before the offset, after whole fields only
    (?P<tz> [+-][0-9]{2} (?: (?P<zsep>:?)[0-9]{2} (?: (?P=zsep)[0-9]{2} (?:[.,][0-9]+)? )? )? )?
    """
_OFFSET = r"([+-])([0-9]{2}):?(?:([0-9]{2}):?(?:([0-9]{2})(?:[.,]([0-9]+))?)?)?"
# The form every writer produces, ``YYYY-MM-DDTHH:MM:SS[.fff|.ffffff]±HH:MM``, with each digit
# written as 0: the only shapes the fast path hands to fromisoformat (a byte translation and a
# set look-up cost half of a regular expression's match)
_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_CANONICAL_SHAPES = frozenset(
    f"0000-00-00T00:00:00{fraction}{sign}00:00".encode("ascii")
    for fraction in ("", ".000", ".000000")
    for sign in "+-"
)


class TimestampError(ValueError):
    """A value that is not a DeltaLayer timestamp; ``str()`` is upstream's error text."""


class Timestamp:
    """A parsed value: a calendar date (precision kept) or an offset-aware datetime.

    Compares and hashes by its value. ``iso`` may be given when the caller already knows the
    normalised text (the common case of a value stored in normal form), to spare formatting it.
    """

    __slots__ = ("_iso", "value")

    def __init__(self, value: date | datetime, iso: str | None = None) -> None:
        self.value = value
        self._iso = iso

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timestamp) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Timestamp({self.isoformat()!r})"

    @property
    def date_only(self) -> bool:
        return not isinstance(self.value, datetime)

    def isoformat(self) -> str:
        """The normalised form upstream stores and uses in cursors."""
        if self._iso is None:
            self._iso = self.value.isoformat()
        return self._iso

    def sort_key(self) -> tuple[int, float]:
        """Upstream's ordering key: every datetime sorts after every date-only value."""
        if isinstance(self.value, datetime):
            return (2, self.value.timestamp())
        return (1, float(self.value.toordinal()))

    def slug(self) -> str:
        """The file-name form: ``:`` becomes ``-`` and ``+`` becomes ``p``."""
        iso = self._iso if self._iso is not None else self.isoformat()
        return iso.replace(":", "-").replace("+", "p")


def earlier(a: Timestamp, b: Timestamp) -> bool:
    """Whether ``a`` is strictly before ``b`` in time (DL109); a date-only side compares by
    calendar date. Not the ordering key, by which every datetime follows every date."""
    first, second = a._iso, b._iso
    # two normal forms to the second (25 characters) or the microsecond (32), with one offset
    # (their last six): the order of their text is their order in time
    if (
        first is not None
        and second is not None
        and len(first) == len(second)
        and len(first) in _ORDERED_LENGTHS
        and first[-6:] == second[-6:]
    ):
        return first < second
    if isinstance(a.value, datetime) and isinstance(b.value, datetime):
        return bool(a.value < b.value)
    return _day(a) < _day(b)


_ORDERED_LENGTHS = (25, 32)


def _day(t: Timestamp) -> date:
    return t.value.date() if isinstance(t.value, datetime) else t.value


def _fraction(digits: str | None) -> int:
    return int((digits or "0")[:6].ljust(6, "0"))


def _offset(text: str) -> timezone:
    match = re.fullmatch(_OFFSET, text, re.ASCII)
    if match is None:
        raise TimestampError(INVALID)
    sign, hh, mm, ss, ff = match.groups()
    delta = timedelta(
        hours=int(hh), minutes=int(mm or 0), seconds=int(ss or 0), microseconds=_fraction(ff)
    )
    try:
        return timezone(-delta if sign == "-" else delta)
    except ValueError:
        raise TimestampError(INVALID) from None


def parse(raw: object) -> Timestamp:
    """Parse a stored or given value; raise TimestampError with upstream's message."""
    if not (isinstance(raw, str) and _canonical(raw)):
        return _parse_other(raw)
    # the form every writer produces; every supported Python parses it the same, in C (an
    # offset of 24 hours or more is refused there, as by the general path)
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise TimestampError(INVALID) from None
    # the normal form isoformat writes: to the second, or to the microsecond when that is not
    # zero, with any offset but -00:00 and with its minutes below 60 (3.11 carries 60 into the
    # hours)
    size = len(raw)
    normal = (
        (size == 25 or (size == 32 and raw[20:26] != "000000"))
        and raw[-2] < "6"
        and raw[-6:] != "-00:00"
    )
    return Timestamp(value, raw if normal else None)


def _canonical(text: str) -> bool:
    """Whether ``text`` has the shape of the form every writer produces (``_CANONICAL_SHAPES``)."""
    try:
        return text.encode().translate(_AS_ZERO) in _CANONICAL_SHAPES
    except UnicodeEncodeError:  # a lone surrogate
        return False


def _parse_other(raw: object) -> Timestamp:
    """:func:`parse` of a value not in the canonical form (``_CANONICAL_SHAPES``) as it stands."""
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        raise TimestampError(EMPTY)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    # before the date-only test: a date alone never has this form
    if _canonical(text):
        return parse(text)
    if len(text) == 10 and text[4] == "-" and text[7] == "-":
        match = re.fullmatch(_DATE_ONLY, text, re.ASCII)
        if match is None:
            raise TimestampError(INVALID)
        try:
            return Timestamp(date(*map(int, match.groups())))
        except ValueError:
            raise TimestampError(INVALID) from None
    return _parse_fields(text)


def _parse_fields(text: str) -> Timestamp:
    """A trimmed value that is neither canonical nor a date alone, read field by field
    (``_DATETIME``): the general path, which the canonical one agrees with."""
    match = re.fullmatch(_DATETIME, text, re.VERBOSE | re.ASCII)
    if match is None:
        basic = re.fullmatch(r"([0-9]{4})([0-9]{2})([0-9]{2})", text, re.ASCII)
        if basic is not None:
            # a bare basic-format date parses upstream as a naive midnight
            try:
                date(*map(int, basic.groups()))
            except ValueError:
                raise TimestampError(INVALID) from None
            raise TimestampError(NAIVE)
        raise TimestampError(INVALID)
    g = match.groupdict()
    tz = _offset(g["tz"]) if g["tz"] else None
    try:
        value = datetime(
            int(g["y"]), int(g["mo"]), int(g["d"]),
            int(g["h"]), int(g["mi"] or 0), int(g["s"] or 0), _fraction(g["f"]),
            tzinfo=tz,
        )  # fmt: skip
    except ValueError:
        raise TimestampError(INVALID) from None
    if tz is None:
        raise TimestampError(NAIVE)
    return Timestamp(value)
