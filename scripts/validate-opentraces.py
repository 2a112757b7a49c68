#!/usr/bin/env python3
"""Validate opentraces JSONL against the official schema package, strictly.

Usage: validate-opentraces.py FILE.jsonl [FILE.jsonl ...]

Each line must
  - validate as `opentraces_schema.TraceRecord` in strict mode, both from
    the parsed object (`model_validate(obj, strict=True)`) and from the JSON
    text (`model_validate_json(line, strict=True)`): no coercion of strings
    into numbers or the like. The schema has no datetime or enum-class
    fields (timestamps are strings, choices are Literals), so the two agree;
    both run so that a future field where they differ is caught,
  - carry `schema_version` equal to the package's `SCHEMA_VERSION`, and
  - lose nothing: the models ignore unknown keys, so the record is dumped
    back (`exclude_unset`) and compared with the input; any key the model
    would drop, or value it would change, fails the line.

Exits 0 when every line of every file passes (and there is at least one
line), 1 otherwise, naming each failing line and why. Needs the package
installed: `pip install opentraces-schema==0.9.0`.
"""

import json
import sys

from opentraces_schema import SCHEMA_VERSION, TraceRecord
from pydantic import ValidationError


def differences(given, dumped, path="$"):
    """Paths where the dump differs from the input (dropped or changed)."""
    if isinstance(given, dict):
        if not isinstance(dumped, dict):
            return [f"{path}: became {type(dumped).__name__}"]
        out = []
        for key, value in given.items():
            if key not in dumped:
                out.append(f"{path}.{key}: dropped by the model (not in the schema)")
            else:
                out.extend(differences(value, dumped[key], f"{path}.{key}"))
        return out
    if isinstance(given, list):
        if not isinstance(dumped, list) or len(given) != len(dumped):
            return [f"{path}: list changed"]
        out = []
        for i, (a, b) in enumerate(zip(given, dumped)):
            out.extend(differences(a, b, f"{path}[{i}]"))
        return out
    if given != dumped or type(given) is bool and type(dumped) is not bool:
        return [f"{path}: {given!r} became {dumped!r}"]
    return []


def check_line(line):
    """Problems with one line; empty when it passes."""
    try:
        given = json.loads(line)
    except json.JSONDecodeError as e:
        return [f"not JSON: {e}"]
    try:
        record = TraceRecord.model_validate(given, strict=True)
        TraceRecord.model_validate_json(line, strict=True)
    except ValidationError as e:
        return [f"schema: {err['loc']}: {err['msg']}" for err in e.errors()]
    problems = []
    if given.get("schema_version") != SCHEMA_VERSION:
        problems.append(
            f"schema_version {given.get('schema_version')!r}, package is {SCHEMA_VERSION}"
        )
    dumped = record.model_dump(mode="json", exclude_unset=True)
    problems.extend(differences(given, dumped))
    return problems


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    lines = failed = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                lines += 1
                problems = check_line(line)
                if problems:
                    failed += 1
                    for p in problems:
                        print(f"{path}:{number}: {p}", file=sys.stderr)
    print(f"opentraces {SCHEMA_VERSION}: {lines} records, {failed} failed")
    if lines == 0:
        print("no records to validate", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
