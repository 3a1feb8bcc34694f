// The iterators page for the caller: histories and redemptions follow
// nextBefore until null, events follow nextAfter until an empty page.
import { test } from "node:test";
import { strict as assert } from "node:assert";
import { MemberRewardsClient } from "../src/index";
import { ok, startStub, type Handler, type Recorded } from "./stub";

async function withStub(handler: Handler, run: (c: MemberRewardsClient, r: Recorded[]) => Promise<void>): Promise<void> {
  const stub = await startStub(handler);
  try {
    await run(new MemberRewardsClient({ baseUrl: stub.baseUrl, keyId: "k", keySecret: "s", partnerRef: "p" }), stub.requests);
  } finally {
    await stub.close();
  }
}

// 7 entries with createdAt ms 1007 (newest) .. 1001, served newest first.
const all = Array.from({ length: 7 }, (_, i) => ({ id: `le_${7 - i}`, ms: 1007 - i }));

function historyPage(url: string): { entries: { id: string }[]; nextBefore: number | null } {
  const q = new URL(url, "http://x").searchParams;
  const limit = Number(q.get("limit") ?? 50);
  const before = q.has("before") ? Number(q.get("before")) : Infinity;
  const older = all.filter((e) => e.ms < before);
  const page = older.slice(0, limit);
  const last = page[page.length - 1];
  // As the contract says: null when no older entry exists beyond this page.
  const nextBefore = last && older.length > page.length ? last.ms : null;
  return { entries: page.map((e) => ({ id: e.id })), nextBefore };
}

test("iteratePoints walks every page newest first and stops at nextBefore null", async () => {
  await withStub((q, res) => ok(res, historyPage(q.url)), async (client, requests) => {
    const ids: string[] = [];
    for await (const e of client.members.iteratePoints("m-1", { limit: 3, filter: "earned" })) ids.push(e.id);
    assert.deepEqual(ids, ["le_7", "le_6", "le_5", "le_4", "le_3", "le_2", "le_1"]);
    assert.deepEqual(requests.map((r) => r.url), [
      "/api/v1/members/m-1/points?filter=earned&limit=3",
      "/api/v1/members/m-1/points?filter=earned&limit=3&before=1005",
      "/api/v1/members/m-1/points?filter=earned&limit=3&before=1002",
    ]);
  });
});

test("a page holding exactly the last entries ends the walk without an empty page", async () => {
  await withStub((q, res) => ok(res, historyPage(q.url)), async (client, requests) => {
    let n = 0;
    for await (const _ of client.members.iterateTransactions("m-1", { limit: 7 })) n++;
    assert.equal(n, 7);
    assert.equal(requests.length, 1);
  });
});

test("breaking out of the loop stops fetching", async () => {
  await withStub((q, res) => ok(res, historyPage(q.url)), async (client, requests) => {
    for await (const e of client.members.iteratePoints("m-1", { limit: 2 })) {
      if (e.id === "le_6") break;
    }
    assert.equal(requests.length, 1);
  });
});

test("redemptions and deliveries iterate the same way, with their filters on every page", async () => {
  await withStub((q, res) => ok(res, historyPage(q.url)), async (client, requests) => {
    const got: string[] = [];
    for await (const r of client.redemptions.iterate({ limit: 4, externalMemberId: "m-1", status: "completed" })) got.push((r as unknown as { id: string }).id);
    assert.equal(got.length, 7);
    assert.equal(requests[1]!.url, "/api/v1/redemptions?limit=4&before=1004&externalMemberId=m-1&status=completed");
    let d = 0;
    for await (const _ of client.webhookEndpoints.iterateDeliveries("we_1", { limit: 5 })) d++;
    assert.equal(d, 7);
  });
});

test("events iterate oldest first along nextAfter until an empty page", async () => {
  const events = Array.from({ length: 5 }, (_, i) => ({ id: `evt_${i + 1}`, type: "member.created" }));
  await withStub((q, res) => {
    const p = new URL(q.url, "http://x").searchParams;
    const after = p.has("after") ? Number(p.get("after")!.slice(4)) : 0;
    const limit = Number(p.get("limit") ?? 50);
    const page = events.slice(after, after + limit);
    ok(res, { entries: page, nextAfter: `cur_${after + page.length}` });
  }, async (client, requests) => {
    const ids: string[] = [];
    for await (const e of client.events.iterate({ limit: 2, types: ["member.created"] })) ids.push(e.id);
    assert.deepEqual(ids, ["evt_1", "evt_2", "evt_3", "evt_4", "evt_5"]);
    assert.deepEqual(requests.map((r) => r.url), [
      "/api/v1/events?limit=2&types=member.created",
      "/api/v1/events?after=cur_2&limit=2&types=member.created",
      "/api/v1/events?after=cur_4&limit=2&types=member.created",
      "/api/v1/events?after=cur_5&limit=2&types=member.created",
    ]);
    // Resuming from a stored cursor sees only what came after it.
    const pages = [];
    for await (const page of client.events.iteratePages({ after: "cur_3", limit: 10 })) pages.push(page);
    assert.equal(pages.length, 1);
    assert.deepEqual(pages[0]!.entries.map((e) => e.id), ["evt_4", "evt_5"]);
    assert.equal(pages[0]!.nextAfter, "cur_5");
  });
});
