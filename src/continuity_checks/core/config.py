"""Configuration: ``[tool.continuity]`` in pyproject.toml, or ``.continuity.toml``. Data only."""

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from continuity_checks.core.findings import Finding, Severity
from continuity_checks.core.globs import Globs
from continuity_checks.core.strict_json import DEFAULT_MAX_DEPTH, DEFAULT_MAX_FILE_BYTES

#: Keys of every configuration; each family adds a table of its own, named after it.
TOP_KEYS = ("families", "exclude", "limits", "rules", "ignore")
IGNORE_KEYS = ("rules", "paths", "reason")
LIMIT_KEYS = {"max-file-bytes", "max-depth", "max-findings-per-file", "max-findings"}
DEFAULT_MAX_FINDINGS_PER_FILE = 100
DEFAULT_MAX_FINDINGS = 1000


class ConfigError(Exception):
    """A configuration value that cannot be used; exit 2 with the key that is wrong."""

    def __init__(self, source: str, key: str, message: str) -> None:
        super().__init__(f"{source}: {key}: {message}")
        self.source = source
        self.key = key


class Ignore:
    """One ``[[ignore]]`` entry: findings of ``rules`` at ``paths`` (globs) are suppressed, for
    the ``reason`` recorded beside them. (A plain class: a ``NamedTuple`` class costs every
    command's start-up about 0.55 M instructions to make, a frozen dataclass more.)"""

    __slots__ = ("paths", "reason", "rules")

    def __init__(self, rules: frozenset[str], paths: tuple[str, ...], reason: str) -> None:
        self.rules = rules
        self.paths = paths
        self.reason = reason


