"""The deltas' file-mode fixtures: a valid store and a table of broken ones, each with exactly
the findings ``continuity check --all`` reports for it (rule, path, line), and near-misses that
pass. The deltas tests run them; the schema tests hold both schema engines to the same answer on
every one."""

from __future__ import annotations

CHANGES = ".deltalayer/changes/"
NAME = "2026-09-21T16-20-00p08-00--agent.json"
GOOD = '{"started_at":"2026-09-21T16:20:00+08:00","updated_at":"2026-09-21T16:30:00+08:00","source":"agent","changes":["x"]}\n'
LEGACY_GOOD = '{"time":"2026-09-21T16:00:00+08:00","source":"human","changes":["a"]}\n'
PROJECT = {
    "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n",
    "PROJECT.md": "# Project\n",
}


def delta(text: str, name: str = NAME) -> dict[str, bytes | str]:
    return {**PROJECT, CHANGES + name: text}


def legacy(text: bytes | str) -> dict[str, bytes | str]:
    return {**PROJECT, ".deltalayer/changes.jsonl": text}


# (case id, files, expected (rule, path, line) findings — exactly these)
BAD: list[tuple[str, dict[str, bytes | str], list[tuple[str, str, int | None]]]] = [
    ("CC002 invalid utf-8", delta(GOOD.replace("x", "\udcff", 1).encode("utf-8", "surrogateescape")),
     [("CC002", CHANGES + NAME, 1)]),
    ("CC003 bom", delta("\ufeff" + GOOD), [("CC003", CHANGES + NAME, 1)]),
    ("CC004 syntax", delta('{"started_at":\n"2026-09-21T16:20:00+08:00",}\n'), [("CC004", CHANGES + NAME, 2)]),
    ("CC005 duplicate", delta(GOOD[:-2] + ',\n"source":"other"}\n'), [("CC005", CHANGES + NAME, 2)]),
    ("CC006 nan", delta(GOOD[:-2] + ',"n":\nNaN}\n'), [("CC006", CHANGES + NAME, 2)]),
    ("CC006 beyond a double", delta(GOOD[:-2] + ',"n":\n-1e400}\n'), [("CC006", CHANGES + NAME, 2)]),
    ("CC007 depth", delta(GOOD[:-2] + ',"n":' + "[" * 70 + "]" * 70 + "}\n"), [("CC007", CHANGES + NAME, 1)]),
    ("CC009 surrogate", delta(GOOD.replace('["x"]', '["\\ud800"]')), [("CC009", CHANGES + NAME, 1)]),
    ("CC004 integer past the digit limit", delta(GOOD[:-2] + ',"n":' + "7" * 5000 + "}\n"), [("CC004", CHANGES + NAME, 1)]),
    ("DL101 array", delta("[]\n"), [("DL101", CHANGES + NAME, 1)]),
    ("DL102 missing", delta('{"started_at":"2026-09-21T16:20:00+08:00","source":"agent","changes":[]}\n'),
     [("DL102", CHANGES + NAME, 1)]),
    ("DL103 naive", delta(GOOD.replace("16:30:00+08:00", "16:30:00")), [("DL103", CHANGES + NAME, 1)]),
    ("DL103 feb 30", delta(GOOD.replace("2026-09-21T16:30:00+08:00", "2026-02-30")), [("DL103", CHANGES + NAME, 1)]),
    ("DL104 source", delta(GOOD.replace('"agent"', '"  "')), [("DL104", CHANGES + NAME, 1)]),
    # blank as DeltaLayer's reader (Python's str.strip()) sees it, where JSON Schema's \\s does not
    ("DL104 source of separators", delta(GOOD.replace('"agent"', '"\\u001c\\u001f\\u0085"')),
     [("DL104", CHANGES + NAME, 1)]),
    ("DL105 changes string", delta(GOOD.replace('["x"]', '"x"')), [("DL105", CHANGES + NAME, 1)]),
    ("DL105 non-string item", delta(GOOD.replace('["x"]', '["x",\n2]')), [("DL105", CHANGES + NAME, 2)]),
    ("DL106 conversation_id", delta(GOOD[:-2] + ',"conversation_id":5}\n'), [("DL106", CHANGES + NAME, 1)]),
    ("DL107 empty change", delta(GOOD.replace('["x"]', '[" "]')), [("DL107", CHANGES + NAME, 1)]),
    ("DL107 change of separators", delta(GOOD.replace('["x"]', '["\\u001e"]')), [("DL107", CHANGES + NAME, 1)]),
    ("DL108 status", delta(GOOD[:-2] + ',"status":"done"}\n'), [("DL108", CHANGES + NAME, 1)]),
    ("DL109 updated before started", delta(GOOD.replace("16:30:00+08:00", "16:10:00+08:00")),
     [("DL109", CHANGES + NAME, 1)]),
    ("DL110 renamed", delta(GOOD, "2026-09-21T16-21-00p08-00--agent.json"),
     [("DL110", CHANGES + "2026-09-21T16-21-00p08-00--agent.json", None)]),
    ("DL110 other source", delta(GOOD.replace('"agent"', '"codex"')), [("DL110", CHANGES + NAME, None)]),
    ("DL111 twin", {**delta(GOOD), CHANGES + NAME.replace(".json", ".frozen.json"): GOOD},
     [("DL111", CHANGES + NAME, None)]),
    ("DL112 temp", {**delta(GOOD), CHANGES + "." + NAME + ".k3j2.tmp": GOOD[:20]},
     [("DL112", CHANGES + "." + NAME + ".k3j2.tmp", None)]),
    ("DL114 one directory too deep", {**PROJECT, CHANGES + "sub/" + NAME: GOOD}, [("DL114", CHANGES + "sub/" + NAME, None)]),
    ("DL113 pretty", delta(GOOD.replace(",", ", ")), [("DL113", CHANGES + NAME, 1)]),
    ("DL113 escaped non-ascii", delta(GOOD.replace('"x"', '"\\u00e9"')), [("DL113", CHANGES + NAME, 1)]),
    ("CC004 legacy line", legacy(LEGACY_GOOD + "\n{bad}\n" + LEGACY_GOOD), [("CC004", ".deltalayer/changes.jsonl", 3)]),
    ("DL103 legacy time", legacy(LEGACY_GOOD + LEGACY_GOOD.replace("+08:00", "")),
     [("DL103", ".deltalayer/changes.jsonl", 2)]),
    ("DL102 legacy missing time", legacy('{"source":"a","changes":[]}\r\n'), [("DL102", ".deltalayer/changes.jsonl", 1)]),
    ("DL121 torn", legacy(LEGACY_GOOD + LEGACY_GOOD[:30]), [("DL121", ".deltalayer/changes.jsonl", 2)]),
    ("DL122 no final newline", legacy(LEGACY_GOOD + LEGACY_GOOD[:-1]), [("DL122", ".deltalayer/changes.jsonl", 2)]),
    ("DL130 no marker", {**delta(GOOD), "AGENTS.md": "# Rules\n"}, [("DL130", "AGENTS.md", None)]),
    ("DL130 no AGENTS.md", {CHANGES + NAME: GOOD, "PROJECT.md": "# P\n"}, [("DL130", "AGENTS.md", None)]),
    ("DL131 no PROJECT.md", {CHANGES + NAME: GOOD, "AGENTS.md": PROJECT["AGENTS.md"]}, [("DL131", "PROJECT.md", None)]),
    ("DL132 two sections", {**delta(GOOD), "AGENTS.md": PROJECT["AGENTS.md"] + "\n<!-- deltalayer-conversation-v0.2 -->\n"},
     [("DL132", "AGENTS.md", 4)]),
]  # fmt: skip

