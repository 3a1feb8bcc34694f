// Signing and Standard Webhooks against the shared vectors in
// client/test-vectors.json (computed with openssl, independently of any SDK).
import { test } from "node:test";
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  canonicalString,
  sha256Hex,
  signRequest,
  Webhook,
  WebhookVerificationError,
  EMPTY_BODY_SHA256,
} from "../src/index";

interface RequestVector {
  name: string;
  secret: string;
  timestamp: string;
  method: string;
  pathAndQuery: string;
  body: string;
  bodySha256: string;
  canonical: string;
  signature: string;
}
interface WebhookSigningVector {
  name: string;
  secret: string;
  msgId: string;
  timestamp: number;
  body: string;
  signature: string;
}
interface WebhookVerifyVector {
  name: string;
  secrets: string[];
  headers: Record<string, string>;
  body: string;
  now: number;
  toleranceSeconds?: number;
  expect: string;
  eventId?: string;
  eventType?: string;
}
interface Vectors {
  requestSigning: { vectors: RequestVector[] };
  webhookSigning: { vectors: WebhookSigningVector[] };
  webhookVerify: { defaultToleranceSeconds: number; vectors: WebhookVerifyVector[] };
}

// build-test/test/ -> client/test-vectors.json
const vectorsPath = process.env.MR_TEST_VECTORS ?? resolve(__dirname, "../../../test-vectors.json");
const vectors = JSON.parse(readFileSync(vectorsPath, "utf8")) as Vectors;

test("the shared file has vectors of every kind", () => {
  assert.ok(vectors.requestSigning.vectors.length >= 2);
  assert.ok(vectors.webhookSigning.vectors.length >= 1);
  assert.ok(vectors.webhookVerify.vectors.length >= 10);
  assert.equal(vectors.webhookVerify.defaultToleranceSeconds, 300);
});

for (const v of vectors.requestSigning.vectors) {
  test(`request signing: ${v.name}`, () => {
    assert.equal(sha256Hex(v.body), v.bodySha256);
    assert.equal(canonicalString(v.timestamp, v.method, v.pathAndQuery, v.body), v.canonical);
    assert.equal(signRequest(v.secret, v.timestamp, v.method, v.pathAndQuery, v.body), v.signature);
    // The same bytes given as a Uint8Array sign the same.
    assert.equal(signRequest(v.secret, v.timestamp, v.method, v.pathAndQuery, Buffer.from(v.body, "utf8")), v.signature);
  });
}

test("the empty body hash is the documented constant", () => {
  assert.equal(sha256Hex(""), EMPTY_BODY_SHA256);
});

for (const v of vectors.webhookSigning.vectors) {
  test(`webhook signing: ${v.name}`, () => {
    assert.equal(new Webhook(v.secret).sign(v.msgId, v.timestamp, v.body), v.signature);
  });
}

for (const v of vectors.webhookVerify.vectors) {
  test(`webhook verify: ${v.name} -> ${v.expect}`, () => {
    const wh = new Webhook(v.secrets, v.toleranceSeconds !== undefined ? { toleranceSeconds: v.toleranceSeconds } : {});
    const options = { now: new Date(v.now * 1000) };
    const run = (): { id?: string; type?: string } => wh.verify(v.body, v.headers, options);
    if (v.expect === "valid") {
      const event = run();
      if (v.eventId !== undefined) assert.equal(event.id, v.eventId);
      if (v.eventType !== undefined) assert.equal(event.type, v.eventType);
      // A fetch Headers object and the body as bytes verify the same way.
      const asHeaders = new Headers(v.headers);
      wh.verify(Buffer.from(v.body, "utf8"), asHeaders, options);
    } else {
      assert.throws(run, (e: unknown) => e instanceof WebhookVerificationError && e.reason === v.expect);
    }
  });
}
