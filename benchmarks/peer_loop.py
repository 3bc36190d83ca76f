"""The peer of ``check --all`` that does least: every ``*.json`` file of a directory read, parsed
with ``orjson`` and validated with ``jsonschema_rs`` (formats on), in one loop. No positions, no
duplicate keys, no file names: the floor of a schema check in Python (bench_budget.py)::

    python benchmarks/peer_loop.py SCHEMA DIRECTORY
"""

from __future__ import annotations

import os
import sys

import jsonschema_rs
import orjson


def main() -> int:
    schema_path, directory = sys.argv[1:3]
    with open(schema_path, "rb") as handle:
        validator = jsonschema_rs.validator_for(orjson.loads(handle.read()), validate_formats=True)
    invalid = 0
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.endswith(".json"):
                with open(entry.path, "rb") as handle:
                    if not validator.is_valid(orjson.loads(handle.read())):
                        invalid += 1
    print(f"{invalid} invalid")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
