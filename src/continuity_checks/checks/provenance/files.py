"""File checks (``continuity check``): a sums file, and the files it lists."""

from __future__ import annotations

from continuity_checks.checks.provenance import listed, sums
from continuity_checks.checks.provenance import rules as pv
from continuity_checks.checks.provenance.listed import named
from continuity_checks.core import core_rules as cc
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot, Unreadable


def check_sums(path: str, data: bytes, snapshot: Snapshot, relative_to: str) -> list[Finding]:
    parsed = sums.parse(data)
    findings: list[Finding] = []
    for bad in parsed.bad_text:
        if bad.bom:
            findings.append(
                cc.BOM.finding(path, "expected a line, found a byte order mark", line=1, column=1)
            )
        else:
            findings.append(
                cc.INVALID_UTF8.finding(
                    path,
                    "expected UTF-8 text, found bytes that are not UTF-8",
                    line=bad.line,
                    column=bad.column,
                )
            )
    for bad_line in parsed.malformed:
        findings.append(
            pv.MALFORMED.finding(path, bad_line.message, line=bad_line.line, column=bad_line.column)
        )
    if not parsed.entries:
        if not parsed.malformed and not parsed.bad_text:
            what = "an empty file" if not data.strip() else "only comments and blank lines"
            findings.append(
                pv.EMPTY.finding(path, f"expected at least one checksum line, found {what}", line=1)
            )
        return findings
    findings.extend(verify_entries(path, parsed.entries, snapshot, relative_to))
    return findings


def verify_entries(
    path: str,
    entries: list[sums.Entry],
    snapshot: Snapshot,
    relative_to: str,
) -> list[Finding]:
    """Duplicates, escaping paths, missing files and mismatches of a sums file's entries."""
    findings: list[Finding] = []
    first: dict[str, sums.Entry] = {}
    to_hash: list[tuple[sums.Entry, str]] = []
    for entry in entries:
        target = listed.resolve(path, entry.path, relative_to)
        if isinstance(target.resolved, Unreadable):
            findings.append(target.resolved.finding(path, line=entry.line))
            continue
        if target.resolved == path:
            findings.append(
                pv.MISMATCH.finding(
                    path,
                    "expected no entry for the sums file itself (writing the line changes the "
                    "file's digest), found one",
                    line=entry.line,
                )
            )
            continue
        earlier = first.get(target.resolved)
        if earlier is not None:
            findings.append(_duplicate(path, entry, earlier))
            continue
        first[target.resolved] = entry
        to_hash.append((entry, target.resolved))
    digests = listed.hash_all(snapshot, [resolved for _, resolved in to_hash])
    for (entry, resolved), digest in zip(to_hash, digests, strict=True):
        if isinstance(digest, Unreadable):
            if digest.rule is cc.UNREADABLE and not snapshot.exists(resolved):
                findings.append(
                    pv.MISSING.finding(
                        path,
                        f"expected the listed file {named(entry.path)}, found no such file",
                        line=entry.line,
                        hint=listed.read_otherwise(snapshot, path, entry.path, relative_to),
                    )
                )
            else:
                findings.append(digest.finding(path, line=entry.line))
        elif digest.hex != entry.digest:
            findings.append(
                pv.MISMATCH.finding(
                    path,
                    f"{named(entry.path)}: expected SHA-256 {entry.digest}, found {digest.hex} "
                    f"({digest.size} bytes)",
                    line=entry.line,
                )
            )
    return findings


def _duplicate(path: str, entry: sums.Entry, earlier: sums.Entry) -> Finding:
    """A second line for one path: PV105 when its digest differs from the first line's (one of
    the two fails, whatever the file holds), PV109 when it repeats it (sha256sum -c passes both)."""
    if entry.digest != earlier.digest:
        return pv.DUPLICATE.finding(
            path,
            f"expected each path once, found {named(entry.path)} again with another digest "
            f"(first on line {earlier.line}: {earlier.digest}; here {entry.digest})",
            line=entry.line,
        )
    return pv.REPEATED.finding(
        path,
        f"expected each path once, found {named(entry.path)} again with the same digest "
        f"(first on line {earlier.line})",
        line=entry.line,
    )
