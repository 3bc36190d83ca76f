"""The order of the commits a range walked: what the report sorts findings by."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

HEX_DIGITS = frozenset("0123456789abcdef")


class CommitOrder(Mapping[str, int]):
    """Each walked commit's place in the range (1 for the oldest), from the binary ids of the
    walk (``width`` bytes each): 20 bytes a commit instead of a string and a dict entry (about
    160 bytes), for ranges of 100,000 commits. The places of ``wanted`` (the commits that have
    findings, what sorting asks for) are looked up once, in one pass; any other is found by a
    search of the ids."""

    def __init__(self, ids: bytearray, width: int, wanted: set[str]) -> None:
        self._ids = ids
        self._width = width
        self._known: dict[str, int] = {}
        binary: dict[bytes, str] = {}
        for sha in wanted:
            if len(sha) == 2 * width and HEX_DIGITS.issuperset(sha):
                binary[bytes.fromhex(sha)] = sha
        if binary:
            view = memoryview(self._ids)
            for place, start in enumerate(range(0, len(self._ids), width), start=1):
                found = binary.get(view[start : start + width].tobytes())
                if found is not None:
                    self._known[found] = place

    def __getitem__(self, sha: str) -> int:
        place = self._known.get(sha)
        if place is not None:
            return place
        if len(sha) == 2 * self._width and HEX_DIGITS.issuperset(sha):
            key, at = bytes.fromhex(sha), 0
            while (at := self._ids.find(key, at)) >= 0:
                if at % self._width == 0:
                    return at // self._width + 1
                at += 1
        raise KeyError(sha)

    def __iter__(self) -> Iterator[str]:
        width = self._width
        for start in range(0, len(self._ids), width):
            yield self._ids[start : start + width].hex()

    def __len__(self) -> int:
        return len(self._ids) // self._width if self._width else 0
