"""The Member Rewards partner API client."""

import email.utils
import http.client
import json
import os
import random
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Type, TypeVar, Union
from urllib.parse import quote, urlsplit

from . import __version__
from .constants import PayoutOutcomeName
from .errors import MemberRewardsConnectionError, MemberRewardsError
from .models import (Balance, Club, ClosedMember, DeletedWebhookEndpoint, DeliveriesPage, Event, EventsPage, FieldProblem, LedgerEntry,
                     MemberInput, MemberResult, PointsPage, Redemption, RedemptionAccepted, RedemptionRequest,
                     RedemptionsPage, ReplayResult, ResponseShapeError, ReverseRequest, ReversedResult,
                     SettledResult, SettleRequest, TransactionEntry, TransactionsPage, WebhookDelivery,
                     WebhookEndpoint, WebhookEndpointList, decode, encode, format_request_time)
from .signing import signed_headers

T = TypeVar("T")

# 409 with this code, 429 and 503 are answers worth retrying (with the same idempotency key).
_RETRY_STATUSES = (429, 503)
_RETRY_CONFLICT = "idempotency_in_progress"


@dataclass
class RetryPolicy:
    """Retries of one logical call: exponential backoff with jitter, Retry-After honoured.

    max_retries: retries after the first attempt (0 disables retrying);
    base_delay / max_delay: the backoff before retry n is drawn from
    [d/2, d] with d = min(max_delay, base_delay * 2**n); a Retry-After is
    waited in full (plus a little jitter), unless it exceeds max_retry_after:
    then the error is raised at once.
    """
    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A signature covers one path: a redirect is answered, never followed.
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


def _segment(value: str) -> str:
    """One path segment, percent-encoded (the encoded form is what gets signed).

    An id the API cannot take (not 1-128 printable ASCII characters) or one a
    URL resolver would fold ("." or "..") is refused before anything is sent,
    so an empty id never becomes a request to another path.
    """
    if (not isinstance(value, str) or not 1 <= len(value) <= 128
            or any(not " " <= ch <= "~" for ch in value) or value in (".", "..")):
        raise MemberRewardsError("%r is no id: 1-128 printable ASCII characters, not \".\" or \"..\"" % (value,),
                                 code="invalid_argument", status=0)
    return quote(value, safe="")


def _query(params: Sequence[Tuple[str, Any]]) -> str:
    parts = []
    for name, value in params:
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = ",".join(value)
        parts.append(quote(name, safe="") + "=" + quote(str(value), safe=","))
    return "&".join(parts)


