// The client against a local stub server: what it sends (signature, headers,
// body, path encoding) and how it retries.
import { test } from "node:test";
import { strict as assert } from "node:assert";
import { MemberRewardsClient, MemberRewardsError, MemberRewardsConnectionError } from "../src/index";
import { expectedSignature, fail, ok, startStub, type Handler, type Recorded } from "./stub";

const SECRET = "fJ3kq9V0s7bX2mN8pL4tR6wY1zC5dH0gA9eK3uQ7iOs";

async function withStub(handler: Handler, run: (client: MemberRewardsClient, requests: Recorded[]) => Promise<void>, extra: Partial<ConstructorParameters<typeof MemberRewardsClient>[0]> = {}): Promise<void> {
  const stub = await startStub(handler);
  try {
    const client = new MemberRewardsClient({
      baseUrl: stub.baseUrl,
      keyId: "mrk_sbx_test",
      keySecret: SECRET,
      partnerRef: "sandbox-club",
      initialRetryDelayMs: 5,
      maxRetryDelayMs: 20,
      ...extra,
    });
    await run(client, stub.requests);
  } finally {
    await stub.close();
  }
}

const member = { externalMemberId: "m-1", firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" };

test("a POST is signed over the exact bytes sent, with partnerRef, Content-Type and an idempotency key", async () => {
  await withStub((_req, res) => ok(res, { externalMemberId: "m-1", status: "created", payoutReady: false }, 201), async (client, requests) => {
    const result = await client.members.upsert(member);
    assert.deepEqual(result, { externalMemberId: "m-1", status: "created", payoutReady: false, idempotentReplay: false });
    const r = requests[0]!;
    assert.equal(r.method, "POST");
    assert.equal(r.url, "/api/v1/members");
    assert.deepEqual(JSON.parse(r.body), { partnerRef: "sandbox-club", member });
    assert.equal(r.headers["x-mr-key-id"], "mrk_sbx_test");
    assert.equal(r.headers["x-mr-signature"], expectedSignature(SECRET, r));
    assert.match(String(r.headers["x-mr-timestamp"]), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(r.headers["content-type"], "application/json");
    assert.match(String(r.headers["x-mr-idempotency-key"]), /^[!-~]{1,255}$/);
  });
});

test("every call gets its own idempotency key; a given one is used as is", async () => {
  await withStub((_req, res) => ok(res, { externalMemberId: "m-1", status: "updated", payoutReady: false }), async (client, requests) => {
    await client.members.upsert(member);
    await client.members.upsert(member);
    await client.members.upsert(member, { idempotencyKey: "my-key-1" });
    assert.notEqual(requests[0]!.headers["x-mr-idempotency-key"], requests[1]!.headers["x-mr-idempotency-key"]);
    assert.equal(requests[2]!.headers["x-mr-idempotency-key"], "my-key-1");
  });
});

test("a GET signs the path without the query; ids are percent-encoded and signed encoded", async () => {
  await withStub((_req, res) => ok(res, { entries: [], nextBefore: null }), async (client, requests) => {
    await client.members.listPoints("a/b c", { limit: 10, filter: "earned", before: 1795353757172 });
    const r = requests[0]!;
    assert.equal(r.method, "GET");
    assert.equal(r.url, "/api/v1/members/a%2Fb%20c/points?filter=earned&limit=10&before=1795353757172");
    assert.equal(r.headers["x-mr-signature"], expectedSignature(SECRET, r));
    assert.equal(r.headers["x-mr-idempotency-key"], undefined);
    assert.equal(r.headers["content-type"], undefined);
    assert.equal(r.body, "");
  });
});

test("empty, malformed and dot-segment ids are refused before sending", async () => {
  await withStub((_req, res) => ok(res, {}), async (client, requests) => {
    const refused = (e: unknown) => e instanceof MemberRewardsError && e.code === "invalid_argument" && e.status === 0;
    for (const id of ["..", ".", "", "x".repeat(129), "tab\tid", "caf\u00e9"]) {
      await assert.rejects(client.members.balance(id), refused, JSON.stringify(id));
    }
    await assert.rejects(client.testHelpers.payout("", { outcome: "succeeded" }), refused);
    await assert.rejects(client.webhookEndpoints.delete(""), refused);
    assert.equal(requests.length, 0);
  });
});

test("every answer says whether it replays an earlier one", async () => {
  let replay = false;
  await withStub((_req, res) => {
    res.setHeader("X-MR-Idempotent-Replay", replay ? "true" : "false");
    ok(res, { externalMemberId: "m", status: "created", payoutReady: false });
  }, async (client) => {
    const input = { externalMemberId: "m", firstName: "A", lastName: "B", email: "a@b.c" };
    const first = await client.members.upsert(input, { idempotencyKey: "k" });
    replay = true;
    const again = await client.members.upsert(input, { idempotencyKey: "k" });
    assert.equal(first.idempotentReplay, false);
    assert.equal(again.idempotentReplay, true);
    assert.equal(again.status, "created");
  });
});

test("Date timestamps in bodies are sent as RFC 3339", async () => {
  await withStub((_req, res) => ok(res, { eventId: "e", status: "processed", externalTransactionId: "t", pointsAwarded: 1, balances: { pointsBalance: 1, reservedPointsBalance: 0 } }), async (client, requests) => {
    await client.transactions.settled({
      eventId: "e",
      occurredAt: new Date(Date.UTC(2026, 10, 20, 10, 0, 0)),
      member: { externalMemberId: "m-1" },
      transaction: { externalTransactionId: "t", merchantId: "m", merchantName: "M", amountMinor: 100, currency: "GBP", settledAt: "2026-11-20T10:00:01Z" },
    });
    const sent = JSON.parse(requests[0]!.body);
    assert.equal(sent.occurredAt, "2026-11-20T10:00:00.000Z");
    assert.equal(sent.transaction.settledAt, "2026-11-20T10:00:01Z");
  });
});

test("503, 429 and 409 idempotency_in_progress are retried with the same key and body, signed afresh", async () => {
  const answers: Handler[] = [
    (_q, res) => fail(res, 503, "service_unavailable", {}, { "Retry-After": "0" }),
    (_q, res) => fail(res, 429, "rate_limited", {}, { "Retry-After": "0" }),
    (_q, res) => fail(res, 409, "idempotency_in_progress"),
    (_q, res) => ok(res, { redemptionId: "rdm_1", status: "payout_pending" }, 202),
  ];
  await withStub((q, res, i) => answers[i]!(q, res, i), async (client, requests) => {
    const r = await client.redemptions.create({ requestId: "rq-1", member: { externalMemberId: "m-1" }, redemption: { points: 100, currency: "GBP" } });
    assert.equal(r.redemptionId, "rdm_1");
    assert.equal(requests.length, 4);
    const keys = new Set(requests.map((q) => q.headers["x-mr-idempotency-key"]));
    assert.equal(keys.size, 1);
    assert.equal(new Set(requests.map((q) => q.body)).size, 1);
    for (const q of requests) assert.equal(q.headers["x-mr-signature"], expectedSignature(SECRET, q));
  });
});

test("Retry-After is honoured", async () => {
  const answers: Handler[] = [
    (_q, res) => fail(res, 409, "idempotency_in_progress", {}, { "Retry-After": "1" }),
    (_q, res) => ok(res, { externalMemberId: "m-1", status: "created", payoutReady: false }, 201),
  ];
  await withStub((q, res, i) => answers[i]!(q, res, i), async (client, requests) => {
    await client.members.upsert(member);
    assert.equal(requests.length, 2);
    const waited = requests[1]!.receivedAt - requests[0]!.receivedAt;
    assert.ok(waited >= 990, `waited ${waited} ms, Retry-After said 1 s`);
  });
});

test("a Retry-After beyond maxRetryAfterSeconds is not waited for", async () => {
  await withStub((_q, res) => fail(res, 503, "service_unavailable", {}, { "Retry-After": "120" }), async (client, requests) => {
    await assert.rejects(client.members.balance("m-1"), (e: unknown) => e instanceof MemberRewardsError && e.code === "service_unavailable" && e.retryAfterSeconds === 120);
    assert.equal(requests.length, 1);
  });
});

test("retries stop after maxRetries and the last error is thrown", async () => {
  await withStub((_q, res) => fail(res, 503, "service_unavailable", {}, { "Retry-After": "0" }), async (client, requests) => {
    await assert.rejects(client.members.balance("m-1"), (e: unknown) => e instanceof MemberRewardsError && e.status === 503);
    assert.equal(requests.length, 3);
  }, { maxRetries: 2 });
});

test("backoff grows exponentially with jitter", async () => {
  await withStub((_q, res) => fail(res, 503, "service_unavailable"), async (client, requests) => {
    await assert.rejects(client.members.balance("m-1"));
    assert.equal(requests.length, 4);
    const gaps = requests.slice(1).map((q, i) => q.receivedAt - requests[i]!.receivedAt);
    // Steps 40, 80, 160 ms, each jittered into [half, full]: the floors
    // double (a busy machine only makes gaps longer), the third is above the
    // first step's ceiling.
    assert.ok(gaps[0]! >= 19 && gaps[1]! >= 39 && gaps[2]! >= 79, `gaps ${gaps.join(",")}`);
  }, { maxRetries: 3, initialRetryDelayMs: 40, maxRetryDelayMs: 1000 });
});

test("business errors are not retried and carry code, status, requestId, details, redemptionId", async () => {
  const answers: Handler[] = [
    (_q, res) => fail(res, 400, "invalid_request", { details: [{ field: "member.email", problem: "must contain one @" }] }),
    (_q, res) => fail(res, 409, "duplicate_request_id", { redemptionId: "rdm_first" }),
    (_q, res) => fail(res, 422, "insufficient_points_balance"),
  ];
  await withStub((q, res, i) => answers[i]!(q, res, i), async (client, requests) => {
    await assert.rejects(client.members.upsert(member), (e: unknown) => {
      assert.ok(e instanceof MemberRewardsError);
      assert.equal(e.code, "invalid_request");
      assert.equal(e.status, 400);
      assert.equal(e.requestId, "rid-invalid_request");
      assert.deepEqual(e.details, [{ field: "member.email", problem: "must contain one @" }]);
      assert.ok(e.idempotencyKey);
      return true;
    });
    const redeem = { requestId: "rq-1", member: { externalMemberId: "m-1" }, redemption: { points: 100, currency: "GBP" } };
    await assert.rejects(client.redemptions.create(redeem), (e: unknown) => e instanceof MemberRewardsError && e.code === "duplicate_request_id" && e.redemptionId === "rdm_first" && e.status === 409);
    await assert.rejects(client.redemptions.create(redeem), (e: unknown) => e instanceof MemberRewardsError && e.code === "insufficient_points_balance" && e.status === 422);
    assert.equal(requests.length, 3);
  });
});

test("a dropped connection is retried with the same key", async () => {
  await withStub((_q, res, i) => {
    if (i === 0) res.socket?.destroy();
    else ok(res, { externalMemberId: "m-1", status: "created", payoutReady: false }, 201);
  }, async (client, requests) => {
    await client.members.upsert(member);
    assert.equal(requests.length, 2);
    assert.equal(requests[0]!.headers["x-mr-idempotency-key"], requests[1]!.headers["x-mr-idempotency-key"]);
  });
});

test("a timeout is retried, and without retries it is a timeout error", async () => {
  await withStub((_q, res, i) => {
    if (i === 0) setTimeout(() => ok(res, {}), 500);
    else ok(res, { externalMemberId: "m-1", memberStatus: "active" });
  }, async (client, requests) => {
    const b = await client.members.balance("m-1");
    assert.equal(b.memberStatus, "active");
    assert.equal(requests.length, 2);
  }, { timeoutMs: 100 });
  await withStub((_q, res) => setTimeout(() => ok(res, {}), 500), async (client) => {
    await assert.rejects(client.members.balance("m-1"), (e: unknown) => e instanceof MemberRewardsConnectionError && e.code === "timeout" && e.status === 0);
  }, { timeoutMs: 100, maxRetries: 0 });
});

test("a refused connection ends in connection_error after the retries", async () => {
  const stub = await startStub((_q, res) => ok(res, {}));
  const baseUrl = stub.baseUrl;
  await stub.close(); // nothing listens there any more
  const client = new MemberRewardsClient({ baseUrl, keyId: "k", keySecret: "s", partnerRef: "p", maxRetries: 2, initialRetryDelayMs: 1 });
  await assert.rejects(client.members.balance("m-1"), (e: unknown) => e instanceof MemberRewardsConnectionError && e.code === "connection_error");
});

test("an answer that is not the API's JSON is invalid_response, not retried unless 503/429", async () => {
  await withStub((_q, res) => {
    res.writeHead(502, { "Content-Type": "text/html" });
    res.end("<html>bad gateway</html>");
  }, async (client, requests) => {
    await assert.rejects(client.members.balance("m-1"), (e: unknown) => e instanceof MemberRewardsError && e.code === "invalid_response" && e.status === 502);
    assert.equal(requests.length, 1);
  });
});

test("the caller's AbortSignal stops a wait between retries", async () => {
  await withStub((_q, res) => fail(res, 503, "service_unavailable", {}, { "Retry-After": "30" }), async (client) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await assert.rejects(client.members.balance("m-1", { signal: controller.signal }), (e: unknown) => e instanceof MemberRewardsConnectionError && e.code === "aborted");
    assert.ok(Date.now() - started < 5000);
  });
});

test("every endpoint goes to its documented method and path", async () => {
  await withStub((_q, res) => ok(res, { entries: [], nextBefore: null, nextAfter: null }), async (client, requests) => {
    const m = { externalMemberId: "m-1" };
    await client.members.upsert(member);
    await client.members.close("m-1", { reason: "asked" });
    await client.transactions.settled({ eventId: "e", occurredAt: "2026-11-20T10:00:00Z", member: m, transaction: { externalTransactionId: "t", merchantId: "x", merchantName: "X", amountMinor: 1, currency: "GBP", settledAt: "2026-11-20T10:00:00Z" } });
    await client.transactions.reversed({ eventId: "e2", occurredAt: "2026-11-20T10:00:00Z", member: m, transaction: { externalTransactionId: "t", currency: "GBP" } });
    await client.members.balance("m-1");
    await client.members.listPoints("m-1");
    await client.members.listTransactions("m-1", { limit: 5 });
    await client.redemptions.create({ requestId: "r", member: m, redemption: { points: 1, currency: "GBP" } });
    await client.redemptions.get("rdm_1");
    await client.redemptions.list({ status: "completed", requestId: "r 1" });
    await client.club.get();
    await client.events.list({ types: ["member.created", "transaction.settled"], limit: 100 });
    await client.webhookEndpoints.create({ url: "http://127.0.0.1:1/h", eventTypes: ["member.created"] });
    await client.webhookEndpoints.list();
    await client.webhookEndpoints.get("we_1");
    await client.webhookEndpoints.update("we_1", { status: "disabled" });
    await client.webhookEndpoints.rotateSecret("we_1");
    await client.webhookEndpoints.delete("we_1");
    await client.webhookEndpoints.listDeliveries("we_1", { limit: 3 });
    await client.webhookEndpoints.replay("we_1", new Date(Date.UTC(2026, 10, 26)));
    await client.testHelpers.payout("rdm_1", { outcome: "failed", failureReason: "closed" });
    assert.deepEqual(requests.map((q) => `${q.method} ${q.url}`), [
      "POST /api/v1/members",
      "POST /api/v1/members/m-1/close",
      "POST /api/v1/transactions/settled",
      "POST /api/v1/transactions/reversed",
      "GET /api/v1/members/m-1/balance",
      "GET /api/v1/members/m-1/points",
      "GET /api/v1/members/m-1/transactions?limit=5",
      "POST /api/v1/redemptions",
      "GET /api/v1/redemptions/rdm_1",
      "GET /api/v1/redemptions?requestId=r%201&status=completed",
      "GET /api/v1/club",
      "GET /api/v1/events?limit=100&types=member.created,transaction.settled",
      "POST /api/v1/webhook-endpoints",
      "GET /api/v1/webhook-endpoints",
      "GET /api/v1/webhook-endpoints/we_1",
      "POST /api/v1/webhook-endpoints/we_1",
      "POST /api/v1/webhook-endpoints/we_1/rotate-secret",
      "POST /api/v1/webhook-endpoints/we_1/delete",
      "GET /api/v1/webhook-endpoints/we_1/deliveries?limit=3",
      "POST /api/v1/webhook-endpoints/we_1/replay",
      "POST /api/v1/test-helpers/redemptions/rdm_1/payout",
    ]);
    for (const q of requests) {
      assert.equal(q.headers["x-mr-signature"], expectedSignature(SECRET, q), q.url);
      if (q.method === "POST") assert.equal(JSON.parse(q.body).partnerRef, "sandbox-club", q.url);
    }
    assert.deepEqual(JSON.parse(requests[1]!.body), { partnerRef: "sandbox-club", reason: "asked" });
    assert.deepEqual(JSON.parse(requests[19]!.body), { partnerRef: "sandbox-club", since: "2026-11-26T00:00:00.000Z" });
    assert.deepEqual(JSON.parse(requests[20]!.body), { partnerRef: "sandbox-club", outcome: "failed", failureReason: "closed" });
  });
});