class Config:
    """One run's configuration: where it came from (``source``), what it chooses and limits,
    per-rule severities (None: off), ``[[ignore]]`` entries and each family's table."""

    __slots__ = (
        "exclude",
        "families",
        "ignores",
        "max_depth",
        "max_file_bytes",
        "max_findings",
        "max_findings_per_file",
        "options",
        "severity",
        "source",
    )

    def __init__(
        self,
        source: str = "defaults",
        families: tuple[str, ...] | None = None,
        exclude: tuple[str, ...] = (),
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_findings_per_file: int = DEFAULT_MAX_FINDINGS_PER_FILE,
        max_findings: int = DEFAULT_MAX_FINDINGS,
        severity: dict[str, Severity | None] | None = None,
        ignores: tuple[Ignore, ...] = (),
        options: dict[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.source = source
        self.families = families
        self.exclude = exclude
        self.max_file_bytes = max_file_bytes
        self.max_depth = max_depth
        self.max_findings_per_file = max_findings_per_file
        self.max_findings = max_findings
        self.severity: dict[str, Severity | None] = {} if severity is None else severity
        self.ignores = ignores
        self.options: dict[str, Mapping[str, Any]] = {} if options is None else options

    def family_options(self, name: str) -> Mapping[str, Any]:
        return self.options.get(name, {})

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(self.source, key, message)


def project_root(start: Path) -> Path:
    """The top of the repository that contains ``start`` (the nearest directory upwards that
    holds ``.git``), or ``start`` itself outside a repository. Findings name files relative to
    it and its configuration applies, from whichever subdirectory a command runs. Found without
    running git: the commit hook pays for no process."""
    here = Path(os.path.abspath(start))
    for directory in (here, *here.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return here


def find(root: Path) -> tuple[str, Mapping[str, Any]] | None:
    """The configuration table that applies under ``root``: ``.continuity.toml`` wins over
    ``[tool.continuity]`` in ``pyproject.toml``."""
    dedicated = root / ".continuity.toml"
    if os.path.lexists(dedicated):  # whatever is there: a FIFO or a link out is refused
        return str(dedicated), _read(dedicated, confined=True)
    pyproject = root / "pyproject.toml"
    if os.path.lexists(pyproject):
        table = _read(pyproject, confined=True).get("tool", {}).get("continuity")
        if table is not None:
            if not isinstance(table, dict):
                raise ConfigError(str(pyproject), "tool.continuity", "expected a table")
            return f"{pyproject} [tool.continuity]", table
    return None


#: A configuration is a few hundred bytes; anything near this is not one.
MAX_CONFIG_BYTES = 1024 * 1024


def _read(path: Path, *, confined: bool = False) -> dict[str, Any]:
    """The TOML table of ``path``: a regular file of at most MAX_CONFIG_BYTES (a FIFO or a
    device, ``--config /dev/zero``, is refused at once, never read). ``confined``: the file
    found at the top of the repository, refused when it leads outside it; a file named with
    ``--config`` is read wherever it leads (docs/decisions.md, "Files named on the command
    line")."""
    from continuity_checks.core.confined_files import ConfinedFiles, Refused

    if confined:
        files, at = ConfinedFiles(path.parent, MAX_CONFIG_BYTES), str(path)
    else:
        files, at = ConfinedFiles.named(path, MAX_CONFIG_BYTES)
    try:
        data = files.read(at)
    except Refused as exc:
        raise ConfigError(str(path), "(file)", exc.reason) from None
    except OSError as exc:
        raise ConfigError(str(path), "(file)", f"cannot read TOML: {exc}") from None
    return toml(data, str(path))


def toml(data: bytes, source: str) -> dict[str, Any]:
    """The TOML table of ``data`` (at most MAX_CONFIG_BYTES), named ``source`` in errors."""
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            source, "(file)", f"expected at most {MAX_CONFIG_BYTES} bytes, found more"
        )
    # imported here: most runs (every commit hook in a repository without a configuration
    # file) read no TOML, and the parser is about 2 ms of the hook's start
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        table: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(source, "(file)", f"cannot read TOML: {exc}") from None
    return table


#: The files a configuration can come from, in order of precedence, at the repository's top.
FILES = (".continuity.toml", "pyproject.toml")


def table_in(name: str, data: bytes, source: str) -> Mapping[str, Any] | None:
    """The configuration table in the bytes of one of :data:`FILES` (None: a pyproject.toml
    without ``[tool.continuity]``)."""
    table = toml(data, source)
    if name != "pyproject.toml":
        return table
    found = table.get("tool", {}).get("continuity")
    if found is not None and not isinstance(found, dict):
        raise ConfigError(source, "tool.continuity", "expected a table")
    return found


def from_files(files: Mapping[str, bytes], label: str, known: "Known") -> Config:
    """The configuration that the :data:`FILES` of a tree give (``files``: the ones that exist,
    with their bytes), with the precedence of :func:`find`; ``label`` names the tree."""
    for name in FILES:
        if name in files:
            source = f"{label}:{name}"
            table = table_in(name, files[name], source)
            if table is not None:
                suffix = " [tool.continuity]" if name == "pyproject.toml" else ""
                return parse(source + suffix, table, known)
    return Config(source=f"{label} (no configuration)")


class Known:
    """What a configuration may name: the families of this version and its rule ids (asked
    only for the ids a configuration overrides). Given by the caller: core knows no family.
    (A plain class: made once a run.)"""

    __slots__ = ("families", "rule")

    def __init__(self, families: Sequence[str], rule: Callable[[str], bool]) -> None:
        self.families = families
        self.rule = rule


def load(root: Path, known: Known, explicit: Path | None = None) -> Config:
    if explicit is not None:
        data: Mapping[str, Any] = _read(explicit)
        if explicit.name == "pyproject.toml":
            data = data.get("tool", {}).get("continuity", {})
        found: tuple[str, Mapping[str, Any]] | None = (str(explicit), data)
    else:
        found = find(root)
    if found is None:
        return Config()
    return parse(*found, known)


def strings(source: str, key: str, value: object, what: str = "strings") -> tuple[str, ...]:
    """``value`` as every list-of-strings option must be (globs, names, identities): a list of
    strings, none empty or blank (an empty glob matches nothing, a blank identity is nobody: a
    user's mistake). Else a :class:`ConfigError` naming ``key`` (in ``source``) and the value."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(
            source, key, f"expected a list of {what}, none empty or blank, found {value!r}"
        )
    return tuple(value)


def _positive_int(source: str, key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(source, key, f"expected a positive integer, found {value!r}")
    return value


def parse(source: str, table: Mapping[str, Any], known: Known) -> Config:
    config = Config(source=source)
    keys = (*TOP_KEYS, *known.families)
    for key in table:
        if key not in keys:
            raise ConfigError(
                source, key, f"unknown key; expected one of {', '.join(sorted(keys))}"
            )
    if "families" in table:
        families = strings(source, "families", table["families"])
        for name in families:
            if name not in known.families:
                raise ConfigError(
                    source,
                    "families",
                    f"unknown family {name!r}; expected {', '.join(known.families)}",
                )
        config.families = families
    if "exclude" in table:
        config.exclude = strings(source, "exclude", table["exclude"])
    limits = table.get("limits", {})
    if not isinstance(limits, dict):
        raise ConfigError(source, "limits", "expected a table")
    for key in limits:
        if key not in LIMIT_KEYS:
            raise ConfigError(
                source, f"limits.{key}", f"unknown limit; expected {', '.join(sorted(LIMIT_KEYS))}"
            )
    if "max-file-bytes" in limits:
        config.max_file_bytes = _positive_int(
            source, "limits.max-file-bytes", limits["max-file-bytes"]
        )
    if "max-depth" in limits:
        config.max_depth = _positive_int(source, "limits.max-depth", limits["max-depth"])
    if "max-findings-per-file" in limits:
        config.max_findings_per_file = _positive_int(
            source, "limits.max-findings-per-file", limits["max-findings-per-file"]
        )
    if "max-findings" in limits:
        config.max_findings = _positive_int(source, "limits.max-findings", limits["max-findings"])
    rules = table.get("rules", {})
    if not isinstance(rules, dict):
        raise ConfigError(source, "rules", 'expected a table of RULE = "error" | "warning" | "off"')
    for rule_id, level in rules.items():
        if not known.rule(rule_id):
            raise ConfigError(
                source, f"rules.{rule_id}", "unknown rule id (see `continuity rules`)"
            )
        if level not in ("error", "warning", "off"):
            raise ConfigError(
                source, f"rules.{rule_id}", f'expected "error", "warning" or "off", found {level!r}'
            )
        config.severity[rule_id] = None if level == "off" else Severity(level)
    if "ignore" in table:
        config.ignores = _ignores(source, table["ignore"], known)
    for name in known.families:
        if name in table:
            options = table[name]
            if not isinstance(options, dict):
                raise ConfigError(source, name, "expected a table of options")
            config.options[name] = options
    return config


def _ignores(source: str, value: object, known: Known) -> tuple[Ignore, ...]:
    """The ``[[ignore]]`` array of tables: each names its rules, its paths and why."""
    shape = 'an array of tables [[ignore]] with rules = [...], paths = [...], reason = "..."'
    if not isinstance(value, list):
        raise ConfigError(source, "ignore", f"expected {shape}")
    found = []
    for index, entry in enumerate(value):
        key = f"ignore[{index}]"
        if not isinstance(entry, dict):
            raise ConfigError(source, key, f"expected {shape}")
        for name in entry:
            if name not in IGNORE_KEYS:
                raise ConfigError(
                    source, f"{key}.{name}", f"unknown key; expected {', '.join(IGNORE_KEYS)}"
                )
        for name in IGNORE_KEYS:
            if name not in entry:
                raise ConfigError(source, f"{key}.{name}", "missing; every ignore needs it")
        rules = strings(source, f"{key}.rules", entry["rules"])
        paths = strings(source, f"{key}.paths", entry["paths"])
        if not rules or not paths:
            raise ConfigError(
                source, f"{key}.{'rules' if not rules else 'paths'}", "expected at least one"
            )
        for rule_id in rules:
            if not known.rule(rule_id):
                raise ConfigError(
                    source, f"{key}.rules", f"unknown rule id {rule_id!r} (see `continuity rules`)"
                )
        for pattern in paths:
            if not pattern.strip("/"):
                raise ConfigError(source, f"{key}.paths", f"expected a glob, found {pattern!r}")
        reason = entry["reason"]
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(
                source, f"{key}.reason", "expected a non-empty string: why the rule does not apply"
            )
        found.append(Ignore(frozenset(rules), paths, reason.strip()))
    return tuple(found)


def apply_config(config: Config, findings: Iterable[Finding]) -> tuple[list[Finding], int]:
    """The configuration's say on findings: ``[[ignore]]`` entries suppress the findings of
    their rules at their paths (counted: the second value), then per-rule severity overrides
    apply (``off`` drops the finding)."""
    ignores = [(i.rules, Globs(i.paths)) for i in config.ignores]
    result = []
    suppressed = 0
    for finding in findings:
        if ignores and any(finding.rule in r and g.match(finding.path) for r, g in ignores):
            suppressed += 1
            continue
        if finding.rule in config.severity:
            level = config.severity[finding.rule]
            if level is None:
                continue
            finding = finding.with_severity(level)
        result.append(finding)
    return result, suppressed
