"""schemathesis hooks of scripts/real-clients (SCHEMATHESIS_HOOKS): a
serializer for the manifest's `application/x-ndjson`, and the
constraints of the read API that span two parameters, which an OpenAPI
document cannot state, so that schema-valid requests are the ones the
server takes.

Each parameter alone is described exactly by the document (`since` and
`until`: a `pattern` of real dates in the years 1000 to 2999, as
`read::query` reads them). Across parameters (issue 45):

- given both, `until` must not come before `since` (else 400, as the
  document says in prose);
- `/api/v1/series` answers at most `MAX_PERIODS` = 260 weeks
  (`http::series`; else 400 naming the span), counted from the week of
  `since` (default: 11 weeks before the week of `until`) to the week of
  `until` (default: now).

A generated case that breaks one of these is dropped (`filter_case`, which
schemathesis applies in every phase, coverage included); a case whose
values do not parse is kept, and must be refused. Times are compared as
seconds from a fixed day, so the years Python's `datetime` cannot hold are
compared too.
"""

import re
import time

import schemathesis

MAX_WEEKS = 260  # http::series::MAX_PERIODS
NANOS = 1_000_000_000
_INSTANT = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})"
    r"(?:T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2})))?$"
)


def _days(y, m, d):
    """Days from 1970-01-01 of a proleptic Gregorian date (any year)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _nanos(value):
    """Nanoseconds from 1970-01-01T00:00:00Z, or None."""
    if not isinstance(value, str):
        return None
    m = _INSTANT.match(value)
    if not m:
        return None
    y, mo, d = int(m[1]), int(m[2]), int(m[3])
    t = _days(y, mo, d) * 86400
    if m[4] is not None:
        t += int(m[4]) * 3600 + int(m[5]) * 60 + int(m[6])
        if m[9]:
            offset = int(m[10]) * 3600 + int(m[11]) * 60
            t -= offset if m[9] == "+" else -offset
    return t * NANOS + int((m[7] or "").ljust(9, "0"))


def _week(nanos):
    """The week (Monday 00:00 UTC) holding `nanos`, counted from 1970's."""
    days = nanos // (86400 * NANOS)
    return (days + 3) // 7  # 1970-01-01 was a Thursday


def _query(case):
    query = getattr(case, "query", None)
    return query if isinstance(query, dict) else {}


@schemathesis.hook
def filter_case(context, case):
    query = _query(case)
    since, until = _nanos(query.get("since")), _nanos(query.get("until"))
    if since is not None and until is not None and until < since:
        return False
    if case.operation.path == "/api/v1/series":
        if ("since" in query and since is None) or ("until" in query and until is None):
            return True  # a value that does not parse: refused on its own
        end = until if until is not None else time.time_ns()
        last = _week(end - 1)
        first = _week(since) if since is not None else last - 11
        if last - first + 1 > MAX_WEEKS:
            return False
    return True


# A manifest is sent as `application/x-ndjson`: a generated string as it
# is (one JSON object a line, as the document's example), anything else as
# one JSON line.
@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    import json

    return (json.dumps(value) + "\n").encode("utf-8")
