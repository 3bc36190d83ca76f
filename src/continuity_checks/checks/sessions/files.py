"""File checks (``continuity check``) of one file on its own: meta.json, the registries, a
backup manifest, a project's .gitignore, a stray temp file. History nodes are checked per
session in :mod:`session`, where the whole DAG is at hand."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from continuity_checks.checks.sessions import layout, memory, topics
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.common import SESSION_STATUSES, load
from continuity_checks.core import pointer as jp
from continuity_checks.core import schemas, strict_json
from continuity_checks.core.display import json_type, quote, show
from continuity_checks.core.family import FileInput
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.strict_json import located

PROJECT_ID = re.compile(r"^proj_[0-9a-f]{8}$")
TITLE_LIMIT = 80
PREVIEW_LIMIT = 80

At = Callable[[Rule, str, str], Finding]


def check_file(file: FileInput, max_depth: int) -> list[Finding]:
    kind = file.kind
    if kind == layout.TEMP:
        return [
            ss.STRAY_TEMP.finding(
                file.path,
                "expected no temporary file in a session, found one left by an "
                "interrupted atomic write",
            )
        ]
    if kind == layout.GITIGNORE:
        return check_gitignore(file)
    if kind == layout.ARCHIVE:
        if memory.linked(file.snapshot, file.path):
            # what the link leads to is not an archive OpenProgram wrote: the link is SS211 at
            # the commit that makes it, and judging the target would change with it unseen
            return []
        return memory.scan(file.path, file.data)[1]
    if kind == layout.TOPIC:
        return topics.check_topic(file.path, file.data, file.snapshot).findings
    if kind == layout.RECORDS:
        return check_records(file, max_depth)
    findings: list[Finding] = []
    doc = load(file.data, file.path, max_depth, findings)
    if doc is None:
        return findings

    def at(rule: Rule, pointer: str, message: str) -> Finding:
        return located(rule, doc, file.path, pointer, message)

    if kind == layout.META:
        findings.extend(check_meta(doc.value, at, file))
    elif kind == layout.INDEX:
        findings.extend(check_index(doc.value, at))
    elif kind == layout.LOCATIONS:
        findings.extend(check_locations(doc.value, at))
    elif kind == layout.PROJECTS:
        findings.extend(check_projects(doc.value, at))
    elif kind == layout.BACKUP:
        findings.extend(check_backup(doc.value, at, file))
    return findings


# --- meta.json -----------------------------------------------------------------------------------

_META_RULE = {
    "id": ss.META_IDENTITY,
    "agent_id": ss.META_IDENTITY,
    "created_at": ss.META_IDENTITY,
    "head_id": ss.BAD_HEAD,
    "status": ss.META_STATUS,
    "project_id": ss.META_PROJECT,
    "branches": ss.META_BRANCHES,
    "merged_heads": ss.META_BRANCHES,
    "work_dir": ss.LOCATION_BINDING,
}


def check_meta(value: object, at: At, file: FileInput) -> list[Finding]:
    if not isinstance(value, dict):
        return [at(ss.META_NOT_OBJECT, "", f"expected a JSON object, found {json_type(value)}")]
    findings: list[Finding] = []
    if "head_id" not in value:
        findings.append(
            at(ss.BAD_HEAD, "", "expected the key head_id (null or a node id), found none")
        )
    missing = [k for k in ("id", "agent_id", "created_at") if k not in value]
    if missing:
        findings.append(
            at(
                ss.META_IDENTITY,
                "",
                f"expected the keys id, agent_id and created_at that "
                f"create_session writes; missing {', '.join(missing)}",
            )
        )
    sid = layout.session_path(file.path)
    name = sid.sid if sid is not None and sid.sid else _root_name(file)
    if name and isinstance(value.get("id"), str) and value["id"] != name:
        findings.append(
            at(
                ss.META_IDENTITY,
                "/id",
                f"expected the directory name {quote(name)}, found {quote(value['id'])}",
            )
        )
    if "project_id" not in value:
        findings.append(at(ss.META_PROJECT, "", "expected the key project_id, found none"))
    for error in schemas.validator("openprogram-session-meta").errors(value):
        parts = jp.tokens(error.pointer)
        if not parts:
            continue  # head_id missing: reported above
        rule = _META_RULE.get(parts[0], ss.META_TITLE)
        found = value.get(parts[0]) if len(parts) == 1 else None
        if len(parts) == 1:
            detail = show(found)
        else:
            detail = f"{json_type(jp.value_or_none(value, error.pointer))} at {error.pointer}"
        findings.append(
            at(
                rule,
                error.pointer,
                f"expected {_META_EXPECTED.get(parts[0], 'a valid value')}, found {detail}",
            )
        )
    count = value.get("_title_gen_count")
    if (
        isinstance(count, (int, float))  # 2.0 passes the schema's integer 0..5: judge it too
        and not isinstance(count, bool)
        and count >= 1
        and value.get("_auto_titled") is not True
    ):
        findings.append(
            at(
                ss.META_TITLE,
                "/_title_gen_count",
                f"expected _auto_titled true with "
                f"_title_gen_count {count}, found {show(value.get('_auto_titled'))}",
            )
        )
    title = value.get("title")
    if (
        value.get("_auto_titled") is True
        and not value.get("_user_titled")
        and isinstance(title, str)
        and len(title) > TITLE_LIMIT
    ):
        findings.append(
            at(
                ss.META_TITLE,
                "/title",
                f"expected an automatic title of at most {TITLE_LIMIT} "
                f"characters, found {len(title)}",
            )
        )
    return findings


_META_EXPECTED = {
    "id": "a non-empty string",
    "agent_id": "a string",
    "created_at": "a number",
    "head_id": "null or a node id",
    "status": "one of " + ", ".join(SESSION_STATUSES),
    "project_id": '"default" or proj_<8 hex digits>',
    "branches": "an object of node id to object (or legacy string)",
    "merged_heads": "a list of node ids",
    "work_dir": "the project directory's absolute path, or null",
    "_title_gen_count": "an integer from 0 to 5",
    "_auto_titled": "a boolean",
    "_user_titled": "a boolean",
}


def _root_name(file: FileInput) -> str:
    """The name of the checked root, when the session directory is the root itself."""
    name, target = file.snapshot.root_name()
    # named through a symlink: the session's directory is the one it leads to
    return name if target is None else target.rstrip("/").rpartition("/")[2]


# --- registries ----------------------------------------------------------------------------------


def _schema_findings(
    schema: str, value: object, at: At, rule_of: Callable[[list[str], str], Rule]
) -> list[Finding]:
    findings = []
    for error in schemas.validator(schema).errors(value):
        parts = jp.tokens(error.pointer)
        found = jp.value_or_none(value, error.pointer)
        findings.append(
            at(
                rule_of(parts, error.keyword),
                error.pointer,
                f"{error.message}; found {show(found)}",
            )
        )
    return findings


def check_index(value: object, at: At) -> list[Finding]:
    if not isinstance(value, dict):
        return [
            at(
                ss.INDEX_SHAPE,
                "",
                f"expected a JSON object of session id to entry, found {json_type(value)}",
            )
        ]
    findings = _schema_findings(
        "openprogram-sessions-index", value, at, lambda p, k: ss.INDEX_SHAPE
    )
    for key, entry in value.items():
        if not isinstance(entry, dict):
            continue
        pointer = jp.append("", key)
        if "id" in entry and entry["id"] != key:
            findings.append(
                at(
                    ss.INDEX_SHAPE,
                    pointer + "/id",
                    f"expected the key {quote(key)}, found {show(entry['id'])}",
                )
            )
        preview = entry.get("preview")
        if isinstance(preview, str) and not preview_ok(preview):
            findings.append(
                at(
                    ss.PREVIEW,
                    pointer + "/preview",
                    f"expected at most {PREVIEW_LIMIT} characters (77 plus an ellipsis when "
                    f"cut), one line, stripped, found {show(preview, 40)} ({len(preview)} "
                    "characters)",
                )
            )
    return findings


def preview_ok(preview: str) -> bool:
    """At most 80 characters on one line, stripped: what ``preview_of`` can produce (a cut ends
    with the ellipsis, so no preview ends in whitespace)."""
    return len(preview) <= PREVIEW_LIMIT and "\n" not in preview and preview == preview.strip()


def preview_of(text: str) -> str:
    """What OpenProgram writes as the preview of a user message."""
    flat = text.strip().replace("\n", " ")
    return flat if len(flat) <= PREVIEW_LIMIT else flat[:77] + "…"


def check_locations(value: object, at: At) -> list[Finding]:
    if not isinstance(value, dict):
        return [
            at(
                ss.LOCATIONS_SHAPE,
                "",
                f"expected a JSON object of session id to path, found {json_type(value)}",
            )
        ]
    findings: list[Finding] = []
    for key, location in value.items():
        pointer = jp.append("", key)
        if not isinstance(location, str):
            findings.append(
                at(
                    ss.LOCATIONS_SHAPE,
                    pointer,
                    f"expected an absolute path, found {show(location)}",
                )
            )
        elif not location.startswith("/") or not location.endswith(f"/.openprogram/sessions/{key}"):
            findings.append(
                at(
                    ss.LOCATIONS_SHAPE,
                    pointer,
                    f"expected an absolute path ending in "
                    f"/.openprogram/sessions/{key}, found {quote(location)}",
                )
            )
    return findings


def project_id_for(path: str) -> str:
    return "proj_" + hashlib.sha1(path.lower().encode("utf-8")).hexdigest()[:8]


def check_projects(value: object, at: At) -> list[Finding]:
    if not isinstance(value, dict):
        return [
            at(
                ss.PROJECTS_SHAPE,
                "",
                f"expected a JSON object of project id to project, found {json_type(value)}",
            )
        ]

    def rule_of(parts: list[str], keyword: str) -> Rule:
        return (
            ss.DEFAULT_PROJECT
            if parts[1:] == ["id"] and keyword == "pattern"
            else ss.PROJECTS_SHAPE
        )

    findings = _schema_findings("openprogram-projects", value, at, rule_of)
    defaults = []
    for key, project in value.items():
        pointer = jp.append("", key)
        if not isinstance(project, dict):
            continue
        if "id" in project and project["id"] != key:
            findings.append(
                at(
                    ss.PROJECTS_SHAPE,
                    pointer + "/id",
                    f"expected the key {quote(key)}, found {show(project['id'])}",
                )
            )
        if project.get("is_default") is True:
            defaults.append(key)
            if key != "default":
                findings.append(
                    at(
                        ss.DEFAULT_PROJECT,
                        pointer,
                        f'expected the default project under the id "default", found {quote(key)}',
                    )
                )
        elif key == "default" or not PROJECT_ID.match(key):
            findings.append(
                at(
                    ss.DEFAULT_PROJECT,
                    pointer,
                    f"expected a non-default id proj_<8 hex digits>, found {quote(key)}",
                )
            )
        elif isinstance(project.get("path"), str) and project_id_for(project["path"]) != key:
            findings.append(
                at(
                    ss.PROJECT_ID_HASH,
                    pointer,
                    f"expected {project_id_for(project['path'])} "
                    f"(proj_ + sha1 of the lowercased path), found {quote(key)}; a relocated "
                    f"project keeps its id",
                )
            )
    if len(defaults) > 1:  # none yet: OpenProgram adds it at the first ad-hoc chat
        findings.append(
            at(
                ss.DEFAULT_PROJECT,
                "",
                f"expected at most one is_default project, found {len(defaults)}",
            )
        )
    return findings


# --- a project's .gitignore, a backup manifest ---------------------------------------------------


def check_gitignore(file: FileInput) -> list[Finding]:
    return gitignore_findings(file.path, file.data)


def gitignore_findings(path: str, data: bytes) -> list[Finding]:
    if data == b"*\n":
        return []
    found = quote(data[:40].decode("utf-8", "replace"))
    return [ss.PROJECT_GITIGNORE.finding(path, f'expected exactly "*\\n", found {found}', line=1)]


def check_backup(value: object, at: At, file: FileInput) -> list[Finding]:
    if not isinstance(value, dict):
        return [
            at(
                ss.BACKUP,
                "",
                f"expected a JSON object {{backed_at, files}}, found {json_type(value)}",
            )
        ]
    findings = _schema_findings(
        "openprogram-file-backup-manifest", value, at, lambda p, k: ss.BACKUP
    )
    files = value.get("files")
    if not isinstance(files, dict):
        return findings
    directory = file.path.rpartition("/")[0]
    for key, entry in files.items():
        if not isinstance(entry, dict) or entry.get("pre_existing") is not True:
            continue
        if "/" in key or key in ("", ".", ".."):
            findings.append(
                at(
                    ss.BACKUP,
                    jp.append("/files", key),
                    f"expected a blob name without /, found {quote(key)}",
                )
            )
        elif not file.snapshot.exists(f"{directory}/{key}"):
            findings.append(
                at(
                    ss.BACKUP,
                    jp.append("/files", key),
                    f"expected the backup blob {quote(key)} "
                    f"beside the manifest (pre_existing is true), found none",
                )
            )
    return findings


# --- the proposal's abstract-memory records (seed 003) -----------------------------------------


def records_need_provenance(path: str) -> bool:
    """Timeline records and graph edges carry provenance in the proposal; entities need not."""
    return "/timeline/" in f"/{path}" or path.endswith("edges.jsonl")


def check_records(file: FileInput, max_depth: int) -> list[Finding]:
    findings: list[Finding] = []
    required = records_need_provenance(file.path)
    for number, line in enumerate(file.data.split(b"\n"), 1):
        if not line.strip():
            continue
        doc = strict_json.load(line, max_depth=max_depth, first_line=number)
        if isinstance(doc, strict_json.Problem):
            findings.append(doc.finding(file.path))
            continue
        record = doc.value
        if not isinstance(record, dict):
            findings.append(
                ss.PROVENANCE.finding(
                    file.path,
                    f"expected a JSON object per line, found {json_type(record)}",
                    line=number,
                )
            )
            continue
        if "provenance" not in record:
            if required:
                findings.append(
                    ss.PROVENANCE.finding(
                        file.path,
                        "expected a provenance object pointing back to entity memory, found none",
                        line=number,
                    )
                )
            continue
        for error in schemas.validator("openprogram-provenance").errors(record["provenance"]):
            pointer = "/provenance" + error.pointer
            line_no, column = doc.position(pointer)
            findings.append(
                ss.PROVENANCE.finding(
                    file.path,
                    f"{error.message}; found {show(jp.value_or_none(record, pointer))}",
                    line=line_no,
                    column=column,
                    pointer=pointer,
                )
            )
    return findings
