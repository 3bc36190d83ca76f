"""The ``continuity capture`` operations: write a manifest, verify a directory, read by JSON
Pointer with paging, list a subtree, diff and apply cycle deltas.

Each operation returns ``(exit code, payload)``: 0 and ``ok: true`` on success, 1 and
``ok: false`` with a stable ``error_code`` on a refusal (in the style of LoopX's own failure
payloads). Nothing is written on a refusal. Every file is read and written through
:class:`~continuity_checks.core.confined_files.ConfinedFiles`, confined to the repository that
holds it: a path it refuses (outside the root, not a regular file, past the size limit) raises
``Refused``, which the command line reports with exit 2.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from continuity_checks.checks.captures import layout, model
from continuity_checks.checks.captures.model import ScanError
from continuity_checks.core import hashing, schemas, strict_json
from continuity_checks.core.confined_files import ConfinedFiles

PAGE_BYTES = 16_000  # at most this much content per page (SEED 001)
STDOUT_BYTES = 20_000  # at most this much output per call (SEED 001)
READ_MODE = "context-read"

Result = tuple[int, dict[str, Any]]
Raw = tuple[int, "dict[str, Any] | bytes"]


def output(payload: dict[str, Any]) -> str:
    """The one line a command prints: compact JSON, non-ASCII as is (what the caps measure)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n"


def _refuse(mode: str, code: str, message: str, **extra: Any) -> Result:
    return 1, {"ok": False, "mode": mode, "error_code": code, "error": message, **extra}


def _files(path: str, settings: layout.Settings) -> ConfinedFiles:
    """The files of the repository that holds ``path``, read within the configured limit."""
    return ConfinedFiles.around(path, settings.max_file_bytes)


def _load_json(path: str, settings: layout.Settings) -> Any:
    """The strict JSON value of the file at ``path``; ValueError with the reason."""
    return _parse_json(path, _files(path, settings).read(path))


def _refuse_output(out: str | None, settings: layout.Settings) -> None:
    """Refuse (``Refused``) an output the helper may never write, before anything is read;
    one it merely cannot write is left to the write, which answers in JSON."""
    if out is not None:
        with contextlib.suppress(OSError):
            _files(out, settings).writable(out)


def _parse_json(path: str, data: bytes) -> Any:
    """The strict JSON value of ``data``, the bytes of ``path``; ValueError with the reason."""
    loaded = strict_json.load(data)
    if isinstance(loaded, strict_json.Problem):
        raise ValueError(f"{path}:{loaded.line}:{loaded.column}: {loaded.message}")
    return loaded.value


# --- manifest ------------------------------------------------------------------------------


