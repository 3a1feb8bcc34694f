"""Request signing against client/test-vectors.json (computed with openssl, checked against mr-sign)."""

import hashlib
import json
import pathlib
import unittest
from datetime import datetime, timedelta, timezone

from memberrewards import canonical_string, format_timestamp, sign, signed_headers

VECTORS = json.loads((pathlib.Path(__file__).resolve().parents[2] / "test-vectors.json").read_text("utf-8"))


class SigningVectors(unittest.TestCase):
    def test_every_request_vector(self) -> None:
        vectors = VECTORS["requestSigning"]["vectors"]
        self.assertGreaterEqual(len(vectors), 10)
        for v in vectors:
            with self.subTest(v["name"]):
                body = v["body"].encode("utf-8")
                self.assertEqual(hashlib.sha256(body).hexdigest(), v["bodySha256"])
                canonical = canonical_string(v["timestamp"], v["method"], v["pathAndQuery"], body)
                self.assertEqual(canonical, v["canonical"])
                self.assertEqual(sign(v["secret"], canonical), v["signature"])
                headers = signed_headers(v["keyId"], v["secret"], v["method"], v["pathAndQuery"], body,
                                         timestamp=v["timestamp"])
                self.assertEqual(headers, {"X-MR-Key-Id": v["keyId"], "X-MR-Timestamp": v["timestamp"],
                                           "X-MR-Signature": v["signature"]})

    def test_str_body_is_signed_as_its_utf8_bytes(self) -> None:
        v = next(x for x in VECTORS["requestSigning"]["vectors"] if x["name"] == "utf8-body")
        self.assertEqual(sign(v["secret"], canonical_string(v["timestamp"], v["method"], v["pathAndQuery"],
                                                            v["body"])), v["signature"])

    def test_absent_body_hashes_the_empty_string(self) -> None:
        self.assertTrue(canonical_string("t", "get", "/p?x=1").endswith(
            "\nGET\n/p\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))

    def test_timestamp_format(self) -> None:
        when = datetime(2026, 11, 22, 11, 0, 0, 987654, tzinfo=timezone(timedelta(hours=1)))
        self.assertEqual(format_timestamp(when), "2026-11-22T10:00:00.987Z")
        with self.assertRaises(ValueError):
            format_timestamp(datetime(2026, 11, 22))
        now = format_timestamp()
        parsed = datetime.strptime(now, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
        self.assertLess(abs((datetime.now(timezone.utc) - parsed).total_seconds()), 5)


if __name__ == "__main__":
    unittest.main()
