#!/usr/bin/env python3
"""The shared SDK scenario (issue 27) against a real sandbox stack.

    MR_BASE_URL=... MR_KEY_ID=... MR_KEY_SECRET=... MR_PARTNER_REF=... python3 examples/scenario.py

Onboards a member, settles enough transactions for three pages of history,
pages them, redeems, drives the payout with the sandbox test helper, and
receives real webhooks on a loopback receiver: every one verified, the
first delivery of member.created answered 500 once so it must come again
with the same webhook-id, a rotated secret's double signature, a replay.
Exits 0 when everything matched, 1 on the first mismatch, 2 on bad setup.

MR_WEBHOOK_HOST (default 127.0.0.1) is the address the receiver binds and
the webhook URL names; MR_SCENARIO_TIMEOUT (default 120) bounds each wait
in seconds.
"""

import json
import os
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import memberrewards as mr  # noqa: E402

PAGE = 5
SETTLES = 12  # three pages of five: 5, 5, 2
TIMEOUT = float(os.environ.get("MR_SCENARIO_TIMEOUT", "120"))
MARK = "sdk-scenario python"


class Mismatch(Exception):
    pass


def check(cond: bool, what: str) -> None:
    if not cond:
        raise Mismatch(what)


def same(got: Any, want: Any, what: str) -> None:
    if got != want:
        raise Mismatch("%s: got %r, want %r" % (what, got, want))


def step(text: str) -> None:
    print("ok   " + text, flush=True)


def expect_error(code: str, call: Callable[[], Any]) -> mr.MemberRewardsError:
    try:
        call()
    except mr.MemberRewardsError as err:
        same(err.code, code, "error code")
        check(bool(err.request_id), "error %s carries a request id" % code)
        return err
    raise Mismatch("expected %s, the call succeeded" % code)


class Delivery:
    def __init__(self, headers: Dict[str, str], body: bytes, answered: int) -> None:
        self.headers = headers
        self.body = body
        self.answered = answered
        self.received = time.time()
        self.id = headers.get("webhook-id", "")
        try:
            self.json: Dict[str, Any] = json.loads(body)
        except ValueError:
            self.json = {}

    def member(self) -> Optional[str]:
        data = self.json.get("data")
        return data.get("externalMemberId") if isinstance(data, dict) else None


class Receiver:
    """A loopback webhook receiver that records every delivery.

    It answers 500 to the first delivery of the first member.created
    event of `member_id`, and 200 to everything else.
    """

    def __init__(self, host: str, member_id: str) -> None:
        self.deliveries: List[Delivery] = []
        self.failed_once: Optional[str] = None
        self._cond = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                probe = Delivery(headers, body, 0)
                with receiver._cond:
                    status = 200
                    if (receiver.failed_once is None and probe.json.get("type") == "member.created"
                            and probe.member() == member_id):
                        receiver.failed_once = probe.id
                        status = 500
                    probe.answered = status
                    receiver.deliveries.append(probe)
                    receiver._cond.notify_all()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://%s:%d/hooks" % (host, self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, args=(0.1,), daemon=True).start()

    def wait(self, what: str, done: Callable[[List[Delivery]], bool]) -> List[Delivery]:
        deadline = time.monotonic() + TIMEOUT
        with self._cond:
            while not done(self.deliveries):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Mismatch("no webhook for %s within %.0f s (%d deliveries received)"
                                   % (what, TIMEOUT, len(self.deliveries)))
                self._cond.wait(min(left, 1.0))
            return list(self.deliveries)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def poll(what: str, fetch: Callable[[], Any], done: Callable[[Any], bool], interval: float = 0.5) -> Any:
    deadline = time.monotonic() + TIMEOUT
    while True:
        value = fetch()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise Mismatch("%s not reached within %.0f s (last: %r)" % (what, TIMEOUT, value))
        time.sleep(interval)


