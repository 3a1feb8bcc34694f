#!/usr/bin/python3
"""openapi_answers.py <openapi.yaml> <answers dir>

Checks every answer the partner-facing integration tests received (the
client library records them when MR_RECORD_ANSWERS names a folder: one JSON
line each, see client/mr_client.cpp) against docs/openapi.yaml:
- a path under /api/ is matched to its template as the router matches it;
- the status must be one the operation declares; a method the path does
  not serve may get only 405 or what any request can get before routing
  (400, 401, 413, 429, 5xx, on a POST the idempotency answers); a path no
  operation has only 404 not_found or those;
- the body must be JSON valid against the response's schema (failures:
  error.code one of the codes that response names), with Content-Type
  application/json, an X-Request-Id of 32 hex digits, Retry-After on
  rate_limited, service_unavailable and idempotency_in_progress, and
  X-MR-Idempotent-Replay only where the response declares it.
Answers outside /api/ (the ops listener, /docs/) are counted, not checked.
Every operation must have had at least one 2xx answer checked. Prints each
mismatch (the first 50) and a summary; exits 1 on any mismatch."""
import collections
import glob
import json
import os
import re
import sys

import jsonschema

import openapi_lib as oa

EDGE = {"400": "BadRequest", "401": "Unauthorized", "413": "PayloadTooLarge", "429": "RateLimited",
        "500": "InternalError", "501": "NotImplemented", "503": "Unavailable"}
EDGE_POST = {"409": "IdempotencyInProgress", "422": "IdempotencyKeyReused"}
RETRY_AFTER = {"rate_limited", "service_unavailable", "idempotency_in_progress"}
REQUEST_ID = re.compile(r"[0-9a-f]{32}\Z")


def main(spec_path, answers_dir):
    doc = oa.load(spec_path)
    resolver = jsonschema.RefResolver.from_schema(doc)
    ops = list(oa.operations(doc))
    templates = {}
    for method, path, op in ops:
        templates.setdefault(path, {})[method] = op
    matchers = [(oa.template_regex(path), path) for path in templates]
    not_found = {"description": "not_found", "content": {"application/json": {"schema": {
        "$ref": "#/components/schemas/Failure",
        "properties": {"error": {"properties": {"code": {"enum": ["not_found"]}}}}}}}}

    def response_for(method, path, status):
        """(label, response) the answer must match, or (label, None)."""
        found = [t for rx, t in matchers if rx.match(path)]
        if len(found) > 1:
            raise ValueError(f"{path} matches {found}")
        edge = {s: doc["components"]["responses"][n] for s, n in EDGE.items()}
        if method == "POST":
            edge.update({s: doc["components"]["responses"][n] for s, n in EDGE_POST.items()})
        if not found:
            label = f"{method} (no operation's path)"
            return label, not_found if status == "404" else edge.get(status)
        template = found[0]
        op = templates[template].get(method)
        if op is None:
            label = f"{method} {template} (not served)"
            served = next(iter(templates[template].values()))["responses"]
            if status == "405":
                return label, served.get("405")
            if status == "404" and "not_found" in (oa.error_codes(doc, oa.response_schema(doc, served.get("404", {}))) or []):
                return label, not_found  # the path itself may not exist (the test helper outside a sandbox)
            return label, edge.get(status)
        return f"{method} {template}", op["responses"].get(status)

    counts = collections.Counter()
    problems = []
    seen_ok = set()
    files = sorted(glob.glob(os.path.join(answers_dir, "*.jsonl")))
    for file in files:
        with open(file, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                where = f"{os.path.basename(file)}:{n}"
                try:
                    a = json.loads(line)
                except ValueError as e:
                    problems.append(f"{where}: not a JSON line ({e})")
                    continue
                method, path, status = a["method"], a["path"], str(a["status"])
                if not path.startswith("/api/"):
                    counts["outside /api/ (not checked)"] += 1
                    continue
                label, response = response_for(method, path, status)
                counts[f"{label} {status}"] += 1
                what = f"{where}: {method} {path} -> {status}"
                if response is None:
                    problems.append(f"{what}: {label} does not declare {status}")
                    continue
                response = oa.resolve(doc, response)
                headers = a.get("headers", {})
                if not REQUEST_ID.match(headers.get("x-request-id", "")):
                    problems.append(f"{what}: X-Request-Id {headers.get('x-request-id')!r}")
                if "x-mr-idempotent-replay" in headers and "X-MR-Idempotent-Replay" not in response.get("headers", {}):
                    problems.append(f"{what}: X-MR-Idempotent-Replay on an answer that does not declare it")
                if method == "HEAD":
                    continue  # no body
                if not headers.get("content-type", "").startswith("application/json"):
                    problems.append(f"{what}: Content-Type {headers.get('content-type')!r}")
                if a.get("bodyNotUtf8"):
                    problems.append(f"{what}: the body is not UTF-8")
                    continue
                try:
                    body = json.loads(a["body"])
                except ValueError:
                    problems.append(f"{what}: the body is not JSON: {a['body'][:200]!r}")
                    continue
                schema = oa.response_schema(doc, response)
                if schema is None:
                    problems.append(f"{what}: {label} {status} declares no JSON schema")
                    continue
                errors = sorted(jsonschema.Draft202012Validator(schema, resolver=resolver).iter_errors(body),
                                key=lambda e: list(e.absolute_path))
                for e in errors[:3]:
                    at = "/".join(str(p) for p in e.absolute_path) or "(body)"
                    problems.append(f"{what}: {label}: at {at}: {e.message[:300]}")
                code = body.get("error", {}).get("code") if isinstance(body, dict) else None
                if code in RETRY_AFTER and not headers.get("retry-after"):
                    problems.append(f"{what}: {code} without Retry-After")
                if not errors and status.startswith("2"):
                    seen_ok.add(label)

    unchecked = sorted(f"{m} {p}" for m, p, _ in ops if f"{m} {p}" not in seen_ok)
    for label in unchecked:
        problems.append(f"{label}: no 2xx answer was recorded and checked")
    for line, n in sorted(counts.items()):
        print(f"openapi_answers: {n:6d}  {line}")
    for p in problems[:50]:
        print(f"openapi_answers: {p}")
    if len(problems) > 50:
        print(f"openapi_answers: ... and {len(problems) - 50} more")
    total = sum(counts.values())
    print(f"openapi_answers: {total} answers in {len(files)} files, {len(problems)} problems")
    return 1 if problems or total == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
