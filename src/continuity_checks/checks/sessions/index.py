"""``sessions/index.json`` against the sessions it lists: each entry against the session's
meta.json and its latest user message, and what startup GC would have deleted."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from continuity_checks.checks.sessions import files, layout
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json
from continuity_checks.core.display import quote, show
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Unreadable

if TYPE_CHECKING:
    from continuity_checks.checks.sessions.registries import Registries

HOUR, DAY = 3600.0, 86400.0
GC_CAP = 1000
REL = "sessions/index.json"


def check_index(registries: Registries, located_dirs: dict[str, str | None]) -> None:
    """The index's findings, added to ``registries.findings``; ``located_dirs`` is each session
    id locations.json places, with its directory (None: not resolvable)."""
    doc = registries.index
    if doc is None:
        return
    entries = doc.value
    assert isinstance(entries, dict)
    now = time.time()
    archived_left = 0
    for sid, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        pointer = jp.append("", sid)
        directory = registries.dir_of(sid, located_dirs)
        if directory is None:
            continue  # its location is unresolvable: reported there
        meta = registries.meta(directory)
        if meta is None:
            # a directory that is a symlink off the checked tree: SS101 says so
            if not registries.linked_away(directory):
                registries.findings.append(
                    _at(
                        registries,
                        ss.INDEX_META,
                        pointer,
                        f"expected a session with meta.json at {quote(directory or '.')}, "
                        "found none",
                    )
                )
        else:
            _against_meta(registries, entry, meta, directory, pointer)
            _preview(registries, entry, meta, directory, pointer)
        if entry.get("archived") is True:
            archived_left += 1
        _collectable(registries, sid, entry, directory, pointer, now)
    if len(entries) > GC_CAP and archived_left:
        registries.findings.append(
            _at(
                registries,
                ss.GC_PENDING,
                "",
                f"expected at most {GC_CAP} entries while archived ones remain, found "
                f"{len(entries)}",
            )
        )


def _at(registries: Registries, rule: Rule, pointer: str, message: str) -> Finding:
    assert registries.index is not None
    return registries.at(registries.index, REL, rule, pointer, message)


def _against_meta(
    registries: Registries,
    entry: dict[str, object],
    meta: dict[str, object],
    directory: str,
    pointer: str,
) -> None:
    """The entry's fields as in the session's meta.json; its ``updated_at`` at most 5 s behind."""
    for key in ("title", "agent_id", "source", "created_at", "archived", "pinned"):
        if key not in entry and key not in meta:
            continue
        default = False if key in ("archived", "pinned") else None
        mine, theirs = entry.get(key, default), meta.get(key, default)
        if mine != theirs or type(mine) is not type(theirs):
            registries.findings.append(
                _at(
                    registries,
                    ss.INDEX_META,
                    f"{pointer}/{key}",
                    f"expected {show(theirs)} as in {directory}meta.json, found {show(mine)}",
                )
            )
    mine_u, theirs_u = entry.get("updated_at"), meta.get("updated_at")
    if (
        isinstance(mine_u, (int, float))
        and isinstance(theirs_u, (int, float))
        # an int 5, not 5.0: an integer beyond a double must not be made a float
        and not (theirs_u - 5 <= mine_u <= theirs_u)
    ):
        registries.findings.append(
            _at(
                registries,
                ss.INDEX_META,
                f"{pointer}/updated_at",
                f"expected {show(theirs_u)} as in {directory}meta.json (or up to 5 s "
                f"behind), found {show(mine_u)}",
            )
        )


def _preview(
    registries: Registries,
    entry: dict[str, object],
    meta: dict[str, object],
    directory: str,
    pointer: str,
) -> None:
    """[39] The entry's preview is the latest user message: flushed, the latest by seq;
    lagging (at most 5 s, else SS129 in :func:`_against_meta`), the one the entry saw when it
    was written (see :func:`_previews`)."""
    mine_u, theirs_u = entry.get("updated_at"), meta.get("updated_at")
    preview = entry.get("preview")
    lagging = (
        isinstance(mine_u, (int, float))
        and isinstance(theirs_u, (int, float))
        and theirs_u - 5 <= mine_u < theirs_u
    )
    if not (
        isinstance(preview, str)
        and files.preview_ok(preview)  # else reported on its own by check_file
        and (mine_u == theirs_u or lagging)
    ):
        return
    # equal values may both be missing: taken as flushed
    flushed_at = float(mine_u) if lagging and isinstance(mine_u, (int, float)) else None
    previews = _previews(registries, directory, flushed_at)
    if previews and preview not in previews:
        if lagging:
            latest = "the latest user message written by the index's updated_at"
            also = "".join(f" or, appended after it, {quote(p)}" for p in previews[1:])
        else:
            latest, also = "the latest user message", ""
        registries.findings.append(
            _at(
                registries,
                ss.PREVIEW,
                f"{pointer}/preview",
                f"expected {quote(previews[0])} (from {latest}){also}, found {quote(preview)}",
            )
        )


def _collectable(
    registries: Registries,
    sid: str,
    entry: dict[str, object],
    directory: str,
    pointer: str,
    now: float,
) -> None:
    """What startup GC deletes is gone: an archived session idle for over 90 days, an empty
    session older than an hour."""
    created, updated = entry.get("created_at"), entry.get("updated_at")
    archived = entry.get("archived") is True
    if archived and isinstance(updated, (int, float)) and now - updated > 90 * DAY:
        registries.findings.append(
            _at(
                registries,
                ss.GC_PENDING,
                pointer,
                "expected startup GC to have deleted an archived session idle for over 90 "
                "days, found it",
            )
        )
    if isinstance(created, (int, float)) and now - created > HOUR and directory:
        listing = registries.history(directory)
        # GC deletes a home-root entry whose directory is gone (no history/ either); a location
        # that leads nowhere is "unreachable", which GC skips, and so is one it cannot use
        # (SS131): the entry is project-bound all the same
        if (
            (registries.snapshot.exists(directory) or not registries.lists_location(sid))
            and (isinstance(listing, Unreadable) or not any(n.endswith(".json") for n in listing))
            and not registries.linked_away(directory)
        ):
            registries.findings.append(
                _at(
                    registries,
                    ss.GC_PENDING,
                    pointer,
                    "expected startup GC to have deleted an empty session older than 1 h, found it",
                )
            )


def _previews(registries: Registries, directory: str, flushed_at: float | None) -> list[str] | None:
    """[39] The previews the index entry may hold, the first the one expected; None when a
    user node on the way is broken (its own findings say why) or there is no user text.

    Each append of a user node with text sets the entry's preview and ``updated_at`` in
    memory; the file is flushed 5 s later. ``flushed_at`` None: the entry is flushed, its
    preview is the latest user text by seq. Otherwise the entry is as it was at
    ``flushed_at``: its preview is the text of the latest user node created by then, or of
    the one before (created by then but appended after); none created by then: ""."""
    listing = registries.history(directory)
    if isinstance(listing, Unreadable):
        return None
    users = []
    for name in listing:
        match = layout.NODE_NAME.match(name)
        if match is not None and match[2] == "u" and match[3] != "ROOT":
            users.append((int(match[1]), name))
    found: list[str] = []
    for _, name in sorted(users, reverse=True):
        data = registries.snapshot.read(f"{directory}history/{name}")
        accepted = None if isinstance(data, Unreadable) else strict_json.accepts(data)
        value = None if accepted is None else accepted[1]
        if not isinstance(value, dict) or not isinstance(value.get("output"), str):
            return None
        if not value["output"]:
            continue  # an append without text leaves the preview as it was
        created = value.get("created_at")
        if (
            not found
            and flushed_at is not None
            and isinstance(created, (int, float))
            and created > flushed_at
        ):
            continue  # written after the index was: not in its preview yet
        found.append(files.preview_of(value["output"]))
        if flushed_at is None or len(found) == 2:
            return found
    if flushed_at is None:
        return found or None
    return [*found, ""] if len(found) < 2 else found
