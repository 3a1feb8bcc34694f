"""The client against a local stub server: signing per attempt, retries, errors, paging, typed answers."""

import random
import threading
import unittest
from typing import List

from memberrewards import (Client, ErrorCode, PayoutOutcome, MemberInput, MemberRef, MemberRewardsConnectionError, MemberRewardsError,
                           RedemptionAmount, RedemptionRequest, RetryPolicy, SettledTransaction, SettleRequest)

from .stub import StubServer, fail, ok

SECRET = "s3cr3t-as-issued"
SETTLED = {"eventId": "e1", "status": "processed", "externalTransactionId": "tx-1", "pointsAwarded": 12,
           "balances": {"pointsBalance": 12, "reservedPointsBalance": 0}, "partner": {"availablePointsPool": 5},
           "ledgerGroupId": "settled:1:tx-1"}


def settle_request() -> SettleRequest:
    return SettleRequest(event_id="e1", occurred_at="2026-11-20T10:00:00Z", member=MemberRef("m-1"),
                         transaction=SettledTransaction("tx-1", "m-42", "Corner Shop", 1234, "GBP",
                                                        "2026-11-20T10:00:01Z"))


def entry(ms: int) -> dict:
    return {"id": "le_%d" % ms, "entryType": "earn_award", "description": "d", "pointsDelta": 1,
            "pointsDeltaAvailable": 1, "pointsDeltaReserved": 0, "cashValueMinor": None, "currency": "GBP",
            "createdAt": "t%d" % ms, "merchantName": "M", "merchantId": "m", "externalTransactionId": "tx-%d" % ms,
            "ledgerGroupId": "1:tx-%d" % ms}


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.stub = StubServer()
        self.addCleanup(self.stub.close)
        self.sleeps: List[float] = []
        self.client = self.make_client()

    def make_client(self, base: str = "", **kw) -> Client:  # type: ignore[no-untyped-def]
        kw.setdefault("retry", RetryPolicy(max_retries=3, base_delay=0.5, max_delay=8.0))
        return Client(self.stub.url + base, "mrk_sbx_test", SECRET, "club-1", sleep=self.sleeps.append,
                      rng=random.Random(7), **kw)

    def assert_signed(self) -> None:
        for r in self.stub.requests:
            self.assertEqual(r.headers["x-mr-key-id"], "mrk_sbx_test")
            self.assertTrue(r.signature_ok(SECRET), "%s %s is not signed correctly" % (r.method, r.target))

    # ---- requests ----

    def test_post_body_headers_and_typed_answer(self) -> None:
        self.stub.script(ok(SETTLED))
        result = self.client.settle_transaction(settle_request())
        self.assertEqual((result.points_awarded, result.balances.points_balance, result.partner.available_points_pool),
                         (12, 12, 5))
        (req,) = self.stub.requests
        self.assertEqual((req.method, req.path), ("POST", "/api/v1/transactions/settled"))
        self.assertEqual(req.headers["content-type"], "application/json")
        self.assertEqual(req.json(), {"partnerRef": "club-1", "eventId": "e1", "occurredAt": "2026-11-20T10:00:00Z",
                                      "member": {"externalMemberId": "m-1"},
                                      "transaction": {"externalTransactionId": "tx-1", "merchantId": "m-42",
                                                      "merchantName": "Corner Shop", "amountMinor": 1234,
                                                      "currency": "GBP", "settledAt": "2026-11-20T10:00:01Z"}})
        self.assertRegex(req.headers["x-mr-idempotency-key"], r"^[0-9a-f-]{36}$")
        self.assert_signed()

    def test_each_logical_call_gets_its_own_key_unless_given(self) -> None:
        self.stub.default = lambda r: ok({"externalMemberId": "m-1", "status": "created", "payoutReady": False}, 201)
        member = MemberInput("m-1", "Ada", "Lovelace", "ada@example.com")
        self.client.upsert_member(member)
        self.client.upsert_member(member)
        self.client.upsert_member(member, idempotency_key="my-key-1")
        keys = [r.headers["x-mr-idempotency-key"] for r in self.stub.requests]
        self.assertNotEqual(keys[0], keys[1])
        self.assertEqual(keys[2], "my-key-1")
        self.assertNotIn("wallet", self.stub.requests[0].json()["member"])

    def test_get_percent_encodes_the_id_signs_the_encoded_path_not_the_query(self) -> None:
        self.stub.script(ok({"entries": [], "nextBefore": None}))
        self.client.list_points("a/b c", filter="earned", limit=10, before=1795353757172)
        (req,) = self.stub.requests
        self.assertEqual(req.path, "/api/v1/members/a%2Fb%20c/points")
        self.assertEqual(req.query, {"filter": "earned", "limit": "10", "before": "1795353757172"})
        self.assertNotIn("x-mr-idempotency-key", req.headers)
        self.assertEqual(req.body, b"")
        self.assert_signed()

    def test_an_id_the_api_cannot_take_is_refused_before_sending(self) -> None:
        for bad in ("", ".", "..", "x" * 129, "tab\there", "caf\u00e9"):
            with self.subTest(bad):
                with self.assertRaises(MemberRewardsError) as caught:
                    self.client.test_helper_payout(bad, PayoutOutcome.SUCCEEDED)
                self.assertEqual((caught.exception.code, caught.exception.status), (ErrorCode.INVALID_ARGUMENT, 0))
                with self.assertRaises(MemberRewardsError):
                    self.client.get_balance(bad)
        self.assertEqual(self.stub.requests, [])

    def test_a_replayed_answer_says_so(self) -> None:
        self.stub.script(ok(SETTLED), ok(SETTLED, headers={"X-MR-Idempotent-Replay": "true"}))
        first = self.client.settle_transaction(settle_request(), idempotency_key="k-1")
        again = self.client.settle_transaction(settle_request(), idempotency_key="k-1")
        self.assertEqual((first.idempotent_replay, again.idempotent_replay), (False, True))
        self.assertEqual(first, again)

    def test_base_url_path_prefix_is_signed(self) -> None:
        client = self.make_client("/partner/")
        self.stub.script(ok({"partnerRef": "club-1", "name": "C", "environment": "sandbox",
                             "earnRateBasisPoints": None, "redemptionRateMinorPerPoint": 1,
                             "payoutCurrency": "GBP", "supportedCurrencies": ["GBP"],
                             "minimumRedemptionPoints": None, "availablePointsPool": 10}))
        club = client.get_club()
        self.assertIsNone(club.earn_rate_basis_points)
        self.assertEqual(club.supported_currencies, ["GBP"])
        self.assertEqual(self.stub.requests[0].path, "/partner/api/v1/club")
        self.assert_signed()

    # ---- retries ----

    def test_503_is_retried_with_the_same_key_after_retry_after(self) -> None:
        self.stub.script(fail(503, "service_unavailable", {"Retry-After": "2"}), ok(SETTLED))
        self.client.settle_transaction(settle_request())
        first, second = self.stub.requests
        self.assertEqual(first.headers["x-mr-idempotency-key"], second.headers["x-mr-idempotency-key"])
        self.assertEqual(first.body, second.body)
        self.assertEqual(len(self.sleeps), 1)
        self.assertGreaterEqual(self.sleeps[0], 2.0)
        self.assertLessEqual(self.sleeps[0], 2.25)
        self.assert_signed()

    def test_409_in_progress_and_429_are_retried(self) -> None:
        self.stub.script(fail(409, "idempotency_in_progress", {"Retry-After": "1"}),
                         fail(429, "rate_limited", {"Retry-After": "1"}), ok(SETTLED))
        self.assertEqual(self.client.settle_transaction(settle_request()).points_awarded, 12)
        self.assertEqual(len({r.headers["x-mr-idempotency-key"] for r in self.stub.requests}), 1)
        self.assertEqual(len(self.stub.requests), 3)

    def test_other_409s_are_not_retried_and_carry_the_redemption(self) -> None:
        self.stub.script(fail(409, "duplicate_request_id", redemptionId="rdm_1"))
        with self.assertRaises(MemberRewardsError) as caught:
            self.client.create_redemption(RedemptionRequest("rq-1", MemberRef("m-1"), RedemptionAmount(400, "GBP")))
        err = caught.exception
        self.assertEqual((err.code, err.status, err.redemption_id, err.request_id),
                         ("duplicate_request_id", 409, "rdm_1", "req-409"))
        self.assertEqual(len(self.stub.requests), 1)
        self.assertEqual(self.sleeps, [])

    def test_exponential_backoff_with_jitter_then_give_up(self) -> None:
        self.stub.default = lambda r: fail(503, "service_unavailable")
        with self.assertRaises(MemberRewardsError) as caught:
            self.client.get_balance("m-1")
        self.assertEqual((caught.exception.code, caught.exception.status), ("service_unavailable", 503))
        self.assertEqual(len(self.stub.requests), 4)
        self.assertEqual(len(self.sleeps), 3)
        for n, delay in enumerate(self.sleeps):
            cap = 0.5 * 2 ** n
            self.assertTrue(cap / 2 <= delay <= cap, (n, delay))
        self.assertEqual(len(set(self.sleeps)), 3)

    def test_retry_after_beyond_the_limit_is_not_waited(self) -> None:
        self.stub.script(fail(429, "rate_limited", {"Retry-After": "3600"}))
        with self.assertRaises(MemberRewardsError) as caught:
            self.client.get_balance("m-1")
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("rate_limited", 3600.0))
        self.assertEqual(len(self.stub.requests), 1)

    def test_connection_drop_is_retried_with_the_same_key(self) -> None:
        self.stub.script("drop", ok(SETTLED))
        self.client.settle_transaction(settle_request())
        self.assertEqual(len(self.stub.requests), 2)
        self.assertEqual(len({r.headers["x-mr-idempotency-key"] for r in self.stub.requests}), 1)
        self.assertEqual(len(self.sleeps), 1)

    def test_timeout_is_retried_then_reported(self) -> None:
        release = threading.Event()
        self.addCleanup(release.set)
        client = self.make_client(timeout=0.3, retry=RetryPolicy(max_retries=1))
        self.stub.default = lambda r: ("stall", release)
        with self.assertRaises(MemberRewardsConnectionError) as caught:
            client.settle_transaction(settle_request(), idempotency_key="k-timeout")
        self.assertEqual((caught.exception.code, caught.exception.status, caught.exception.idempotency_key),
                         ("connection_error", 0, "k-timeout"))
        self.assertEqual(len(self.stub.requests), 2)

    def test_refused_connection(self) -> None:
        url = self.stub.url
        self.stub.close()
        client = Client(url, "k", SECRET, "club-1", sleep=self.sleeps.append, retry=RetryPolicy(max_retries=2))
        with self.assertRaises(MemberRewardsConnectionError):
            client.get_club()
        self.assertEqual(len(self.sleeps), 2)
        self.stub = StubServer()  # for the cleanup

    # ---- errors ----

    def test_invalid_request_details(self) -> None:
        self.stub.script(fail(400, "invalid_request",
                              details=[{"field": "member.wallet.bankAccount.sortCode", "problem": "must be exactly 6 digits"}]))
        with self.assertRaises(MemberRewardsError) as caught:
            self.client.upsert_member(MemberInput("m-1", "A", "B", "a@b"))
        err = caught.exception
        self.assertEqual((err.status, err.code), (400, "invalid_request"))
        self.assertEqual([(d.field, d.problem) for d in err.details],
                         [("member.wallet.bankAccount.sortCode", "must be exactly 6 digits")])
        self.assertIn("must be exactly 6 digits", str(err))
        self.assertEqual(self.sleeps, [])

    def test_an_answer_that_is_not_the_envelope(self) -> None:
        self.stub.script((502, {"Content-Type": "text/html"}, b"<html>bad gateway</html>"))
        with self.assertRaises(MemberRewardsError) as caught:
            self.client.get_club()
        self.assertEqual((caught.exception.code, caught.exception.status), ("unexpected_response", 502))
        self.assertEqual(caught.exception.request_id, "req-1")

    def test_an_answer_missing_a_required_field(self) -> None:
        self.stub.script(ok({"externalMemberId": "m-1", "status": "created"}, 201))
        with self.assertRaises(MemberRewardsError) as caught:
            self.client.upsert_member(MemberInput("m-1", "A", "B", "a@b"))
        self.assertEqual(caught.exception.code, "invalid_response")
        self.assertIn("payoutReady", str(caught.exception))

    # ---- paging ----

    def test_history_iterator_follows_next_before_until_null(self) -> None:
        times = list(range(112, 100, -1))  # 12 entries, newest first

        def page(r):  # type: ignore[no-untyped-def]
            before = int(r.query.get("before", 10 ** 6))
            rows = [t for t in times if t < before][: int(r.query["limit"])]
            more = rows and rows[-1] != times[-1]
            return ok({"entries": [entry(t) for t in rows], "nextBefore": rows[-1] if more else None})
        self.stub.default = page
        got = [e.created_at for e in self.client.iter_points("m-1", page_size=5)]
        self.assertEqual(got, ["t%d" % t for t in times])
        self.assertEqual([r.query.get("before") for r in self.stub.requests], [None, "108", "103"])
        self.assertTrue(all(r.query["limit"] == "5" for r in self.stub.requests))

    def test_redemption_iterator_sends_the_filters(self) -> None:
        red = {"redemptionId": "rdm_1", "requestId": "rq 1&x", "status": "completed", "externalMemberId": "m-1",
               "pointsRedeemed": 400, "cashValueMinor": 400, "currency": "GBP",
               "payout": {"payoutId": "po_1", "status": "succeeded", "failureReason": None},
               "createdAt": "c", "updatedAt": "u"}
        self.stub.script(ok({"entries": [red], "nextBefore": 7}), ok({"entries": [red], "nextBefore": None}))
        got = list(self.client.iter_redemptions(request_id="rq 1&x", status="completed", page_size=1))
        self.assertEqual([g.payout.status for g in got], ["succeeded", "succeeded"])
        first, second = self.stub.requests
        self.assertEqual(first.query, {"requestId": "rq 1&x", "status": "completed", "limit": "1"})
        self.assertIn("requestId=rq%201%26x", first.raw_query)
        self.assertEqual(second.query["before"], "7")

    def test_event_iterator_pages_on_next_after_until_an_empty_page(self) -> None:
        def event(n: int) -> dict:
            return {"id": "evt_%d" % n, "type": "transaction.settled", "createdAt": "c", "environment": "sandbox",
                    "data": {"externalMemberId": "m-1", "memberSequence": n, "pointsAwarded": n}}
        self.stub.script(ok({"entries": [event(1), event(2)], "nextAfter": "cur_a"}),
                         ok({"entries": [event(3)], "nextAfter": "cur_b"}),
                         ok({"entries": [], "nextAfter": "cur_b"}))
        events = self.client.iter_events(types=["transaction.settled", "member.created"], page_size=2)
        self.assertEqual([e.data.member_sequence for e in events], [1, 2, 3])
        self.assertEqual(events.next_after, "cur_b")
        self.assertEqual([r.query.get("after") for r in self.stub.requests], [None, "cur_a", "cur_b"])
        self.assertEqual(self.stub.requests[0].raw_query, "limit=2&types=transaction.settled,member.created")

    def test_webhook_endpoint_calls(self) -> None:
        endpoint = {"endpointId": "we_1", "url": "http://127.0.0.1:1/h", "eventTypes": [], "description": None,
                    "status": "enabled", "secret": "whsec_x", "createdAt": "c"}
        self.stub.script(ok(endpoint, 201), ok({"entries": [endpoint]}), ok({"endpointId": "we_1", "replayed": 3}),
                         ok({"endpointId": "we_1", "deleted": True}), fail(404, "webhook_endpoint_not_found"))
        self.assertEqual(self.client.create_webhook_endpoint("http://127.0.0.1:1/h").secret, "whsec_x")
        self.assertEqual([e.endpoint_id for e in self.client.list_webhook_endpoints()], ["we_1"])
        self.assertEqual(self.client.replay_webhook_events("we_1", "2026-11-26T00:00:00Z").replayed, 3)
        self.assertTrue(self.client.delete_webhook_endpoint("we_1").deleted)
        with self.assertRaises(MemberRewardsError) as caught:
            self.client.get_webhook_endpoint("we_1")
        self.assertEqual(caught.exception.code, "webhook_endpoint_not_found")
        paths = [(r.method, r.path) for r in self.stub.requests]
        self.assertEqual(paths, [("POST", "/api/v1/webhook-endpoints"), ("GET", "/api/v1/webhook-endpoints"),
                                 ("POST", "/api/v1/webhook-endpoints/we_1/replay"),
                                 ("POST", "/api/v1/webhook-endpoints/we_1/delete"),
                                 ("GET", "/api/v1/webhook-endpoints/we_1")])
        self.assertEqual(self.stub.requests[2].json(), {"partnerRef": "club-1", "since": "2026-11-26T00:00:00Z"})


if __name__ == "__main__":
    unittest.main()
