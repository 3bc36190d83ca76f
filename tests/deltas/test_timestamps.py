"""The DeltaLayer timestamp grammar, against Python 3.11's fromisoformat as the oracle."""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable
from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from continuity_checks.checks.deltas import timestamps as ts

ACCEPTED = {
    "2026-09-21T16:20:00+08:00": "2026-09-21T16:20:00+08:00",
    "2026-09-21T16:00:00Z": "2026-09-21T16:00:00+00:00",
    "2026-09-21T01:00:00.123456-07:00": "2026-09-21T01:00:00.123456-07:00",
    "2026-09-21T18:37:03.3760821+08:00": "2026-09-21T18:37:03.376082+08:00",
    "2026-09-14T08:56:25.545Z": "2026-09-14T08:56:25.545000+00:00",
    "2026-09-21 16:00+0800": "2026-09-21T16:00:00+08:00",
    "2026-09-21T16+08": "2026-09-21T16:00:00+08:00",
    "20260921T160000+0800": "2026-09-21T16:00:00+08:00",
    "  2026-09-21T16:00:00+08:00 ": "2026-09-21T16:00:00+08:00",
    "2026-09-21": "2026-09-21",
    "2026-09-21T00:01:00 +08:00": "2026-09-21T00:01:00+08:00",
    "2026-09-21T00:00:00+00:60": "2026-09-21T00:00:00+01:00",
}
REJECTED = {
    "": ts.EMPTY,
    "   ": ts.EMPTY,
    "2026-09-21T16:00:00": ts.NAIVE,
    "20260921": ts.NAIVE,
    "2026-02-30": ts.INVALID,
    "2026-13-01": ts.INVALID,
    "2026-09": ts.INVALID,
    "not a time": ts.INVALID,
    "2026-09-21T24:00:00+08:00": ts.INVALID,
    "2026-09-21T16:00:00+24:00": ts.INVALID,
    # accepted by 3.11's fromisoformat, rejected here on purpose (docs/decisions.md)
    "2026-W38-1T10:00+00:00": ts.INVALID,
    "2026-09-21x16:00:00+08:00": ts.INVALID,
}


@pytest.mark.parametrize(("raw", "normalised"), ACCEPTED.items())
def test_accepted(raw: str, normalised: str) -> None:
    assert ts.parse(raw).isoformat() == normalised
    assert re.match(ts.PATTERN, raw)


@pytest.mark.parametrize(("raw", "message"), REJECTED.items())
def test_rejected(raw: str, message: str) -> None:
    with pytest.raises(ts.TimestampError, match=re.escape(message)):
        ts.parse(raw)


def test_non_strings_are_empty_times() -> None:
    for raw in (None, 5, [], {}):
        with pytest.raises(ts.TimestampError, match=ts.EMPTY):
            ts.parse(raw)


def test_slugs_from_the_spec() -> None:
    assert ts.parse("2026-09-21T16:20:00+08:00").slug() == "2026-09-21T16-20-00p08-00"
    assert ts.parse("2026-09-21T16:00:00Z").slug() == "2026-09-21T16-00-00p00-00"
    assert ts.parse("2026-09-21T01:00:00.123456-07:00").slug() == "2026-09-21T01-00-00.123456-07-00"
    assert ts.parse("2026-09-21").slug() == "2026-09-21"


def test_date_only_sorts_below_every_datetime() -> None:
    assert ts.parse("2030-01-01").sort_key() < ts.parse("2000-01-01T00:00:00Z").sort_key()


digits = st.integers


@st.composite
def grammar(draw: st.DrawFn) -> str:
    """Strings in the shapes the grammar accepts, including impossible field values."""
    y, mo, d = draw(digits(1, 9999)), draw(digits(0, 13)), draw(digits(0, 32))
    basic = draw(st.booleans())
    day = f"{y:04}{mo:02}{d:02}" if basic else f"{y:04}-{mo:02}-{d:02}"
    if draw(st.booleans()) and not basic:
        return day
    sep = draw(st.sampled_from(["T", "t", " "]))
    h, mi, s = draw(digits(0, 25)), draw(digits(0, 61)), draw(digits(0, 61))
    colon = ":" if draw(st.booleans()) else ""
    time = f"{h:02}"
    fields = draw(digits(0, 3))
    if fields >= 1:
        time += f"{colon}{mi:02}"
    if fields >= 2:
        time += f"{colon}{s:02}"
    if fields >= 3:
        time += draw(st.sampled_from(".,")) + draw(st.from_regex(r"[0-9]{1,9}", fullmatch=True))
    offset = draw(
        st.one_of(
            st.just(""),
            st.just("Z"),
            st.builds(
                lambda sign, oh, om, c: f"{sign}{oh:02}{c}{om:02}",
                st.sampled_from("+-"),
                digits(0, 25),
                digits(0, 61),
                st.sampled_from(["", ":"]),
            ),
            st.builds(lambda sign, oh: f"{sign}{oh:02}", st.sampled_from("+-"), digits(0, 25)),
        )
    )
    return day + sep + time + offset


