"""What a person at a terminal sees besides the report: colour, and progress on long runs.

The engine knows none of this: it calls a progress callback (``engine.Progress``); this module
decides whether anything is shown, and draws it on standard error.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Mapping
from typing import TextIO

#: Seconds between two drawings of the progress line.
REDRAW_EVERY = 0.1
#: Seconds of work before a rate (and the time left) is shown: the first units include the
#: start (git starting, schemas compiling) and would promise hours.
RATE_AFTER = 0.5
_ERASE = "\r\033[K"


def _set(environ: Mapping[str, str], name: str) -> bool:
    """Present and not empty: how NO_COLOR and FORCE_COLOR are meant to be read."""
    return bool(environ.get(name, ""))


def use_color(
    stream: TextIO, no_color: bool = False, environ: Mapping[str, str] | None = None
) -> bool:
    """Colour on ``stream``: never with ``--no-color``; else always when FORCE_COLOR is set
    (it wins over NO_COLOR, as force-color.org has it); else never when NO_COLOR is set
    (no-color.org); else only on a terminal that is not ``TERM=dumb``."""
    env = os.environ if environ is None else environ
    if no_color:
        return False
    if _set(env, "FORCE_COLOR"):
        return True
    if _set(env, "NO_COLOR") or env.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def show_progress(
    stream: TextIO, fmt: str, quiet: bool, environ: Mapping[str, str] | None = None
) -> bool:
    """A progress line only for a person: the text format, not ``--quiet``, standard error a
    terminal, and neither CI (``CI``) nor pre-commit (which sets ``PRE_COMMIT``, and may run
    the hook on a pseudo-terminal to keep colours) around."""
    env = os.environ if environ is None else environ
    if fmt != "text" or quiet or _set(env, "CI") or _set(env, "PRE_COMMIT"):
        return False
    if env.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


class ProgressLine:
    """``verify: 1,234/10,000 commits, 5,210/s, 2s left`` on one line of ``stream``, redrawn
    at most every REDRAW_EVERY seconds, erased by :meth:`close` before the report is printed."""

    def __init__(self, stream: TextIO, label: str, unit: str) -> None:
        self.stream = stream
        self.label = label
        self.unit = unit
        self.total: int | None = None
        self.done = 0
        self.started = time.monotonic()
        self._drawn_at: float | None = None
        self._visible = False

    def __call__(self, done: int, total: int | None) -> None:
        if total is not None:
            self.total = total
        self.done = done
        now = time.monotonic()
        if self._drawn_at is None:
            self.started = now  # the rate counts from the first unit, not from the start-up
        if self._drawn_at is not None and now - self._drawn_at < REDRAW_EVERY:
            return
        self._drawn_at = now
        self._draw(now)

    def text(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        unit = self.unit + ("" if (self.total or self.done) == 1 else "s")
        if self.total is None:
            text = f"{self.label}: {self.done:,} {unit}"
        else:
            text = f"{self.label}: {self.done:,}/{self.total:,} {unit}"
        if self.done and elapsed >= RATE_AFTER:
            text += f", {rate:,.0f}/s"
            if self.total is not None and self.total > self.done and rate > 0:
                text += f", {_duration((self.total - self.done) / rate)} left"
        return text

    def _width(self) -> int | None:
        """Columns of the terminal: a longer line would wrap, and the erase clears only its
        last row."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
            return None
        return columns or None  # 0: a terminal that does not say

    def _draw(self, now: float) -> None:
        text = self.text(now)
        width = self._width()
        if width is not None and len(text) >= width:
            text = text[: max(width - 1, 0)]
        try:
            self.stream.write(_ERASE + text)
            self.stream.flush()
        except (OSError, ValueError):  # a terminal that went away: the report still matters
            return
        self._visible = True

    def close(self) -> None:
        """Erase the line, so that the report starts on a clean line."""
        if not self._visible:
            return
        self._visible = False
        try:
            self.stream.write(_ERASE)
            self.stream.flush()
        except (OSError, ValueError):
            pass


def _duration(seconds: float) -> str:
    whole = int(seconds + 0.5)
    if whole < 60:
        return f"{whole}s"
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
