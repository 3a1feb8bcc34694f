#!/usr/bin/python3
"""openapi_check.py <openapi.yaml> <mr-route-table>

Holds docs/openapi.yaml against the code's own tables, as mr-route-table
prints them (ledger/routes.cpp, ledger/errors.cpp):
- its paths and methods are exactly the router's (method, path template)
  pairs, with the same path parameters;
- ErrorCode lists exactly the code's error codes;
- every 4xx/5xx response of every operation names its codes (the enum of
  error.code), each of them a code whose HTTP status is that response's,
  and its description (the headline the reference page shows) names them;
- every operation declares what any request can get (400, 401, 405, 413,
  429, 500, 501, 503), a POST also the idempotency answers (409
  idempotency_in_progress, 422 duplicate_idempotency_conflict), an
  operation with an id in its path 400 for a malformed one; a 2xx has a
  body schema.
Prints every mismatch; exits 1 if there is one."""
import json
import subprocess
import sys

import openapi_lib as oa

EVERY = {"400": {"invalid_request"}, "401": {"unauthorized", "invalid_signature", "stale_timestamp"},
         "405": {"method_not_allowed"}, "413": {"payload_too_large"}, "429": {"rate_limited"},
         "500": {"internal_error"}, "501": {"not_implemented"}, "503": {"service_unavailable"}}
POST = {"409": {"idempotency_in_progress"}, "422": {"duplicate_idempotency_conflict"}}


def main(spec_path, route_table):
    doc = oa.load(spec_path)
    table = json.loads(subprocess.run([route_table], check=True, capture_output=True, text=True).stdout)
    problems = []

    router = {(r["method"], r["path"]) for r in table["routes"]}
    documented = {(m, p): op for m, p, op in oa.operations(doc)}
    for method, path in sorted(router - documented.keys()):
        problems.append(f"{method} {path}: the router serves it, openapi.yaml does not document it")
    for method, path in sorted(documented.keys() - router):
        problems.append(f"{method} {path}: documented, but the router has no such operation")

    status_of = {e["code"]: e["status"] for e in table["errors"]}
    declared = set(oa.resolve(doc, doc["components"]["schemas"]["ErrorCode"])["enum"])
    for code in sorted(status_of.keys() - declared):
        problems.append(f"ErrorCode lacks {code} (ledger/errors.cpp has it)")
    for code in sorted(declared - status_of.keys()):
        problems.append(f"ErrorCode lists {code}, which ledger/errors.cpp does not have")

    ids = set()
    for (method, path), op in sorted(documented.items()):
        name = f"{method} {path} ({op.get('operationId')})"
        if not op.get("operationId") or op["operationId"] in ids:
            problems.append(f"{name}: operationId missing or not unique")
        ids.add(op.get("operationId"))
        # Path parameters: every {name} of the template declared, nothing else.
        params = [oa.resolve(doc, p) for p in doc["paths"][path[len(oa.base_path(doc)):]].get("parameters", [])]
        params += [oa.resolve(doc, p) for p in op.get("parameters", [])]
        in_path = {p["name"] for p in params if p.get("in") == "path"}
        in_template = {seg[1:-1] for seg in path.split("/") if seg.startswith("{")}
        if in_path != in_template:
            problems.append(f"{name}: path parameters {sorted(in_path)}, template {sorted(in_template)}")
        responses = op.get("responses", {})
        want = dict(EVERY)
        if method == "POST":
            want.update(POST)
        for status, codes in want.items():
            got = oa.error_codes(doc, oa.response_schema(doc, responses[status])) if status in responses else None
            if got is None:
                problems.append(f"{name}: no {status} answer naming its codes")
            elif not codes <= set(got):
                problems.append(f"{name}: {status} lacks {sorted(codes - set(got))}")
        for status, response in responses.items():
            schema = oa.response_schema(doc, response)
            if status.startswith("2"):
                if schema is None:
                    problems.append(f"{name}: {status} has no application/json schema")
                continue
            codes = oa.error_codes(doc, schema)
            if not codes:
                problems.append(f"{name}: {status} names no error codes (enum of error.code)")
                continue
            headline = oa.resolve(doc, response).get("description", "")
            for code in codes:
                if code not in headline:
                    problems.append(f"{name}: {status}'s description does not name {code}")
                if code not in status_of:
                    problems.append(f"{name}: {status} names {code}, which is no error code")
                elif str(status_of[code]) != status:
                    problems.append(f"{name}: {code} is HTTP {status_of[code]}, listed under {status}")

    for p in problems:
        print(f"openapi_check: {p}")
    print(f"openapi_check: {len(documented)} operations, {len(router)} routes, {len(status_of)} error codes, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