def _retry_after(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


class Client:
    """Signs, sends, retries and decodes every call of the partner API.

    One method per endpoint; each POST gets an idempotency key (a UUID4, or
    the one you pass) that all its retries reuse, so a call is applied once.
    Failures raise MemberRewardsError.
    """

    def __init__(self, base_url: str, key_id: str, key_secret: str, partner_ref: str, *,
                 timeout: float = 30.0, retry: Optional[RetryPolicy] = None,
                 sleep: Callable[[float], None] = time.sleep, rng: Optional[random.Random] = None,
                 user_agent: Optional[str] = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("base_url must be an http(s) URL, e.g. https://sandbox.example.com")
        self.base_url = base_url.rstrip("/")
        self._path_prefix = parts.path.rstrip("/")
        self.key_id = key_id
        self._secret = key_secret
        self.partner_ref = partner_ref
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.user_agent = user_agent or "memberrewards-python/%s" % __version__
        self._opener = urllib.request.build_opener(_NoRedirect)

    @classmethod
    def from_env(cls, **kwargs: Any) -> "Client":
        """A client from MR_BASE_URL, MR_KEY_ID, MR_KEY_SECRET and MR_PARTNER_REF."""
        try:
            return cls(os.environ["MR_BASE_URL"], os.environ["MR_KEY_ID"], os.environ["MR_KEY_SECRET"],
                       os.environ["MR_PARTNER_REF"], **kwargs)
        except KeyError as missing:
            raise ValueError("environment variable %s is not set" % missing) from None

    # ---- transport ----

    def _send(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes]) -> Tuple[int, Any, bytes]:
        req = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as answered:
            with answered:
                return answered.code, answered.headers, answered.read()

    def _backoff(self, retry_number: int) -> float:
        cap = min(self.retry.max_delay, self.retry.base_delay * (2 ** retry_number))
        return cap / 2 + self._rng.uniform(0, cap / 2)

    def _call(self, method: str, path: str, *, query: Sequence[Tuple[str, Any]] = (), body: Any = None,
              idempotency_key: Optional[str] = None) -> Any:
        """One logical call: signs each attempt afresh, retries, returns (`data`, replayed) or raises."""
        signed_path = self._path_prefix + path
        qs = _query(query)
        url = self.base_url + path + ("?" + qs if qs else "")
        payload: Optional[bytes] = None
        if method == "POST":
            # Serialised once: the bytes signed are the bytes sent, on every attempt.
            payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            idempotency_key = idempotency_key or str(uuid.uuid4())
        retries = 0
        while True:
            headers = signed_headers(self.key_id, self._secret, method, signed_path, payload or b"")
            headers["Accept"] = "application/json"
            headers["User-Agent"] = self.user_agent
            if payload is not None:
                headers["Content-Type"] = "application/json"
                headers["X-MR-Idempotency-Key"] = idempotency_key  # type: ignore[assignment]
            try:
                status, resp_headers, raw = self._send(method, url, headers, payload)
            except (OSError, http.client.HTTPException) as exc:
                if retries < self.retry.max_retries:
                    self._sleep(self._backoff(retries))
                    retries += 1
                    continue
                raise MemberRewardsConnectionError(
                    "no answer from %s %s after %d attempts: %s" % (method, url, retries + 1, exc),
                    idempotency_key) from exc

            error, data = self._outcome(status, resp_headers, raw)
            if error is None:
                return data, resp_headers is not None and resp_headers.get("X-MR-Idempotent-Replay") == "true"
            retryable = status in _RETRY_STATUSES or (status == 409 and error.code == _RETRY_CONFLICT)
            if retryable and retries < self.retry.max_retries:
                if error.retry_after is not None:
                    if error.retry_after > self.retry.max_retry_after:
                        raise error
                    delay = error.retry_after + self._rng.uniform(0, self.retry.base_delay / 2)
                else:
                    delay = self._backoff(retries)
                self._sleep(delay)
                retries += 1
                continue
            raise error

    @staticmethod
    def _outcome(status: int, headers: Any, raw: bytes) -> Tuple[Optional[MemberRewardsError], Any]:
        """(None, data) for a success envelope, else (the error the answer stands for, None)."""
        request_id = headers.get("X-Request-Id") if headers is not None else None
        retry_after = _retry_after(headers.get("Retry-After")) if headers is not None else None
        replay = (headers.get("X-MR-Idempotent-Replay") == "true") if headers is not None else False
        try:
            envelope = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            envelope = None
        if isinstance(envelope, dict):
            if envelope.get("ok") is True and 200 <= status < 300 and "data" in envelope:
                return None, envelope["data"]
            err = envelope.get("error")
            if isinstance(err, dict) and isinstance(err.get("code"), str):
                details = [FieldProblem(str(d.get("field", "")), str(d.get("problem", "")))
                           for d in err.get("details") or [] if isinstance(d, dict)]
                return MemberRewardsError(str(err.get("message", "")), code=err["code"], status=status,
                                          request_id=err.get("requestId") or request_id, details=details,
                                          redemption_id=err.get("redemptionId"), retry_after=retry_after,
                                          idempotent_replay=replay), None
        return MemberRewardsError("unexpected answer (HTTP %d, not the API's JSON envelope)" % status,
                                  code="unexpected_response", status=status, request_id=request_id,
                                  retry_after=retry_after), None

    def _typed(self, cls: Type[T], answer: Tuple[Any, bool]) -> T:
        data, replayed = answer
        try:
            typed = decode(cls, data)
            if replayed and hasattr(typed, "idempotent_replay"):
                typed.idempotent_replay = True  # type: ignore[attr-defined]
            return typed
        except ResponseShapeError as exc:
            raise MemberRewardsError("the answer does not have the documented shape: %s" % exc,
                                     code="invalid_response", status=200) from exc

    def _post(self, cls: Type[T], path: str, body: Dict[str, Any], idempotency_key: Optional[str]) -> T:
        full = {"partnerRef": self.partner_ref}
        full.update(body)
        return self._typed(cls, self._call("POST", path, body=full, idempotency_key=idempotency_key))

    def _get(self, cls: Type[T], path: str, query: Sequence[Tuple[str, Any]] = ()) -> T:
        return self._typed(cls, self._call("GET", path, query=query))

    # ---- members ----

    def upsert_member(self, member: MemberInput, *, idempotency_key: Optional[str] = None) -> MemberResult:
        """POST /api/v1/members: creates (status "created") or updates ("updated") a member."""
        return self._post(MemberResult, "/api/v1/members", {"member": encode(member)}, idempotency_key)

    def close_member(self, external_member_id: str, reason: Optional[str] = None, *,
                     idempotency_key: Optional[str] = None) -> ClosedMember:
        """POST /api/v1/members/{id}/close: the available balance goes back to the club's pool."""
        body = {} if reason is None else {"reason": reason}
        return self._post(ClosedMember, "/api/v1/members/%s/close" % _segment(external_member_id), body,
                          idempotency_key)

    def get_balance(self, external_member_id: str) -> Balance:
        """GET /api/v1/members/{id}/balance."""
        return self._get(Balance, "/api/v1/members/%s/balance" % _segment(external_member_id))

    def list_points(self, external_member_id: str, *, filter: Optional[str] = None, limit: Optional[int] = None,
                    before: Optional[int] = None) -> PointsPage:
        """GET /api/v1/members/{id}/points: one page, newest first."""
        return self._get(PointsPage, "/api/v1/members/%s/points" % _segment(external_member_id),
                         [("filter", filter), ("limit", limit), ("before", before)])

    def iter_points(self, external_member_id: str, *, filter: Optional[str] = None, page_size: int = 100,
                    before: Optional[int] = None) -> Iterator[LedgerEntry]:
        """Every ledger entry of the member, newest first, fetching pages as needed."""
        return self._pages(lambda cursor: self.list_points(external_member_id, filter=filter, limit=page_size,
                                                           before=cursor), before)

    def list_transactions(self, external_member_id: str, *, limit: Optional[int] = None,
                          before: Optional[int] = None) -> TransactionsPage:
        """GET /api/v1/members/{id}/transactions: one page, newest first."""
        return self._get(TransactionsPage, "/api/v1/members/%s/transactions" % _segment(external_member_id),
                         [("limit", limit), ("before", before)])

    def iter_transactions(self, external_member_id: str, *, page_size: int = 100,
                          before: Optional[int] = None) -> Iterator[TransactionEntry]:
        """Every settled and reversed transaction of the member, newest first."""
        return self._pages(lambda cursor: self.list_transactions(external_member_id, limit=page_size,
                                                                 before=cursor), before)

    # ---- transactions ----

    def settle_transaction(self, request: SettleRequest, *, idempotency_key: Optional[str] = None) -> SettledResult:
        """POST /api/v1/transactions/settled: awards points for a settled transaction."""
        return self._post(SettledResult, "/api/v1/transactions/settled", encode(request), idempotency_key)

    def reverse_transaction(self, request: ReverseRequest, *,
                            idempotency_key: Optional[str] = None) -> ReversedResult:
        """POST /api/v1/transactions/reversed: reverses (part of) a settled transaction."""
        return self._post(ReversedResult, "/api/v1/transactions/reversed", encode(request), idempotency_key)

    # ---- redemptions ----

    def create_redemption(self, request: RedemptionRequest, *,
                          idempotency_key: Optional[str] = None) -> RedemptionAccepted:
        """POST /api/v1/redemptions: reserves the points; the payout follows (status payout_pending)."""
        return self._post(RedemptionAccepted, "/api/v1/redemptions", encode(request), idempotency_key)

    def get_redemption(self, redemption_id: str) -> Redemption:
        """GET /api/v1/redemptions/{id}."""
        return self._get(Redemption, "/api/v1/redemptions/%s" % _segment(redemption_id))

    def list_redemptions(self, *, request_id: Optional[str] = None, external_member_id: Optional[str] = None,
                         status: Optional[str] = None, limit: Optional[int] = None,
                         before: Optional[int] = None) -> RedemptionsPage:
        """GET /api/v1/redemptions: one page of the club's redemptions, newest first, optionally filtered."""
        return self._get(RedemptionsPage, "/api/v1/redemptions",
                         [("requestId", request_id), ("externalMemberId", external_member_id), ("status", status),
                          ("limit", limit), ("before", before)])

    def iter_redemptions(self, *, request_id: Optional[str] = None, external_member_id: Optional[str] = None,
                         status: Optional[str] = None, page_size: int = 100,
                         before: Optional[int] = None) -> Iterator[Redemption]:
        """Every matching redemption, newest first."""
        return self._pages(lambda cursor: self.list_redemptions(
            request_id=request_id, external_member_id=external_member_id, status=status, limit=page_size,
            before=cursor), before)

    def test_helper_payout(self, redemption_id: str, outcome: PayoutOutcomeName, failure_reason: Optional[str] = None, *,
                           idempotency_key: Optional[str] = None) -> Redemption:
        """Sandbox only: POST /api/v1/test-helpers/redemptions/{id}/payout.

        Moves the payout as the operator's report would; outcome is
        "succeeded" or "failed". Returns the redemption after the move.
        """
        body: Dict[str, Any] = {"outcome": outcome}
        if failure_reason is not None:
            body["failureReason"] = failure_reason
        return self._post(Redemption, "/api/v1/test-helpers/redemptions/%s/payout" % _segment(redemption_id),
                          body, idempotency_key)

    # ---- club ----

    def get_club(self) -> Club:
        """GET /api/v1/club: the calling key's club (unset settings are None)."""
        return self._get(Club, "/api/v1/club")

    # ---- events ----

    def list_events(self, *, after: Optional[str] = None, limit: Optional[int] = None,
                    types: Optional[Sequence[str]] = None) -> EventsPage:
        """GET /api/v1/events: one page, oldest first; page on with next_after."""
        return self._get(EventsPage, "/api/v1/events",
                         [("after", after), ("limit", limit), ("types", list(types) if types else None)])

    def iter_events(self, *, after: Optional[str] = None, types: Optional[Sequence[str]] = None,
                    page_size: int = 100) -> "EventIterator":
        """Every event after the cursor, oldest first, until the log is caught up.

        The returned iterator's next_after is the cursor to resume from later.
        """
        return EventIterator(self, after, types, page_size)

    # ---- webhook endpoints ----

    def create_webhook_endpoint(self, url: str, *, event_types: Optional[Sequence[str]] = None,
                                description: Optional[str] = None,
                                idempotency_key: Optional[str] = None) -> WebhookEndpoint:
        """POST /api/v1/webhook-endpoints; the answer carries the signing secret (keep it)."""
        body: Dict[str, Any] = {"url": url}
        if event_types is not None:
            body["eventTypes"] = list(event_types)
        if description is not None:
            body["description"] = description
        return self._post(WebhookEndpoint, "/api/v1/webhook-endpoints", body, idempotency_key)

    def list_webhook_endpoints(self) -> List[WebhookEndpoint]:
        """GET /api/v1/webhook-endpoints: all of the club's endpoints (no secrets)."""
        return self._get(WebhookEndpointList, "/api/v1/webhook-endpoints").entries

    def get_webhook_endpoint(self, endpoint_id: str) -> WebhookEndpoint:
        """GET /api/v1/webhook-endpoints/{id} (no secret)."""
        return self._get(WebhookEndpoint, "/api/v1/webhook-endpoints/%s" % _segment(endpoint_id))

    def update_webhook_endpoint(self, endpoint_id: str, *, url: Optional[str] = None,
                                event_types: Optional[Sequence[str]] = None, description: Optional[str] = None,
                                status: Optional[str] = None,
                                idempotency_key: Optional[str] = None) -> WebhookEndpoint:
        """POST /api/v1/webhook-endpoints/{id}: changes what is given; status "enabled" resumes delivery."""
        body: Dict[str, Any] = {}
        if url is not None:
            body["url"] = url
        if event_types is not None:
            body["eventTypes"] = list(event_types)
        if description is not None:
            body["description"] = description
        if status is not None:
            body["status"] = status
        return self._post(WebhookEndpoint, "/api/v1/webhook-endpoints/%s" % _segment(endpoint_id), body,
                          idempotency_key)

    def rotate_webhook_secret(self, endpoint_id: str, *, idempotency_key: Optional[str] = None) -> WebhookEndpoint:
        """POST .../rotate-secret: a new secret; the old one keeps signing beside it for 24 hours."""
        return self._post(WebhookEndpoint, "/api/v1/webhook-endpoints/%s/rotate-secret" % _segment(endpoint_id),
                          {}, idempotency_key)

    def delete_webhook_endpoint(self, endpoint_id: str, *,
                                idempotency_key: Optional[str] = None) -> DeletedWebhookEndpoint:
        """POST .../delete: no more deliveries; the endpoint is then webhook_endpoint_not_found."""
        return self._post(DeletedWebhookEndpoint, "/api/v1/webhook-endpoints/%s/delete" % _segment(endpoint_id),
                          {}, idempotency_key)

    def list_webhook_deliveries(self, endpoint_id: str, *, limit: Optional[int] = None,
                                before: Optional[int] = None) -> DeliveriesPage:
        """GET .../deliveries: one page of recent attempts, newest first."""
        return self._get(DeliveriesPage, "/api/v1/webhook-endpoints/%s/deliveries" % _segment(endpoint_id),
                         [("limit", limit), ("before", before)])

    def iter_webhook_deliveries(self, endpoint_id: str, *, page_size: int = 100,
                                before: Optional[int] = None) -> Iterator[WebhookDelivery]:
        """Every kept delivery attempt of the endpoint, newest first."""
        return self._pages(lambda cursor: self.list_webhook_deliveries(endpoint_id, limit=page_size,
                                                                       before=cursor), before)

    def replay_webhook_events(self, endpoint_id: str, since: Union[str, datetime], *,
                              idempotency_key: Optional[str] = None) -> ReplayResult:
        """POST .../replay: sends again every matching event since `since`."""
        return self._post(ReplayResult, "/api/v1/webhook-endpoints/%s/replay" % _segment(endpoint_id),
                          {"since": format_request_time(since)}, idempotency_key)

    # ---- paging ----

    @staticmethod
    def _pages(fetch: Callable[[Optional[int]], Any], before: Optional[int]) -> Iterator[Any]:
        # Histories page newest first; nextBefore null means no older entry exists.
        def walk() -> Iterator[Any]:
            cursor = before
            while True:
                page = fetch(cursor)
                yield from page.entries
                if page.next_before is None or not page.entries:
                    return
                cursor = page.next_before
        return walk()


class EventIterator:
    """Events oldest first, one page at a time, until a page comes back empty.

    next_after is the cursor after the last page handed out in full (or the
    one given): store it once the loop ends and pass it as `after` to go on
    later, so every event is seen exactly once. Stopping in the middle of a
    page leaves next_after before that page (its events come again).
    """

    def __init__(self, client: Client, after: Optional[str], types: Optional[Sequence[str]], page_size: int) -> None:
        self._client = client
        self._types = list(types) if types else None
        self._page_size = page_size
        self._buffer: List[Event] = []
        self._cursor = after  # where the next page starts
        self._done = False
        self.next_after = after

    def __iter__(self) -> "EventIterator":
        return self

    def __next__(self) -> Event:
        while not self._buffer:
            if self._done:
                raise StopIteration
            page = self._client.list_events(after=self._cursor, limit=self._page_size, types=self._types)
            self._buffer = list(page.entries)
            if not page.entries or not page.next_after:
                self._done = True
            if page.next_after:
                self._cursor = page.next_after
        event = self._buffer.pop(0)
        if not self._buffer:
            self.next_after = self._cursor
        return event