def oracle(raw: str) -> str:
    """What DeltaLayer does with ``raw`` on this interpreter: the stored form or the error text."""
    text = raw.strip()
    if not text:
        return ts.EMPTY
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        if len(text) == 10 and text[4] == "-" and text[7] == "-":
            return date.fromisoformat(text).isoformat()
        value = datetime.fromisoformat(text)
    except ValueError:
        return ts.INVALID
    if value.tzinfo is None:
        return ts.NAIVE
    return value.isoformat()


def ours(raw: str) -> str:
    try:
        return ts.parse(raw).isoformat()
    except ts.TimestampError as exc:
        return str(exc)


# The documented rejections (docs/decisions.md), stated independently of the parser: a value
# outside these shapes may be accepted by 3.11 and is rejected by us, nothing else may differ.
_HH, _MM, _SS = "[0-9]{2}", "[0-9]{2}", "[0-9]{2}"
_CLEAN_TIME = re.compile(
    rf"(?:{_HH}(?::{_MM}(?::{_SS})?)?|{_HH}(?:{_MM}(?:{_SS})?)?) ?"  # whole fields, one space
    rf"|(?:{_HH}:{_MM}:{_SS}|{_HH}{_MM}{_SS})[.,][0-9]+",  # a fraction of a second, with digits
    re.ASCII,
)
_CLEAN_OFFSET = re.compile(r"[+-][0-9]{2}(?:(:?)[0-9]{2}(?:\1[0-9]{2}(?:[.,][0-9]+)?)?)?", re.ASCII)


def documented_rejection(raw: str) -> str | None:
    """Which documented rejection ``raw`` falls under, or None."""
    text = raw.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    if re.match(r"[0-9]{4}-?W", text, re.ASCII):
        return "ISO week date"
    date_part = re.match(r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{8}", text, re.ASCII)
    if date_part is None or len(text) <= date_part.end():
        return None
    if text[date_part.end()] not in "Tt ":
        return "separator other than T, t or a space"
    rest = text[date_part.end() + 1 :]
    cut = min((rest.find(c) for c in "+-Z" if c in rest), default=len(rest))
    time, offset = rest[:cut], rest[cut:]
    if not _CLEAN_TIME.fullmatch(time) or (offset and not _CLEAN_OFFSET.fullmatch(offset)):
        return "characters 3.11 drops or misreads (bare point, fraction of an hour, skipped)"
    return None


def agrees(raw: str) -> bool:
    """Ours equals 3.11's answer, or the value is a documented rejection and we reject it."""
    mine, theirs = ours(raw), oracle(raw)
    if mine == theirs:
        return True
    return mine == ts.INVALID and documented_rejection(raw) is not None


ODD = ["", " ", "  ", "x", "0", "5", ":", "::", ".", ",", "\x00", "\u3000", "é", "Z", "W"]


@st.composite
def quirks(draw: st.DrawFn) -> str:
    """The grammar's shapes, then a few characters inserted, replaced or deleted anywhere."""
    text = draw(grammar())
    for _ in range(draw(digits(0, 3))):
        at = draw(digits(0, len(text)))
        piece = draw(st.sampled_from(ODD + list("0123456789:.,+-Tt ")))
        how = draw(st.sampled_from(["insert", "replace", "delete"]))
        if how == "insert":
            text = text[:at] + piece + text[at:]
        elif how == "replace":
            text = text[:at] + piece + text[at + 1 :]
        else:
            text = text[:at] + text[at + 1 :]
    return text


NEEDS_311 = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="the oracle is the grammar of Python 3.11's fromisoformat"
)


@NEEDS_311
@settings(max_examples=400)
@given(grammar())
def test_agrees_with_python_311(raw: str) -> None:
    assert agrees(raw), (raw, ours(raw), oracle(raw))