GOOD_CASES: list[tuple[str, dict[str, bytes | str]]] = [
    ("plain", delta(GOOD)),
    ("empty changes, date-only times", delta(
        '{"started_at":"2026-09-21","updated_at":"2026-09-21","source":"human","changes":[]}\n',
        "2026-09-21--human.json")),
    ("collision suffix and frozen", delta(GOOD, NAME.replace(".json", "--12.frozen.json"))),
    ("Z normalised in the name", delta(GOOD.replace("16:20:00+08:00", "08:20:00Z"),
                                       "2026-09-21T08-20-00p00-00--agent.json")),
    ("unsafe source characters", delta(
        GOOD.replace('"agent"', '"Claude 3.5 (Sonnet)"'), "2026-09-21T16-20-00p08-00--Claude-3.5-Sonnet.json")),
    ("non-ascii source", delta(GOOD.replace('"agent"', '"人类"'), "2026-09-21T16-20-00p08-00--source.json")),
    ("7-digit fraction and null id", delta(
        '{"started_at":"2026-09-21T18:37:03.3760821+08:00","updated_at":"2026-09-21T18:37:03.3760821+08:00",'
        '"source":"agent","changes":["y"],"conversation_id":null}\n',
        "2026-09-21T18-37-03.376082p08-00--agent.json")),
    ("legacy crlf, blank lines, date-only, extra id",
     legacy(b'{"id":"d-1","time":"2026-09-21","source":"t","changes":["a"]}\r\n\r\n   \n' + LEGACY_GOOD.encode())),
    ("a zero-width no-break space is text to Python's strip()",
     delta(GOOD.replace('["x"]', '["\ufeff"]'))),
    ("words that look like constants", delta(GOOD.replace('["x"]', '["NaN handling and Infinity scroll stay"]'))),
    ("v0.2 marker counts", {**delta(GOOD), "AGENTS.md": "<!-- deltalayer-conversation-v0.2 -->\n"}),
    ("AGENTS.md without .deltalayer is not ours", {"AGENTS.md": "# nothing\n"}),
]  # fmt: skip
