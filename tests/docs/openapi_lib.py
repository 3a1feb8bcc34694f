"""docs/openapi.yaml as the checks read it: operations, responses and the
error codes each failure response names (the enum of its error.code).
Shared by openapi_check.py and openapi_answers.py; Debian's python3-yaml."""
import re

import yaml

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def resolve(doc, node):
    """Follows a local $ref (with no siblings of its own) to what it names."""
    while isinstance(node, dict) and "$ref" in node and len(node) == 1:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"not a local reference: {ref}")
        node = doc
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def base_path(doc):
    """The servers' path prefix, e.g. /api/v1 of {base_url}/api/v1."""
    url = doc["servers"][0]["url"]
    return re.sub(r"^(\{[^}]*\}|[a-z]+://[^/]*)", "", url).rstrip("/")


def operations(doc):
    """(METHOD, full path template, operation) for every operation."""
    prefix = base_path(doc)
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), prefix + path, item[method]


def response_schema(doc, response):
    response = resolve(doc, response)
    content = response.get("content", {}).get("application/json")
    return None if content is None else content.get("schema")


def error_codes(doc, schema):
    """The enum of error.code a failure schema narrows to; None if none."""
    schema = resolve(doc, schema) if schema is not None else None
    try:
        return list(schema["properties"]["error"]["properties"]["code"]["enum"])
    except (KeyError, TypeError):
        return None


def template_regex(template):
    """A path template as the router matches it (ledger/routes.cpp): a
    {name} segment is any segment but an empty last one."""
    parts = template.strip("/").split("/")
    out = ""
    for i, part in enumerate(parts):
        if part.startswith("{"):
            out += "/[^/]+" if i == len(parts) - 1 else "/[^/]*"
        else:
            out += "/" + re.escape(part)
    return re.compile(out + r"\Z")
