"""The DeltaLayer timestamp grammar, against Python 3.11's fromisoformat as the oracle."""

from __future__ import annotations

import re
import sys
from datetime import date, datetime

import pytest
from hypothesis import given
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
    """What DeltaLayer on Python 3.11 does with ``raw``: the stored form or the error text."""
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


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the oracle is Python 3.11's parser")
@given(grammar())
def test_agrees_with_python_311(raw: str) -> None:
    assert ours(raw) == oracle(raw)


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
