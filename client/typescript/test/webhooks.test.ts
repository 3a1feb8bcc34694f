// Webhook.verify beyond the shared vectors: Node's header shapes, the default
// clock and tolerance, a rotated pair of secrets, a body that is not JSON.
import { test } from "node:test";
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { Webhook, WebhookVerificationError } from "../src/index";

const secret = "whsec_" + randomBytes(32).toString("base64");
const signWebhook = (key: string, id: string, ts: number, text: string): string => new Webhook(key).sign(id, ts, text);
const verifyWebhook = (key: string | string[], headers: Parameters<Webhook["verify"]>[1], text: string) =>
  new Webhook(key).verify(text, headers);
const body = JSON.stringify({ id: "evt_1", type: "member.created", createdAt: "2026-11-26T10:00:00.000Z", environment: "sandbox", data: { externalMemberId: "m-1", memberSequence: 1, status: "created", payoutReady: false } });

function headersAt(ts: number, sig: string = signWebhook(secret, "evt_1", ts, body)): Record<string, string> {
  return { "webhook-id": "evt_1", "webhook-timestamp": String(ts), "webhook-signature": sig };
}

const reason = (r: string) => (e: unknown) => e instanceof WebhookVerificationError && e.reason === r;

test("valid now, with the real clock and the default tolerance", () => {
  const now = Math.floor(Date.now() / 1000);
  const event = verifyWebhook(secret, headersAt(now), body);
  assert.equal(event.type, "member.created");
  if (event.type === "member.created" || event.type === "member.updated") assert.equal(event.data.memberSequence, 1);
});

test("expired by default after five minutes, either way", () => {
  const now = Math.floor(Date.now() / 1000);
  assert.throws(() => verifyWebhook(secret, headersAt(now - 301), body), reason("timestamp_out_of_tolerance"));
  assert.throws(() => verifyWebhook(secret, headersAt(now + 301), body), reason("timestamp_out_of_tolerance"));
  verifyWebhook(secret, headersAt(now - 299), body);
});

test("tampered body or id fails", () => {
  const now = Math.floor(Date.now() / 1000);
  assert.throws(() => verifyWebhook(secret, headersAt(now), body.replace("m-1", "m-2")), reason("no_matching_signature"));
  assert.throws(() => verifyWebhook(secret, { ...headersAt(now), "webhook-id": "evt_2" }, body), reason("no_matching_signature"));
});

test("two signatures (rotation): either secret verifies", () => {
  const old = "whsec_" + randomBytes(32).toString("base64");
  const now = Math.floor(Date.now() / 1000);
  const both = `${signWebhook(old, "evt_1", now, body)} ${signWebhook(secret, "evt_1", now, body)}`;
  verifyWebhook(secret, headersAt(now, both), body);
  verifyWebhook(old, headersAt(now, both), body);
  verifyWebhook([old, secret], headersAt(now, signWebhook(old, "evt_1", now, body)), body);
  const stranger = "whsec_" + randomBytes(32).toString("base64");
  assert.throws(() => verifyWebhook(stranger, headersAt(now, both), body), reason("no_matching_signature"));
});

test("Node's IncomingHttpHeaders shape (lower-case keys, arrays) works", () => {
  const now = Math.floor(Date.now() / 1000);
  const h: Record<string, string | string[]> = { ...headersAt(now) };
  h["webhook-signature"] = ["v1,AAAA", signWebhook(secret, "evt_1", now, body)];
  verifyWebhook(secret, h, body);
});

test("a signed body that is not JSON is refused after the signature check", () => {
  const now = Math.floor(Date.now() / 1000);
  const text = "not json";
  assert.throws(
    () => verifyWebhook(secret, headersAt(now, signWebhook(secret, "evt_1", now, text)), text),
    reason("invalid_payload"),
  );
});

test("a secret that is not base64, or none, is refused when the verifier is made", () => {
  assert.throws(() => new Webhook("whsec_***"), reason("invalid_secret"));
  assert.throws(() => new Webhook([]), reason("invalid_secret"));
});

test("the verifier takes the body first, as the Standard Webhooks libraries do", () => {
  const now = Math.floor(Date.now() / 1000);
  const wh = new Webhook(secret, { toleranceSeconds: 10 });
  assert.equal(wh.verify(Buffer.from(body), headersAt(now)).id, "evt_1");
  assert.throws(() => wh.verify(body, headersAt(now - 11)), reason("timestamp_out_of_tolerance"));
  assert.equal(wh.sign("evt_1", new Date(now * 1000), body), signWebhook(secret, "evt_1", now, body));
});