def run(client: mr.Client) -> None:
    started = datetime.now(timezone.utc) - timedelta(seconds=2)
    run_id = uuid.uuid4().hex[:10]
    member_id = "py-scn-" + run_id
    expected: List[str] = []  # our member's event types in memberSequence order

    # ---- the club ----
    club = client.get_club()
    same(club.partner_ref, client.partner_ref, "club partnerRef")
    same(club.environment, "sandbox", "club environment")
    check(club.earn_rate_basis_points is not None and club.earn_rate_basis_points > 0, "the club earns points")
    check(bool(club.redemption_rate_minor_per_point) and bool(club.payout_currency), "the club can pay out")
    check(club.payout_currency in (club.supported_currencies or []), "payout currency among the supported ones")
    rate = club.earn_rate_basis_points or 0
    minimum = max(1, club.minimum_redemption_points or 1)
    step("club %s: earn %d bp, minimum redemption %d, payout %s" % (club.partner_ref, rate, minimum,
                                                                     club.payout_currency))

    # ---- where the event log stands now, so later reads start from here ----
    events_now = client.iter_events(page_size=100)
    skipped = sum(1 for _ in events_now)
    cursor = events_now.next_after
    step("event log caught up past %d earlier events" % skipped)

    # ---- a webhook endpoint on a loopback receiver ----
    for old in client.list_webhook_endpoints():
        if (old.description or "").startswith(MARK):
            client.delete_webhook_endpoint(old.endpoint_id)  # left by an interrupted run
    receiver = Receiver(os.environ.get("MR_WEBHOOK_HOST", "127.0.0.1"), member_id)
    endpoint = client.create_webhook_endpoint(receiver.url, description="%s %s" % (MARK, run_id))
    try:
        run_with_endpoint(client, club, rate, minimum, member_id, expected, receiver, endpoint, cursor, started)
    finally:
        receiver.close()
        try:
            client.delete_webhook_endpoint(endpoint.endpoint_id)
        except mr.MemberRewardsError as err:
            if err.code != "webhook_endpoint_not_found":
                raise


