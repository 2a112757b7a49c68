"""schemathesis hooks of scripts/real-clients (SCHEMATHESIS_HOOKS): a
serializer for the manifest's `application/x-ndjson`, and the
constraints of the read API that span two parameters, which an OpenAPI
document cannot state, so that schema-valid requests are the ones the
server takes.

`since` and `until` are each a date or an RFC 3339 instant; given both,
`until` must not come before `since` (else 400, as documented). A generated
query with both, in the wrong order, is dropped; values that do not parse
(negative cases) are kept, and must be refused.
"""

from datetime import date, datetime, timezone

import schemathesis


def _instant(value):
    if not isinstance(value, str):
        return None
    try:
        if "T" in value:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        return datetime.combine(date.fromisoformat(value), datetime.min.time(), tzinfo=timezone.utc)
    except ValueError:
        return None


@schemathesis.hook
def filter_query(context, query):
    if not isinstance(query, dict):
        return True
    since, until = _instant(query.get("since")), _instant(query.get("until"))
    return since is None or until is None or until >= since


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

