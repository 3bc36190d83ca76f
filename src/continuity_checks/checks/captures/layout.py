"""What the captures family needs before it checks anything: the names of its files, which
directory is a decision directory, and its options (``[captures]``) read into :class:`Settings`.

Kept apart from the checks so that building the family (``family.py``: ``__init__`` and
``claims``, which the commit hook runs for every staged path) imports nothing else of the
family: the check modules, the schemas and the helper are imported only when a check runs.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from continuity_checks.core.config import Config
from continuity_checks.core.family import option
from continuity_checks.core.frozen import Frozen
from continuity_checks.core.strict_json import DEFAULT_MAX_DEPTH, DEFAULT_MAX_FILE_BYTES

MANIFEST = "manifest.json"
CAPTURE = "capture.json"
PROJECTION = "projection.json"
REQUIRED = "required-context.json"
DELIVERY = "delivery.json"
CYCLE_BASE = "cycle-base.json"
CYCLE_DELTA = "cycle-delta.json"

if TYPE_CHECKING:
    from typing import Literal

    DigestBasis = Literal["raw", "canonical"]
    SelectionHypothesis = Literal["H1", "H2", "shape"]
    ListSize = Literal["canonical", "off"]
    ListDepthOrigin = Literal["node", "children"]
    DuplicatePointers = Literal["flag", "reject"]
    DeltaOps = Literal["loopx", "rfc6902"]


def is_decision_dir(directory: str) -> bool:
    return posixpath.basename(directory).startswith("decision-")


def is_backup_dir(directory: str) -> bool:
    """Whether ``directory`` is a turn's directory of OpenProgram's session backups
    (``file_backups/<turn>/``): its ``manifest.json`` is the sessions family's, and its other
    files are copies of the user's."""
    return posixpath.basename(posixpath.dirname(directory)) == "file_backups"


class Settings(Frozen):
    """The family's options, as the checks and the helper commands need them (a frozen value,
    shared safely as a default). Each default is what the spec recommends (or LoopX 2.1.1
    does); docs/decisions.md says why for each."""

    _fields = (
        "capture_digest",
        "selection_digest",
        "relaxed_refs",
        "max_depth",
        "max_file_bytes",
        "list_size",
        "list_depth_origin",
        "duplicate_pointers",
        "delta_ops",
    )
    __slots__ = _fields
    capture_digest: DigestBasis
    selection_digest: SelectionHypothesis
    relaxed_refs: bool
    max_depth: int
    # the most bytes a helper reads of one file (limits.max-file-bytes, as check)
    max_file_bytes: int
    # spec §3.5: a --list entry's size is the bytes of the subtree's compact canonical JSON,
    # or no size at all ("off") until LoopX's own measure is known
    list_size: ListSize
    # spec §3.5: depth 0 is the selected node itself ("node"), or the selected node is not
    # listed and depth N lists N levels below it ("children", as the seed's example shows)
    list_depth_origin: ListDepthOrigin
    # spec §3.1: a pointer selected twice is flagged (CX115, a warning) or rejected (an error
    # in check, a refusal of read)
    duplicate_pointers: DuplicatePointers
    # spec §7: the cycle-delta operations (ours: add/replace/remove/move/reorder/ref), or
    # RFC 6902's own (add/remove/replace/move/copy/test)
    delta_ops: DeltaOps

    def __init__(
        self,
        capture_digest: DigestBasis = "raw",
        selection_digest: SelectionHypothesis = "H1",
        relaxed_refs: bool = False,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        list_size: ListSize = "canonical",
        list_depth_origin: ListDepthOrigin = "node",
        duplicate_pointers: DuplicatePointers = "flag",
        delta_ops: DeltaOps = "loopx",
    ) -> None:
        self._set(
            capture_digest,
            selection_digest,
            relaxed_refs,
            max_depth,
            max_file_bytes,
            list_size,
            list_depth_origin,
            duplicate_pointers,
            delta_ops,
        )


def settings(config: Config) -> Settings:
    """The ``[captures]`` options of ``config`` (a bad value is the configuration's error)."""

    def choice(key: str, default: str, *allowed: str) -> Any:  # one of the Literal values
        return option(config, "captures", key, default, (default, *allowed))

    return Settings(
        capture_digest=choice("capture-digest", "raw", "canonical"),
        selection_digest=choice("selection-digest", "H1", "H2", "shape"),
        relaxed_refs=choice("context-ref", "strict", "relaxed") == "relaxed",
        max_depth=config.max_depth,
        max_file_bytes=config.max_file_bytes,
        list_size=choice("list-size", "canonical", "off"),
        list_depth_origin=choice("list-depth-origin", "node", "children"),
        duplicate_pointers=choice("duplicate-pointers", "flag", "reject"),
        delta_ops=choice("delta-ops", "loopx", "rfc6902"),
    )