def manifest(
    directory: str,
    capture: str | None = None,
    digest: str | None = None,
    settings: layout.Settings = layout.Settings(),  # noqa: B008 (frozen: shared safely)
) -> Result:
    """Write ``DIRECTORY/manifest.json`` for the capture in it (``capture.json``, or
    ``projection.json`` in a decision directory). An existing manifest that pins the same
    digest is left alone; one that pins another is a refusal. The digest is over the basis
    ``settings`` configure (``capture-digest``); ``digest`` may only repeat it, since a manifest
    over the other basis is what ``check`` rejects (CX104)."""
    mode = "capture-manifest"
    if digest is not None and digest != settings.capture_digest:
        return _refuse(
            mode,
            "DIGEST_NOT_CONFIGURED",
            f"expected --digest {settings.capture_digest} ([captures] capture-digest = "
            f"{settings.capture_digest!r}), found --digest {digest}: continuity check would "
            "reject the manifest (CX104); change the configuration first",
        )
    digest = settings.capture_digest
    name = capture or (
        layout.PROJECTION
        if layout.is_decision_dir(os.path.basename(os.path.abspath(directory)))
        else layout.CAPTURE
    )
    refused = model.inside_name(name)
    if refused is not None:
        return _refuse(mode, "PATH_OUTSIDE", f"{name}: {refused}")
    path = os.path.join(directory, name)
    target = os.path.join(directory, layout.MANIFEST)
    files = _files(target, settings)
    files.writable(target)  # a directory that is a symlink: refused before anything is read
    try:
        data = files.read(path)
        value, found = _parse_json(path, data), hashing.sha256_bytes(data)
    except FileNotFoundError:
        return _refuse(mode, "CAPTURE_MISSING", f"expected a capture at {path}, found none")
    except (OSError, ValueError) as exc:
        return _refuse(mode, "CAPTURE_UNREADABLE", f"expected a strict JSON capture: {exc}")
    sha = model.canonical_sha256(value) if digest == "canonical" else found.hex
    record = {
        "schema_version": model.SCHEMA_VERSION,
        "capture_file": name,
        "capture_sha256": sha,
        "capture_bytes": found.size,
    }
    unread = unchecked(target)
    if unread is not None:
        return _refuse(mode, "NOT_CHECKED", f"{target}: {unread}; nothing was written")
    text = (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    result = {"ok": True, "mode": mode, "manifest": target, "capture_sha256": sha,
              "capture_bytes": found.size}  # fmt: skip
    try:
        files.create(target, text)
        return 0, {**result, "written": True}
    except FileExistsError:
        pass
    try:
        existing = _load_json(target, settings)
    except (OSError, ValueError) as exc:
        return _refuse(mode, "MANIFEST_CONFLICT", f"an unreadable manifest is in the way: {exc}")
    pinned = existing.get("capture_sha256") if isinstance(existing, dict) else None
    if not hashing.same_digest(pinned, sha):
        return _refuse(
            mode,
            "MANIFEST_CONFLICT",
            f"expected {target} to pin {sha} or not to exist, found it pinning "
            f"{pinned!r}: a capture is never rewritten, write a new directory",
        )
    return 0, {**result, "written": False}


# --- verify --------------------------------------------------------------------------------


def verify(directory: str) -> Result:
    """Every captures check on the files under ``directory``, as ``continuity check DIR`` runs
    them: from the top of the repository that holds it, with its configuration."""
    from continuity_checks import checks, engine
    from continuity_checks.core import config as config_module

    # from the repository's top, as `continuity check DIR` does: a decision directory is known by
    # its name (decision-<id>/), which a check rooted inside it would not see
    top = config_module.project_root(Path(directory))
    under = engine.relative(top, directory) or ""
    try:
        config = config_module.load(top, checks.known())
        report = engine.check(top, config, under=(under,), only=("captures",))
    except config_module.ConfigError as exc:  # a bad key, or a bad value of a family option
        return _refuse("capture-verify", "CONFIG_INVALID", f"configuration error in {exc}")
    if report.files == 0:  # a pass here would vouch for files no check read
        return _refuse(
            "capture-verify",
            "NOTHING_CHECKED",
            f"expected capture files under {directory} that continuity check reads (capture.json, "
            "manifest.json, *.reader.json, decision-<id>/, cycle deltas, under [captures] roots "
            "when it is set), found none" + "".join(f"; {note}" for note in report.notes),
        )
    findings = [f.to_dict() for f in report.sorted_findings()]
    ok = report.errors == 0
    return (0 if ok else 1), {
        "ok": ok,
        "mode": "capture-verify",
        "files": report.files,
        "errors": report.errors,
        "warnings": report.warnings,
        "findings": findings,
    }


# --- the [captures] options of the current directory ----------------------------------------


def configured(mode: str, directory: str = ".") -> layout.Settings | Result:
    """The ``[captures]`` options of the configuration of the repository that holds
    ``directory`` (as ``check`` finds it, from any directory of the repository), or a refusal
    naming the bad key. ``manifest``, ``read``, ``list``, ``diff`` and ``apply`` follow the same
    options as the checks, so that what they write passes ``check``."""
    from continuity_checks import checks
    from continuity_checks.core import config as config_module

    try:
        top = config_module.project_root(Path(directory))
        config = config_module.load(top, checks.known())
        return layout.settings(config)
    except config_module.ConfigError as exc:
        return _refuse(mode, "CONFIG_INVALID", f"configuration error in {exc}")


def unchecked(path: str) -> str | None:
    """Why ``continuity check`` would never read the file ``path`` is to be (None: it would):
    outside the configured ``roots``, excluded, or the family left out. A manifest or reader
    reference that no check reads would vouch for a capture that may change unseen."""
    from continuity_checks import checks, engine
    from continuity_checks.checks.captures.family import CapturesFamily
    from continuity_checks.core import config as config_module
    from continuity_checks.core.globs import Globs

    top = config_module.project_root(Path(os.path.dirname(os.path.abspath(path))))
    rel = engine.relative(top, path)
    try:
        config = config_module.load(top, checks.known())
        family = CapturesFamily(config)
    except config_module.ConfigError as exc:
        return f"configuration error in {exc}"
    if config.families is not None and "captures" not in config.families:
        return "the captures family is not checked (families in the configuration)"
    if rel is None or family.claims(rel) is None:
        return (
            "not a file continuity check reads as part of a capture (outside [captures] roots, "
            "or in another family's directory): write it in a capture directory"
        )
    if Globs(config.exclude).match(rel):
        return "excluded by the configuration (exclude): continuity check would never read it"
    return None


# --- read and list -------------------------------------------------------------------------


def read(
    *,
    capture_file: str | None = None,
    capture_sha256: str | None = None,
    select: Sequence[str] = (),
    list_depth: int | None = None,
    cursor: int | None = None,
    selection_sha256: str | None = None,
    reference_file: str | None = None,
    reference_out: str | None = None,
    settings: layout.Settings = layout.Settings(),  # noqa: B008 (frozen: shared safely)
) -> Result:
    """LoopX's ``quota context-read`` (spec §3): the digest first, then every pointer (one miss
    rejects the batch), then the results, or a page of their compact canonical JSON with the
    command that reads the next one. ``list_depth`` (not None) lists instead of reading;
    ``settings`` gives the listing's shape and whether a duplicate pointer is refused."""

    def fail(code: str, message: str, **extra: Any) -> Result:
        return _refuse(READ_MODE, code, message, **extra)

    select = list(select)
    _refuse_output(reference_out, settings)
    if reference_file is not None:
        try:
            reference = _load_json(reference_file, settings)
        except (OSError, ValueError) as exc:
            return fail("REFERENCE_UNREADABLE", f"expected a reader reference: {exc}")
        if not schemas.validator("loopx-capture-reader").is_valid(reference):
            return fail("REFERENCE_INVALID", f"{reference_file} is not a reader reference")
        refused = model.inside_name(reference["capture_file"])
        if refused is not None:
            return fail("PATH_OUTSIDE", f"capture_file: {refused}")
        capture_file = os.path.join(os.path.dirname(reference_file), reference["capture_file"])
        capture_sha256 = reference["capture_sha256"]
        select = select or list(reference["select"])
        if list_depth is None and "list_depth" in reference:
            list_depth = reference["list_depth"]
    if capture_file is None or capture_sha256 is None:
        return fail("USAGE", "expected --capture-file and --capture-sha256, or --reference-file")
    pinned = hashing.parse_digest(capture_sha256)
    if pinned is None:
        return fail("DIGEST_INVALID", f"expected a SHA-256 digest, found {capture_sha256!r}")
    if not select:
        return fail("USAGE", "expected at least one --select pointer")
    invalid = []
    for pointer in select:
        try:
            model.tokens(pointer)
        except model.PointerError:
            invalid.append(pointer)
    if invalid:
        return fail("POINTER_INVALID", "expected RFC 6901 pointers", pointers=invalid)
    duplicates = sorted({p for i, p in enumerate(select) if p in select[:i]})
    if duplicates and settings.duplicate_pointers == "reject":
        return fail(
            "POINTER_DUPLICATE",
            'expected each pointer once (duplicate-pointers = "reject")',
            pointers=duplicates,
        )
    if list_depth == 0 and settings.list_depth_origin == "children":
        return fail(
            "USAGE",
            'expected --list-depth 1 or more: with list-depth-origin = "children" depth 0 '
            "lists nothing",
        )
    files = _files(capture_file, settings)
    try:
        actual = files.sha256(capture_file).hex
        if settings.capture_digest == "canonical":  # what check expects a pin to be (CX111)
            actual = model.canonical_sha256(_load_json(capture_file, settings))
    except (OSError, ValueError) as exc:
        return fail("CAPTURE_UNREADABLE", f"cannot read {capture_file}: {exc}")
    if actual != pinned:
        basis = "'s canonical JSON" if settings.capture_digest == "canonical" else ""
        return fail(
            "DIGEST_MISMATCH",
            f"expected {capture_file}{basis} to hash to {pinned}, found {actual}: nothing is read",
        )

    def mismatch(selection: str) -> Result | None:
        if selection_sha256 is None or hashing.same_digest(selection_sha256, selection):
            return None
        return fail(
            "SELECTION_MISMATCH",
            f"expected the selection digest {selection} for this capture and selection, found "
            f"{selection_sha256}: start the read again",
        )

    # the configured hypothesis, as check recomputes it (CX113): H1 over what is asked, known
    # before anything is read; H2 over what is returned ("shape" is not recomputed: H1)
    selection = model.selection_h1(pinned, select, list_depth)
    if settings.selection_digest != "H2" and (stale := mismatch(selection)) is not None:
        return stale
    try:
        values = select_values(files, capture_file, select)
    except (ScanError, OSError, RecursionError) as exc:
        return fail("CAPTURE_UNREADABLE", f"cannot read {capture_file}: {exc}")
    missing = [p for p, v in zip(select, values, strict=True) if v is model.MISSING]
    if missing:
        return fail(
            "POINTER_MISSING",
            "expected every pointer to resolve; the whole batch is rejected",
            pointers=missing,
        )
    if settings.selection_digest == "H2":
        returned = [{"pointer": p, "value": v} for p, v in zip(select, values, strict=True)]
        selection = model.selection_h2(returned)
        if (stale := mismatch(selection)) is not None:
            return stale
    items: list[dict[str, Any]] = []
    if list_depth is None:
        items = [{"pointer": p, "value": v} for p, v in zip(select, values, strict=True)]
    else:
        for pointer, value in zip(select, values, strict=True):
            items.extend(
                model.listing(
                    value,
                    pointer,
                    list_depth,
                    size=settings.list_size == "canonical",
                    origin=settings.list_depth_origin,
                )
            )
    head = {"ok": True, "mode": READ_MODE, "capture_sha256": pinned, "selection_sha256": selection}
    if reference_out is not None:
        written = _write_reference(
            _files(reference_out, settings),
            reference_out,
            (capture_file, pinned),
            select,
            list_depth,
            selection,
        )
        if written is not None:
            return fail("REFERENCE_REFUSED", written)
        head["reference_file"] = reference_out
    content = model.canonical_bytes(items)
    if cursor is None:
        whole = {**head, "results": items}
        if len(content) <= PAGE_BYTES and len(output(whole).encode("utf-8")) <= STDOUT_BYTES:
            return 0, whole
        cursor = 0
    return _page(head, content, cursor, capture_file, select, list_depth)


def _page(
    head: dict[str, Any],
    content: bytes,
    cursor: int,
    capture_file: str,
    select: list[str],
    list_depth: int | None,
) -> Result:
    total = len(content)
    if cursor < 0 or cursor > total or (cursor < total and content[cursor] & 0xC0 == 0x80):
        return _refuse(
            READ_MODE,
            "CURSOR_INVALID",
            f"expected a cursor at a character boundary in 0..{total}, found {cursor}",
        )
    end = min(cursor + PAGE_BYTES, total)
    while True:
        while end < total and content[end] & 0xC0 == 0x80:  # never split a UTF-8 character
            end -= 1
        complete = end == total
        payload = {
            **head,
            "page": {
                "cursor": cursor,
                "bytes": end - cursor,
                "total_bytes": total,
                "content": content[cursor:end].decode("utf-8"),
                "complete": complete,
            },
            "next_command": None
            if complete
            else next_command(capture_file, head, select, list_depth, end),
        }
        size = len(output(payload).encode("utf-8"))
        if size <= STDOUT_BYTES:
            return 0, payload
        # escapes made the page too long for stdout: shorten it by the excess, and retry
        end = max(cursor + 1, end - (size - STDOUT_BYTES))


def next_command(
    capture_file: str, head: dict[str, Any], select: list[str], list_depth: int | None, cursor: int
) -> str:
    words = ["continuity", "capture", "read", "--capture-file", capture_file,
             "--capture-sha256", head["capture_sha256"]]  # fmt: skip
    for pointer in select:
        words += ["--select", pointer]
    if list_depth is not None:
        words += ["--list", "--list-depth", str(list_depth)]
    words += ["--cursor", str(cursor), "--selection-sha256", head["selection_sha256"]]
    return shlex.join(words)


def _write_reference(
    files: ConfinedFiles,
    out: str,
    capture: tuple[str, str],
    select: list[str],
    list_depth: int | None,
    selection: str,
) -> str | None:
    """Write a reader reference (never over an existing file) to ``capture`` (its path and
    digest); the reason it was not written."""
    capture_file, capture_sha256 = capture
    relative = os.path.relpath(os.path.abspath(capture_file), os.path.dirname(os.path.abspath(out)))
    relative = relative.replace(os.sep, "/")
    refused = model.inside_name(relative)
    if refused is not None:
        return f"expected the reference beside its capture (capture_file: {refused})"
    if not out.endswith(".reader.json"):
        return "expected a reference file name ending in .reader.json"
    unread = unchecked(out)
    if unread is not None:
        return f"{out}: {unread}"
    words = ["continuity", "capture", "read", "--capture-file", relative,
             "--capture-sha256", capture_sha256]  # fmt: skip
    for pointer in select:
        words += ["--select", pointer]
    record: dict[str, Any] = {
        "schema_version": model.SCHEMA_VERSION,
        "capture_file": relative,
        "capture_sha256": capture_sha256,
        "select": select,
        "selection_sha256": selection,
    }
    if list_depth is not None:
        record["list_depth"] = list_depth
        words += ["--list", "--list-depth", str(list_depth)]
    record["command"] = shlex.join(words)
    text = (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode()
    try:
        files.create(out, text)
    except FileExistsError:
        try:
            if files.read(out) == text:
                return None  # the same read again: the reference it pins is already there
        except OSError:
            pass
        return f"{out} exists: a reader reference is never rewritten"
    except OSError as exc:
        return f"cannot write {out}: {exc}"
    return None


# --- diff and apply ------------------------------------------------------------------------


def diff(
    base: str,
    current: str,
    out: str | None = None,
    settings: layout.Settings = layout.Settings(),  # noqa: B008 (frozen: shared safely)
) -> Result:
    """The cycle delta from ``base`` to ``current``, in the configured vocabulary."""
    mode = "capture-diff"
    _refuse_output(out, settings)
    try:
        base_data = _files(base, settings).read(base)
        base_value, base_sha = _parse_json(base, base_data), hashing.sha256_bytes(base_data).hex
        current_value = _load_json(current, settings)
    except (OSError, ValueError) as exc:
        return _refuse(mode, "INPUT_INVALID", f"expected two strict JSON files: {exc}")
    if out is not None and os.path.basename(out) == layout.CYCLE_DELTA:
        # check holds a cycle-delta.json against the cycle-base.json beside it (CX103)
        beside = os.path.join(os.path.dirname(out), layout.CYCLE_BASE)
        try:
            found = _files(beside, settings).sha256(beside).hex
        except OSError:
            found = None
        if found != base_sha:
            return _refuse(
                mode,
                "BASE_NOT_BESIDE",
                f"expected BASE to be the {beside} that check holds {out} against, found "
                f"{base} ({'none there' if found is None else 'other bytes'}); nothing was "
                "written",
            )
    operations = model.diff(base_value, current_value, settings.delta_ops)
    delta: dict[str, Any] = {
        "schema_version": model.SCHEMA_VERSION,
        "base_sha256": base_sha,
        "target_sha256": model.canonical_sha256(current_value),
        "operations": operations,
    }
    text = (json.dumps(delta, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    if out is None:
        return 0, delta
    unwritten = _write_out(_files(out, settings), out, text)
    if unwritten is not None:
        return _refuse(mode, *unwritten)
    return 0, {"ok": True, "mode": mode, "output": out, "base_sha256": base_sha,
               "target_sha256": delta["target_sha256"], "operations": len(operations),
               "bytes": len(text)}  # fmt: skip


def apply(
    base: str,
    delta_file: str,
    out: str | None = None,
    settings: layout.Settings = layout.Settings(),  # noqa: B008 (frozen: shared safely)
) -> Raw:
    """Restore the current document from ``base`` and a cycle delta; refuse (writing nothing)
    when the base or the restored document does not have the digest the delta names."""
    mode = "capture-apply"
    _refuse_output(out, settings)
    try:
        base_data = _files(base, settings).read(base)
        base_value, base_sha = _parse_json(base, base_data), hashing.sha256_bytes(base_data).hex
        delta = _load_json(delta_file, settings)
    except (OSError, ValueError) as exc:
        return _refuse(mode, "INPUT_INVALID", f"expected two strict JSON files: {exc}")
    schema = "loopx-cycle-delta" if settings.delta_ops == "loopx" else "loopx-cycle-delta-rfc6902"
    if not schemas.validator(schema).is_valid(delta):
        return _refuse(
            mode,
            "DELTA_INVALID",
            f"{delta_file} is not a cycle delta (delta-ops = {settings.delta_ops!r})",
        )
    if not hashing.same_digest(delta["base_sha256"], base_sha):
        return _refuse(
            mode,
            "BASE_MISMATCH",
            f"expected a base hashing to {delta['base_sha256']}, found {base_sha}",
        )
    try:
        restored = model.apply_delta(base_value, delta["operations"], settings.delta_ops)
    except model.DeltaError as exc:
        return _refuse(
            mode, "OPERATION_INVALID", f"operation {exc.index}: {exc}", pointer=exc.pointer
        )
    data = model.canonical_bytes(restored)
    target = hashing.sha256_bytes(data).hex
    if not hashing.same_digest(delta["target_sha256"], target):
        return _refuse(
            mode,
            "TARGET_MISMATCH",
            f"expected the restored document to hash to {delta['target_sha256']}, found {target}",
        )
    if out is None:
        return 0, data  # the restored document itself, byte for byte
    unwritten = _write_out(_files(out, settings), out, data)
    if unwritten is not None:
        return _refuse(mode, *unwritten)
    return 0, {"ok": True, "mode": mode, "output": out, "target_sha256": target, "bytes": len(data)}


#: Files a capture directory's cycle may replace (as captures/history.py lets it)
_MOVING = frozenset({layout.CYCLE_BASE, layout.CYCLE_DELTA, layout.REQUIRED})
#: The other files of a decision directory that check reads (all of them never change there)
_DECISION_FILES = frozenset({layout.CAPTURE, layout.PROJECTION, layout.DELIVERY, layout.MANIFEST})


def _published(files: ConfinedFiles, out: str, data: bytes) -> bool:
    """Whether writing ``data`` to ``out`` would rewrite a published capture file: anything in
    a decision directory, a reader reference, or a file beside a manifest other than the
    cycle's own (``continuity verify`` reports that rewrite, CX201)."""
    try:
        if files.read(out) == data:
            return False  # the same bytes: nothing is rewritten
    except OSError:
        return False  # absent (or unreadable: the write says why)
    directory, name = os.path.split(os.path.abspath(out))
    if name.endswith(".reader.json"):
        return True
    if layout.is_decision_dir(directory):
        return name in _MOVING or name in _DECISION_FILES
    return name not in _MOVING and os.path.exists(os.path.join(directory, layout.MANIFEST))


def _write_out(files: ConfinedFiles, out: str, data: bytes) -> tuple[str, str] | None:
    """Write ``-o OUT`` atomically; else the error code and why (a refusal in JSON, as every
    other)."""
    if _published(files, out, data):
        return "OUTPUT_PUBLISHED", (
            f"{out} is part of a published capture, which is never rewritten (continuity "
            "verify reports it, CX201): write the new observation to a new directory; nothing "
            "was written"
        )
    try:
        files.write(out, data)
    except OSError as exc:
        return (
            "OUTPUT_UNWRITABLE",
            f"cannot write {out}: {exc.strerror or exc}; nothing was written",
        )
    return None


# --- selecting from a mapped capture ------------------------------------------------------

_DROP_EVERY = 2 << 20  # bytes scanned between handing pages back to the kernel


def select_values(files: ConfinedFiles, path: str, pointers: list[str]) -> list[Any]:
    """The values at ``pointers`` in the JSON file at ``path``, in order (:data:`MISSING` for
    an absent one), found by :func:`model.select` over the mapped file. The pages the scanner
    has passed are handed back to the kernel as it goes, so memory stays near the size of the
    selection, not of the capture. Raises ``ScanError``, ``PointerError`` or ``OSError``."""
    for pointer in pointers:
        model.tokens(pointer)  # every pointer's syntax before any work
    with files.opened(path) as (fd, size):
        if size == 0:
            raise ScanError("expected a JSON value, found an empty file")
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            released = [0]

            def release(upto: int) -> None:
                end = (upto // mmap.PAGESIZE) * mmap.PAGESIZE
                if end - released[0] >= _DROP_EVERY and hasattr(mmap, "MADV_DONTNEED"):
                    data.madvise(mmap.MADV_DONTNEED, released[0], end - released[0])
                    released[0] = end

            def restart() -> None:
                released[0] = 0  # the next pointer starts from the root again

            return model.select(data, pointers, release, restart)