def run_with_endpoint(client: mr.Client, club: mr.Club, rate: int, minimum: int, member_id: str,
                      expected: List[str], receiver: Receiver, endpoint: mr.WebhookEndpoint,
                      cursor: Optional[str], started: datetime) -> None:
    check(endpoint.endpoint_id.startswith("we_"), "endpoint id prefix")
    check((endpoint.secret or "").startswith("whsec_"), "the create answer carries the secret")
    same(endpoint.status, "enabled", "new endpoint status")
    same(endpoint.url, receiver.url, "endpoint url")
    fetched = client.get_webhook_endpoint(endpoint.endpoint_id)
    same((fetched.url, fetched.secret), (receiver.url, None), "GET endpoint (url, no secret)")
    check(endpoint.endpoint_id in [e.endpoint_id for e in client.list_webhook_endpoints()], "endpoint listed")
    secrets = [endpoint.secret or ""]
    step("webhook endpoint %s -> %s" % (endpoint.endpoint_id, receiver.url))

    # ---- onboard ----
    member = mr.MemberInput(member_id, "Ada", "Lovelace", "ada@example.com",
                            mr.Wallet(provider="bank", wallet_ref="w-" + member_id, status="active",
                                      bank_account=mr.BankAccount("12345678", "112233", "Ada Lovelace")))
    key = "idem-" + uuid.uuid4().hex
    created = client.upsert_member(member, idempotency_key=key)
    same((created.status, created.payout_ready), ("created", True), "first upsert")
    expected.append("member.created")
    replayed = client.upsert_member(member, idempotency_key=key)
    same(replayed, created, "the same idempotency key replays the first answer")
    updated = client.upsert_member(member)
    same(updated.status, "updated", "second upsert under a new key")
    expected.append("member.updated")
    step("member %s onboarded (created, replayed, updated)" % member_id)

    # ---- settle enough for three pages ----
    per_tx = -(-(2 * minimum) // SETTLES) + 1  # points each, so the total covers a redemption
    base_amount = max(100, -(-per_tx * 10000 // rate))
    total = 0
    tx_ids = []
    for i in range(SETTLES):
        amount = base_amount + i
        tx_id = "%s-tx-%02d" % (member_id, i)
        now = datetime.now(timezone.utc)
        res = client.settle_transaction(mr.SettleRequest(
            event_id="%s-ev-%02d" % (member_id, i), occurred_at=now - timedelta(minutes=5), member=mr.MemberRef(member_id),
            transaction=mr.SettledTransaction(tx_id, "m-42", "Corner Shop", amount, club.payout_currency or "GBP",
                                              now - timedelta(minutes=4))))
        points = amount * rate // 10000
        total += points
        same((res.status, res.points_awarded, res.balances.points_balance), ("processed", points, total),
             "settle %s" % tx_id)
        tx_ids.append(tx_id)
        expected.append("transaction.settled")
    dup = expect_error("duplicate_transaction", lambda: client.settle_transaction(mr.SettleRequest(
        event_id=member_id + "-ev-dup", occurred_at=datetime.now(timezone.utc), member=mr.MemberRef(member_id),
        transaction=mr.SettledTransaction(tx_ids[0], "m-42", "Corner Shop", base_amount,
                                          club.payout_currency or "GBP", datetime.now(timezone.utc)))))
    same(dup.status, 409, "duplicate_transaction status")
    step("%d transactions settled, %d points; a repeated one is duplicate_transaction" % (SETTLES, total))

    # ---- page the histories ----
    pages = []
    before = None
    while True:
        page = client.list_points(member_id, limit=PAGE, before=before)
        pages.append(page)
        if page.next_before is None:
            break
        check(len(pages) < 10, "points history ends")
        before = page.next_before
    same([len(p.entries) for p in pages], [5, 5, 2], "points page sizes")
    listed = [e.external_transaction_id for p in pages for e in p.entries]
    same(listed, list(reversed(tx_ids)), "points history, newest first")
    check(all(e.entry_type == "earn_award" for p in pages for e in p.entries), "every entry is an award")
    same([e.id for e in client.iter_points(member_id, page_size=PAGE)], [e.id for p in pages for e in p.entries],
         "iter_points walks the same entries")
    history = list(client.iter_transactions(member_id, page_size=PAGE))
    same([(t.external_transaction_id, t.type) for t in history], [(t, "settled") for t in reversed(tx_ids)],
         "transaction history, newest first")
    step("three pages of history (5, 5, 2) paged by hand and by the iterators")

    # ---- redeem ----
    request_id = "rq-" + member_id
    accepted = client.create_redemption(mr.RedemptionRequest(request_id, mr.MemberRef(member_id),
                                                              mr.RedemptionAmount(minimum, club.payout_currency or "")))
    rid = accepted.redemption_id
    check(rid.startswith("rdm_") and accepted.payout.payout_id.startswith("po_"), "redemption and payout ids")
    same((accepted.status, accepted.payout.status, accepted.points_redeemed, accepted.cash_value_minor),
         ("payout_pending", "created", minimum, minimum * (club.redemption_rate_minor_per_point or 0)),
         "accepted redemption")
    same((accepted.balances.points_balance, accepted.balances.reserved_points_balance), (total - minimum, minimum),
         "balances after the reservation")
    expected.append("redemption.created")
    again = expect_error("duplicate_request_id", lambda: client.create_redemption(mr.RedemptionRequest(
        request_id, mr.MemberRef(member_id), mr.RedemptionAmount(minimum, club.payout_currency or ""))))
    same(again.redemption_id, rid, "duplicate_request_id names the first redemption")
    found = client.list_redemptions(request_id=request_id)
    same([r.redemption_id for r in found.entries], [rid], "redemption found by requestId")
    same([r.redemption_id for r in client.iter_redemptions(external_member_id=member_id)], [rid],
         "redemptions of the member")
    step("redeemed %d points as %s; a repeated requestId names it" % (minimum, rid))

    # ---- the payout, driven by the sandbox test helper ----
    paid = client.test_helper_payout(rid, "succeeded")
    same((paid.redemption_id, paid.status, paid.payout.status), (rid, "completed", "succeeded"), "after the payout")
    same(client.test_helper_payout(rid, "succeeded").status, "completed", "the same report again is a no-op")
    expected.append("redemption.completed")
    balance = client.get_balance(member_id)
    same((balance.points_balance, balance.reserved_points_balance, balance.lifetime_points_earned,
          balance.lifetime_points_redeemed), (total - minimum, 0, total, minimum), "balance after the payout")
    same(client.get_redemption(rid).status, "completed", "GET redemption")
    step("payout succeeded through the test helper; balance %d" % balance.points_balance)

    # ---- the webhooks ----
    def ours(ds: List[Delivery]) -> Dict[int, Delivery]:
        seqs: Dict[int, Delivery] = {}
        for d in ds:
            if d.member() == member_id and d.answered == 200:
                seqs.setdefault(d.json["data"].get("memberSequence"), d)
        return seqs

    deliveries = receiver.wait("all %d events of the member" % len(expected),
                               lambda ds: all(n in ours(ds) for n in range(1, len(expected) + 1)))
    for d in deliveries:
        event = mr.Webhook(secrets).verify(d.body, d.headers, now=d.received)
        same(event.id, d.id, "webhook-id is the event id")
        same(event.environment, "sandbox", "event environment")
    by_seq = ours(deliveries)
    same([by_seq[n].json["type"] for n in range(1, len(expected) + 1)], expected, "event types by memberSequence")
    same(by_seq[len(expected)].json["data"].get("redemptionId"), rid, "redemption.completed names the redemption")
    step("%d deliveries verified; the member's %d events arrived in memberSequence 1..%d"
         % (len(deliveries), len(expected), len(expected)))

    failed = receiver.failed_once
    check(failed is not None, "the receiver refused one delivery")
    same(by_seq[1].id, failed, "member.created was the delivery answered 500")
    attempts = [d for d in deliveries if d.id == failed]
    same([d.answered for d in attempts[:2]], [500, 200], "the refused webhook came again with the same webhook-id")
    log = poll("the deliveries log of the retried event",
               lambda: [x for x in client.iter_webhook_deliveries(endpoint.endpoint_id) if x.event_id == failed],
               lambda xs: any(x.status == 500 for x in xs) and any(x.status == 200 for x in xs))
    check(any(x.attempt >= 2 for x in log), "the log counts a second attempt")
    step("forced retry: webhook %s answered 500, delivered again with the same id and logged" % failed)

    # ---- the events API from the cursor taken at the start ----
    def our_events() -> List[mr.Event]:
        return [e for e in client.iter_events(after=cursor) if e.data.external_member_id == member_id]
    events = poll("the member's events in the events API", our_events, lambda es: len(es) >= len(expected))
    same(sorted(e.data.member_sequence for e in events), list(range(1, len(expected) + 1)),
         "events API: each event exactly once")
    same({e.id for e in events}, {by_seq[n].id for n in by_seq if n <= len(expected)},
         "events API and webhooks name the same events")
    step("events API from the saved cursor lists the same %d events" % len(events))

    # ---- rotate the secret: two signatures, each verifies alone ----
    rotated = client.rotate_webhook_secret(endpoint.endpoint_id)
    check((rotated.secret or "").startswith("whsec_") and rotated.secret != secrets[0], "a new secret")
    secrets.append(rotated.secret or "")
    client.upsert_member(mr.MemberInput(member_id, "Ada", "King", "ada@example.com"))
    expected.append("member.updated")
    seq = len(expected)
    ds = receiver.wait("the update after the rotation", lambda ds: seq in ours(ds))
    d = ours(ds)[seq]
    same(len(d.headers["webhook-signature"].split(" ")), 2, "signatures during a rotation")
    for secret in secrets:
        mr.Webhook(secret).verify(d.body, d.headers, now=d.received)
    step("rotated secret: the next webhook carries two signatures, each secret verifies it alone")

    # ---- replay, update, close, delete ----
    replay = client.replay_webhook_events(endpoint.endpoint_id, started)
    check(replay.replayed >= len(expected), "replay queued at least the member's %d events" % len(expected))
    receiver.wait("the replayed member.created", lambda ds: sum(1 for x in ds if x.id == failed) >= 3)
    changed = client.update_webhook_endpoint(endpoint.endpoint_id, description=MARK + " updated")
    same(changed.description, MARK + " updated", "endpoint description updated")
    step("replay sent %d events again (member.created came a third time)" % replay.replayed)

    closed = client.close_member(member_id, "scenario done")
    same((closed.status, closed.points_forfeited), ("closed", total - minimum), "close")
    same(client.get_balance(member_id).member_status, "closed", "member status after close")
    client.delete_webhook_endpoint(endpoint.endpoint_id)
    expect_error("webhook_endpoint_not_found", lambda: client.get_webhook_endpoint(endpoint.endpoint_id))
    step("member closed (%d points forfeited), endpoint deleted" % closed.points_forfeited)


def main() -> int:
    try:
        client = mr.Client.from_env(timeout=15)
    except ValueError as err:
        print("setup: %s" % err, file=sys.stderr)
        return 2
    try:
        run(client)
    except Mismatch as err:
        print("MISMATCH: %s" % err, file=sys.stderr)
        return 1
    except mr.MemberRewardsError as err:
        print("MISMATCH: unexpected API failure: %s" % err, file=sys.stderr)
        return 1
    except mr.WebhookVerificationError as err:
        print("MISMATCH: a webhook did not verify (%s): %s" % (err.reason, err), file=sys.stderr)
        return 1
    print("scenario passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
