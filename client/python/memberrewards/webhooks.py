"""Verifying the service's webhooks (Standard Webhooks v1, contract section 10).

Each delivery carries webhook-id (the event id), webhook-timestamp (Unix
seconds) and webhook-signature: one or more space-separated "v1,<base64>"
signatures (two while the endpoint's secret is being rotated), each an
HMAC-SHA256 of "{id}.{timestamp}.{body}" keyed with the base64-decoded part
of the secret after "whsec_".
"""

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import List, Mapping, Optional, Sequence, Union

from .models import Event, decode

DEFAULT_TOLERANCE_SECONDS = 300

# WebhookVerificationError.reason values (shared with the other SDKs and client/test-vectors.json).
MISSING_HEADER = "missing_header"
INVALID_TIMESTAMP = "invalid_timestamp"
TIMESTAMP_OUT_OF_TOLERANCE = "timestamp_out_of_tolerance"
NO_MATCHING_SIGNATURE = "no_matching_signature"
INVALID_SECRET = "invalid_secret"
INVALID_PAYLOAD = "invalid_payload"


class WebhookVerificationError(Exception):
    """The delivery is not proven to come from the service: do not act on it (answer 400)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _secret_key(secret: str) -> bytes:
    raw = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WebhookVerificationError(INVALID_SECRET, "the webhook secret is not whsec_ + base64") from exc


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    value = headers.get(name)
    if value is None:
        for key, v in headers.items():
            if key.lower() == name:
                value = v
                break
    return value if value else None


class Webhook:
    """The verifier of one endpoint's deliveries, in the Standard Webhooks libraries' shape.

        webhook = Webhook(secret)                   # "whsec_...", or a list while a rotation rolls out
        event = webhook.verify(raw_body, headers)   # raises WebhookVerificationError

    secret: the endpoint's secret (shown once, in the answers of create and
    rotate-secret), or several: any one matching passes.
    tolerance: the largest distance in seconds between webhook-timestamp and now.
    """

    def __init__(self, secret: Union[str, Sequence[str]], tolerance: float = DEFAULT_TOLERANCE_SECONDS) -> None:
        secrets: List[str] = [secret] if isinstance(secret, str) else list(secret)
        if not secrets:
            raise WebhookVerificationError(INVALID_SECRET, "no webhook secret given")
        self._keys: List[bytes] = [_secret_key(s) for s in secrets]
        self.tolerance = tolerance

    def sign(self, msg_id: str, timestamp: int, payload: Union[bytes, str]) -> str:
        """The "v1,<base64>" signature the service sends, with the first secret (for a receiver's tests)."""
        body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
        signed = msg_id.encode("utf-8") + b"." + str(timestamp).encode("ascii") + b"." + body
        return "v1," + base64.b64encode(hmac.new(self._keys[0], signed, hashlib.sha256).digest()).decode("ascii")

    def verify(self, payload: Union[bytes, str], headers: Mapping[str, str], *, now: Optional[float] = None) -> Event:
        """Checks one delivery and returns its event.

        payload: the raw request body exactly as received (not re-serialised JSON).
        headers: the request headers (any mapping; names matched case-insensitively).
        now: the clock in Unix seconds, for tests.
        Raises WebhookVerificationError; compares in constant time; only v1 signatures count.
        """
        body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
        msg_id = _header(headers, "webhook-id")
        ts_text = _header(headers, "webhook-timestamp")
        sig_header = _header(headers, "webhook-signature")
        if msg_id is None or ts_text is None or sig_header is None:
            raise WebhookVerificationError(MISSING_HEADER,
                                           "webhook-id, webhook-timestamp and webhook-signature are required")
        if not ts_text.isascii() or not ts_text.isdigit():
            raise WebhookVerificationError(INVALID_TIMESTAMP, "webhook-timestamp is not Unix seconds")
        ts = int(ts_text)
        current = time.time() if now is None else now
        if ts < current - self.tolerance or ts > current + self.tolerance:
            raise WebhookVerificationError(TIMESTAMP_OUT_OF_TOLERANCE,
                                           "webhook-timestamp is more than %g s from now" % self.tolerance)

        signed = msg_id.encode("utf-8") + b"." + ts_text.encode("ascii") + b"." + body
        expected = [hmac.new(k, signed, hashlib.sha256).digest() for k in self._keys]
        matched = False
        for candidate in sig_header.split(" "):
            version, _, b64 = candidate.partition(",")
            if version != "v1" or not b64:
                continue
            try:
                given = base64.b64decode(b64, validate=True)
            except (binascii.Error, ValueError):
                continue
            for mac in expected:
                # No early exit: every candidate is compared against every key.
                matched |= hmac.compare_digest(given, mac)
        if not matched:
            raise WebhookVerificationError(NO_MATCHING_SIGNATURE, "no v1 signature matches the webhook secret")
        try:
            parsed = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise WebhookVerificationError(INVALID_PAYLOAD, "the signed body is not JSON") from exc
        if not isinstance(parsed, dict):
            raise WebhookVerificationError(INVALID_PAYLOAD, "the signed body is not a JSON object")
        return decode(Event, parsed, lenient=True)