@NEEDS_311
@settings(max_examples=400)
@given(quirks())
def test_agrees_with_python_311_on_near_misses(raw: str) -> None:
    assert agrees(raw), (raw, ours(raw), oracle(raw))


@NEEDS_311
@given(st.text(alphabet="0123456789-:.,+TtZ W\x00\u3000x", max_size=40))
def test_agrees_with_python_311_on_any_text(raw: str) -> None:
    assert agrees(raw), (raw, ours(raw), oracle(raw))


@NEEDS_311
@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("2026-09-21T00:01:00 +08:00", "2026-09-21T00:01:00+08:00"),
        ("2026-09-21 00:01:00 +0800", "2026-09-21T00:01:00+08:00"),  # git log --date=iso
        ("2026-09-21T16 Z", "2026-09-21T16:00:00+00:00"),
        ("2026-09-21T00:00:00+00:60", "2026-09-21T00:00:00+01:00"),
        ("2026-09-21T00:00:00-00:99", "2026-09-21T00:00:00-01:39"),
        ("2026-09-21T00:00:00+08:00:60", "2026-09-21T00:00:00+08:01"),
        ("2026-09-21T00:00:00-00:00", "2026-09-21T00:00:00+00:00"),
    ],
)
def test_values_311_accepts_are_accepted_as_311_normalises_them(raw: str, normalised: str) -> None:
    assert oracle(raw) == normalised
    assert ours(raw) == normalised


@NEEDS_311
@pytest.mark.parametrize(
    "raw",
    [
        "2026-W38-1T10:00+00:00",  # ISO week date
        "2026-09-21x16:00:00+08:00",  # separator
        "2026-09-21T16:00:00.+08:00",  # bare point
        "2026-09-21T12.5+08:00",  # 3.11: half a second; ISO 8601: half an hour
        "2026-09-21T12:30:45:5+08:00",  # a colon read as a decimal point
        "20260921T130+08",  # 3.11 drops the 0: 13:00
        "2026-09-21T12:30:45x+08:00",  # 3.11 drops the x
        "2026-09-21T12:30:45.123456xyz+08:00",  # 3.11 drops xyz
        "2026-09-21T00:00:00\x00+08:00",  # 3.11 drops the NUL
    ],
)
def test_documented_rejections_are_accepted_by_311_and_rejected_here(raw: str) -> None:
    assert oracle(raw) not in (ts.EMPTY, ts.INVALID, ts.NAIVE)
    assert documented_rejection(raw) is not None
    assert ours(raw) == ts.INVALID


@NEEDS_311
def test_a_seeded_sweep_finds_no_undocumented_disagreement() -> None:
    """60,000 seeded mutations of accepted times: wherever this parser and Python 3.11's
    disagree, the disagreement is a documented one."""
    rng = random.Random(6)
    alphabet = "0123456789" * 3 + "-:.,+TtZ W\x00x"
    seeds = [*ACCEPTED, "2026-09-21T16:00:00.1234567+08:00:30", "20260921T160000,5-0830"]
    disagreements, documented, total = [], 0, 0
    for _ in range(60_000):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            piece = rng.choice(alphabet)
            how = rng.randrange(3)
            text = text[:at] + (piece if how < 2 else "") + text[at + (how > 0) :]
        total += 1
        if ours(text) != oracle(text):
            if agrees(text):
                documented += 1
            else:
                disagreements.append(text)
    assert disagreements == [], disagreements[:20]
    assert total == 60_000 and documented < total // 10


@given(grammar())
def test_schema_pattern_admits_every_accepted_value(raw: str) -> None:
    if ours(raw) not in (ts.EMPTY, ts.INVALID, ts.NAIVE):
        assert re.match(ts.PATTERN, raw)


@given(st.text(max_size=40))
def test_any_text_gives_a_value_or_an_upstream_message(raw: str) -> None:
    result = ours(raw)
    if result in (ts.EMPTY, ts.INVALID, ts.NAIVE):
        return
    assert re.match(ts.PATTERN, raw)


@given(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.sampled_from(["", ".000", ".123", ".000000", ".000001", ".500000"]),
    st.sampled_from(["+00:00", "-00:00", "+08:00", "-05:00", "+23:59", "-23:59"]),
)
def test_a_canonical_value_keeps_its_text_exactly_when_it_is_the_normal_form(
    moment: datetime, fraction: str, offset: str
) -> None:
    raw = f"{moment.year:04}-{moment:%m-%dT%H:%M:%S}{fraction}{offset}"
    parsed = ts.parse(raw)
    assert parsed.isoformat() == parsed.value.isoformat()
    assert (parsed._iso == raw) == (parsed.value.isoformat() == raw)  # given, not formatted


