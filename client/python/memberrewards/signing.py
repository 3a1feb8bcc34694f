"""Request signing, exactly as contract section 2 says.

canonical = X-MR-Timestamp as sent + "\\n" + METHOD + "\\n" + path as sent up
to "?" + "\\n" + lower-case hex SHA-256 of the raw body bytes; the signature is
"v1=" + hex HMAC-SHA256 of it, keyed with the secret string's ASCII bytes.
"""

import hashlib
import hmac
from datetime import datetime, timezone
from typing import Dict, Optional, Union

EMPTY_BODY_SHA256 = hashlib.sha256(b"").hexdigest()

BodyLike = Union[bytes, str, None]


def _body_bytes(body: BodyLike) -> bytes:
    if body is None:
        return b""
    return body.encode("utf-8") if isinstance(body, str) else body


def format_timestamp(when: Optional[datetime] = None) -> str:
    """RFC 3339 UTC to the millisecond, as the C++ client writes it: 2026-11-22T10:00:00.123Z.

    A POST's signature serves one idempotency key, so two calls with one body
    in one second must not sign the same timestamp."""
    when = when or datetime.now(timezone.utc)
    if when.tzinfo is None:
        raise ValueError("format_timestamp needs an aware datetime (naive times are ambiguous)")
    utc = when.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (utc.microsecond // 1000)


def canonical_string(timestamp: str, method: str, path_and_query: str, body: BodyLike = None) -> str:
    """The four lines the signature covers; the query string is not signed."""
    path = path_and_query.split("?", 1)[0]
    body_hash = hashlib.sha256(_body_bytes(body)).hexdigest()
    return "\n".join((timestamp, method.upper(), path, body_hash))


def sign(secret: str, canonical: str) -> str:
    """v1= + lower-case hex HMAC-SHA256; the secret is used as issued, not decoded."""
    mac = hmac.new(secret.encode("ascii"), canonical.encode("utf-8"), hashlib.sha256)
    return "v1=" + mac.hexdigest()


def signed_headers(key_id: str, secret: str, method: str, path_and_query: str, body: BodyLike = None,
                   timestamp: Optional[str] = None) -> Dict[str, str]:
    """X-MR-Key-Id, X-MR-Timestamp and X-MR-Signature for one request."""
    ts = timestamp if timestamp is not None else format_timestamp()
    return {
        "X-MR-Key-Id": key_id,
        "X-MR-Timestamp": ts,
        "X-MR-Signature": sign(secret, canonical_string(ts, method, path_and_query, body)),
    }
