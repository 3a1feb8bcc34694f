"""Webhook verification against client/test-vectors.json, plus the round trip of Webhook.sign."""

import json
import pathlib
import time
import unittest

from memberrewards import Webhook, WebhookVerificationError

VECTORS = json.loads((pathlib.Path(__file__).resolve().parents[2] / "test-vectors.json").read_text("utf-8"))
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


class WebhookVectors(unittest.TestCase):
    def test_signing_vectors(self) -> None:
        for v in VECTORS["webhookSigning"]["vectors"]:
            with self.subTest(v["name"]):
                self.assertEqual(Webhook(v["secret"]).sign(v["msgId"], v["timestamp"], v["body"]), v["signature"])

    def test_the_specification_example_is_among_them(self) -> None:
        spec = VECTORS["webhookSigning"]["vectors"][0]
        self.assertEqual((spec["secret"], spec["msgId"], spec["timestamp"], spec["signature"]),
                         (SPEC_SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                          "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="))

    def test_verify_vectors(self) -> None:
        section = VECTORS["webhookVerify"]
        kinds = set()
        for v in section["vectors"]:
            with self.subTest(v["name"]):
                tolerance = v.get("toleranceSeconds", section["defaultToleranceSeconds"])
                secrets = v["secrets"]
                call = lambda: Webhook(secrets if len(secrets) > 1 else secrets[0],  # noqa: E731
                                       tolerance=tolerance).verify(v["body"].encode("utf-8"), v["headers"], now=v["now"])
                if v["expect"] == "valid":
                    event = call()
                    self.assertEqual(event.raw, json.loads(v["body"]))
                    if "eventId" in v:
                        self.assertEqual((event.id, event.type), (v["eventId"], v["eventType"]))
                        self.assertEqual(event.data.external_member_id, "member-1")
                        self.assertEqual(event.data.balances.points_balance, 123)
                else:
                    with self.assertRaises(WebhookVerificationError) as caught:
                        call()
                    self.assertEqual(caught.exception.reason, v["expect"])
                kinds.add(v["expect"])
        self.assertEqual(kinds, {"valid", "missing_header", "invalid_timestamp", "timestamp_out_of_tolerance",
                                 "no_matching_signature"})

    def test_default_tolerance_and_clock(self) -> None:
        body = b'{"id":"evt_1","type":"member.created","createdAt":"x","environment":"sandbox","data":{}}'
        now = int(time.time())
        fresh = {"webhook-id": "evt_1", "webhook-timestamp": str(now),
                 "webhook-signature": Webhook(SPEC_SECRET).sign("evt_1", now, body)}
        self.assertEqual(Webhook(SPEC_SECRET).verify(body, fresh).id, "evt_1")
        old = now - 301
        stale = {"webhook-id": "evt_1", "webhook-timestamp": str(old),
                 "webhook-signature": Webhook(SPEC_SECRET).sign("evt_1", old, body)}
        with self.assertRaises(WebhookVerificationError) as caught:
            Webhook(SPEC_SECRET).verify(body, stale)
        self.assertEqual(caught.exception.reason, "timestamp_out_of_tolerance")

    def test_rotation_each_secret_alone_verifies_the_double_signature(self) -> None:
        old, new = "whsec_" + "A" * 43 + "=", "whsec_" + "B" * 43 + "="
        body = b'{"id":"evt_2","type":"member.updated","createdAt":"x","environment":"sandbox","data":{}}'
        header = Webhook(old).sign("evt_2", 1000, body) + " " + Webhook(new).sign("evt_2", 1000, body)
        headers = {"webhook-id": "evt_2", "webhook-timestamp": "1000", "webhook-signature": header}
        for secret in (old, new, [new, old]):
            self.assertEqual(Webhook(secret).verify(body, headers, now=1000).type, "member.updated")
        with self.assertRaises(WebhookVerificationError):
            Webhook("whsec_" + "C" * 43 + "=").verify(body, headers, now=1000)

    def test_signed_body_that_is_not_json(self) -> None:
        headers = {"webhook-id": "m", "webhook-timestamp": "5", "webhook-signature": Webhook(SPEC_SECRET).sign("m", 5, b"[1")}
        with self.assertRaises(WebhookVerificationError) as caught:
            Webhook(SPEC_SECRET).verify(b"[1", headers, now=5)
        self.assertEqual(caught.exception.reason, "invalid_payload")

    def test_bad_secret(self) -> None:
        headers = {"webhook-id": "m", "webhook-timestamp": "5", "webhook-signature": "v1,AAAA"}
        with self.assertRaises(WebhookVerificationError) as caught:
            Webhook("whsec_not*base64").verify(b"{}", headers, now=5)
        self.assertEqual(caught.exception.reason, "invalid_secret")
        with self.assertRaises(WebhookVerificationError) as caught:
            Webhook([])
        self.assertEqual(caught.exception.reason, "invalid_secret")


if __name__ == "__main__":
    unittest.main()