_moments = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))
_forms = st.sampled_from(["", ".000000", ".123", ".123456"])
_offsets = st.sampled_from(["+00:00", "-00:00", "+08:00", "-05:00", "+05:30", "Z"])


@given(_moments, _forms, _offsets, _moments, _forms, _offsets, st.booleans())
def test_earlier_by_the_text_of_two_normal_forms_is_earlier_in_time(
    m1: datetime, f1: str, o1: str, m2: datetime, f2: str, o2: str, formatted: bool
) -> None:
    first = ts.parse(f"{m1.year:04}-{m1:%m-%dT%H:%M:%S}{f1}{o1}")
    second = ts.parse(f"{m2.year:04}-{m2:%m-%dT%H:%M:%S}{f2}{o2}")
    if formatted:  # each with its text, as after a message asked for it
        first.isoformat(), second.isoformat()
    assert ts.earlier(first, second) == (first.value < second.value)
    assert ts.earlier(second, first) == (second.value < first.value)
    day = ts.parse(f"{m2.year:04}-{m2:%m-%d}")
    day.isoformat()
    assert ts.earlier(first, day) == (first.value.date() < day.value)


def _outcome(parse: Callable[[str], ts.Timestamp], raw: str) -> tuple[str, str]:
    try:
        return ("value", parse(raw).value.isoformat())  # the offset too, not the instant alone
    except ts.TimestampError as exc:
        return ("refused", str(exc))


_two = st.integers(min_value=0, max_value=99).map("{:02}".format)


@given(
    st.integers(min_value=0, max_value=9999),
    st.sampled_from([0, 1, 2, 9, 12, 13, 19, 99]),
    st.sampled_from([0, 1, 9, 28, 29, 30, 31, 32, 99]),
    st.sampled_from([0, 1, 9, 23, 24, 25, 99]),
    st.sampled_from([0, 1, 30, 59, 60, 61, 99]),
    st.sampled_from([0, 1, 30, 59, 60, 61, 99]),
    st.sampled_from(["", ".000", ".123", ".000000", ".000001", ".999999"]),
    st.sampled_from("+-"),
    _two,
    _two,
)
def test_the_canonical_path_agrees_with_the_general_one(
    year: int,
    month: int,
    day: int,
    hour: int,
    minute: int,
    second: int,
    fraction: str,
    sign: str,
    offset_hours: str,
    offset_minutes: str,
) -> None:
    """Every value of the canonical shape, calendar and offset valid or not (hours of 24 and
    more, minutes of 60 and more), is read by the fast path as the general path reads it, and
    a text kept as its normal form is the one isoformat writes."""
    raw = (
        f"{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}"
        f"{sign}{offset_hours}:{offset_minutes}"
    )
    assert ts._canonical(raw)
    assert _outcome(ts.parse, raw) == _outcome(ts._parse_fields, raw)
    if _outcome(ts.parse, raw)[0] == "value":
        parsed = ts.parse(raw)
        assert parsed._iso in (None, parsed.value.isoformat())


_SHAPE_ALPHABET = "0123456789-:.+T Z\u0660\ud800"


@st.composite
def _near_canonical(draw: st.DrawFn) -> str:
    """A value of the canonical form with one character replaced, inserted or deleted."""
    fraction = draw(st.sampled_from(["", ".123", ".123456"]))
    text = f"2026-09-21T16:20:00{fraction}+08:00"
    at = draw(st.integers(min_value=0, max_value=len(text) - 1))
    piece = draw(st.sampled_from(_SHAPE_ALPHABET))
    how = draw(st.sampled_from(["replace", "insert", "delete"]))
    if how == "replace":
        return text[:at] + piece + text[at + 1 :]
    return text[:at] + (piece if how == "insert" else "") + text[at + (how == "delete") :]


@given(st.one_of(_near_canonical(), st.text(alphabet=_SHAPE_ALPHABET, max_size=34)))
def test_the_canonical_shape_is_the_canonical_expression(raw: str) -> None:
    """The shape test accepts the text of the form every writer produces and nothing else:
    ASCII digits only, a fraction of three or six digits, a numeric offset."""
    expression = (
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{3}|\.[0-9]{6})?"
        r"[+-][0-9]{2}:[0-9]{2}"
    )
    assert ts._canonical(raw) == bool(re.fullmatch(expression, raw, re.ASCII))
