// The shared SDK scenario, in TypeScript, against a real sandbox:
//
//   MR_BASE_URL=... MR_KEY_ID=... MR_KEY_SECRET=... MR_PARTNER_REF=... \
//     npm run scenario            (or: . .run/env && npm run scenario)
//
// Onboards a member, settles enough for three history pages and pages them,
// redeems (and checks duplicate_request_id names the first redemption),
// drives the payout with the sandbox test helper, receives and verifies real
// webhooks on a loopback receiver (which answers 500 once to force a retry
// and sees the same webhook-id again), reads them back from the events API,
// replays them, closes the member. Exits 1 on the first mismatch.
//
// Inside this repository it imports the SDK's source; a partner's code would
// import from "@member-rewards/partner-api".
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import {
  MemberRewardsClient,
  MemberRewardsError,
  Webhook,
  type EventType,
  type MemberRewardsEvent,
} from "../src/index";

const POLL_MS = 200;

function env(name: string): string {
  const v = process.env[name];
  if (!v) {
    console.error(`scenario: ${name} is not set (source .run/env)`);
    process.exit(2);
  }
  return v;
}

class Mismatch extends Error {}

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Mismatch(what);
  console.log(`ok - ${what}`);
}

async function until<T>(what: string, seconds: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Mismatch(`${what}: not within ${seconds} s`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

interface Delivery {
  webhookId: string;
  event: MemberRewardsEvent;
  answered: number;
}

/** A loopback webhook receiver: verifies every delivery, answers 500 to the first one of `failOnceFor`'s event. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  readonly rejected: string[] = [];
  verifier: Webhook | undefined;
  private failedOnce = false;
  private readonly server = createServer((req, res) => this.onRequest(req, res));

  constructor(private readonly memberId: string, private readonly failOnceFor: EventType) {}

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      let event: MemberRewardsEvent;
      try {
        if (!this.verifier) throw new Error("no secret yet");
        event = this.verifier.verify(body, req.headers);
      } catch (e) {
        // Only this run's member counts: other clients of the club may share the sandbox.
        if (body.includes(JSON.stringify(this.memberId))) {
          this.rejected.push(`${String(req.headers["webhook-id"])}: ${(e as Error).message}`);
        }
        res.writeHead(400).end();
        return;
      }
      const webhookId = String(req.headers["webhook-id"]);
      let status = 200;
      if (event.data.externalMemberId === this.memberId && event.type === this.failOnceFor && !this.failedOnce) {
        this.failedOnce = true;
        status = 500;
      }
      if (event.data.externalMemberId === this.memberId) this.deliveries.push({ webhookId, event, answered: status });
      res.writeHead(status, { "Content-Type": "application/json" }).end("{}");
    });
  }

  idsOf(type?: EventType): string[] {
    return this.deliveries.filter((d) => !type || d.event.type === type).map((d) => d.webhookId);
  }
}

async function main(): Promise<void> {
  const client = new MemberRewardsClient({
    baseUrl: env("MR_BASE_URL"),
    keyId: env("MR_KEY_ID"),
    keySecret: env("MR_KEY_SECRET"),
    partnerRef: env("MR_PARTNER_REF"),
  });
  const run = randomBytes(6).toString("hex");
  const memberId = `sdk-ts-${run}`;
  const startedAt = new Date(Date.now() - 1000);

  // The club's own settings decide amounts and the minimum redemption.
  const club = await client.club.get();
  check(club.partnerRef === env("MR_PARTNER_REF"), "GET /club names the key's club");
  check(club.environment === "sandbox", "the club is in the sandbox");
  check(typeof club.earnRateBasisPoints === "number" && club.earnRateBasisPoints > 0, "the club earns points");
  const currency = club.payoutCurrency ?? "GBP";
  const minimum = club.minimumRedemptionPoints ?? 1;

  // Where the events API stands now, so we read back only this run's events.
  let cursor: string | undefined;
  for (;;) {
    const page = await client.events.list({ limit: 100, ...(cursor ? { after: cursor } : {}) });
    if (page.nextAfter) cursor = page.nextAfter;
    if (page.entries.length === 0) break;
  }

  const receiver = new Receiver(memberId, "member.created");
  const endpoint = await client.webhookEndpoints.create({
    url: await receiver.start(),
    description: `sdk scenario ${run}`,
  });
  receiver.verifier = new Webhook(endpoint.secret);
  check(endpoint.endpointId.startsWith("we_") && endpoint.status === "enabled", "webhook endpoint created, enabled");
  check(endpoint.secret.startsWith("whsec_"), "the create answer carries the signing secret");

  try {
    // Onboard.
    const created = await client.members.upsert({
      externalMemberId: memberId,
      firstName: "Ada",
      lastName: "Lovelace",
      email: `${memberId}@example.com`,
      wallet: {
        provider: "bank",
        walletRef: `w-${run}`,
        status: "active",
        bankAccount: { accountNumber: "12345678", sortCode: "112233", name: "Ada Lovelace" },
      },
    });
    check(created.status === "created" && created.payoutReady, "member onboarded, payout-ready");

    // Five settles, each worth enough that together they pass the minimum.
    const perSettle = Math.max(Math.ceil(minimum / 5) + 1, 20);
    const amountMinor = Math.ceil((perSettle * 10000) / club.earnRateBasisPoints);
    let awarded = 0;
    for (let i = 1; i <= 5; i++) {
      const s = await client.transactions.settled({
        eventId: `evt-${run}-${i}`,
        occurredAt: new Date(),
        member: { externalMemberId: memberId },
        transaction: {
          externalTransactionId: `tx-${run}-${i}`,
          merchantId: "m-42",
          merchantName: "Corner Shop",
          amountMinor,
          currency,
          settledAt: new Date(),
        },
      });
      awarded += s.pointsAwarded;
    }
    check(awarded >= minimum, `five settles awarded ${awarded} points`);

    // Three pages of two, one of them read by hand, all of them by the iterator.
    const pages: string[][] = [];
    let before: number | undefined;
    for (;;) {
      const page = await client.members.listPoints(memberId, { filter: "earned", limit: 2, ...(before ? { before } : {}) });
      pages.push(page.entries.map((e) => e.id));
      if (page.nextBefore === null) break;
      before = page.nextBefore;
    }
    check(pages.length === 3 && pages.flat().length === 5, "points history: 5 awards on 3 pages of 2");
    const iterated: string[] = [];
    for await (const e of client.members.iteratePoints(memberId, { filter: "earned", limit: 2 })) iterated.push(e.id);
    check(JSON.stringify(iterated) === JSON.stringify(pages.flat()), "iteratePoints yields the same entries in the same order");
    let txCount = 0;
    for await (const t of client.members.iterateTransactions(memberId, { limit: 2 })) if (t.type === "settled") txCount++;
    check(txCount === 5, "iterateTransactions yields the 5 settled transactions");

    const balance = await client.members.balance(memberId);
    check(balance.pointsBalance === awarded && balance.reservedPointsBalance === 0, "balance equals the awards");

    // Redeem; the same requestId again names the first redemption.
    const requestId = `rq-${run}`;
    const points = Math.max(minimum, 1);
    const accepted = await client.redemptions.create({
      requestId,
      member: { externalMemberId: memberId },
      redemption: { points, currency },
    });
    check(accepted.status === "payout_pending" && accepted.balances.reservedPointsBalance === points, "redemption accepted, points reserved");
    try {
      await client.redemptions.create({ requestId, member: { externalMemberId: memberId }, redemption: { points, currency } });
      check(false, "a second redemption with the same requestId is refused");
    } catch (e) {
      check(
        e instanceof MemberRewardsError && e.code === "duplicate_request_id" && e.status === 409 && e.redemptionId === accepted.redemptionId,
        "duplicate_request_id names the first redemption",
      );
    }
    const listed = await client.redemptions.list({ requestId });
    check(listed.entries.length === 1 && listed.entries[0]?.redemptionId === accepted.redemptionId, "GET /redemptions?requestId finds it");

    // The sandbox test helper pays it out.
    const paid = await client.testHelpers.payout(accepted.redemptionId, { outcome: "succeeded" });
    check(paid.status === "completed" && paid.payout.status === "succeeded", "test helper: payout succeeded, redemption completed");
    const after = await client.members.balance(memberId);
    check(after.reservedPointsBalance === 0 && after.lifetimePointsRedeemed === points, "the reserved points are burned");
    const fetched = await client.redemptions.get(accepted.redemptionId);
    check(fetched.status === "completed", "GET /redemptions/{id} shows it completed");

    // Webhooks: every event of this member arrives verified; the one answered
    // 500 comes again with the same webhook-id.
    const expected: EventType[] = [
      "member.created",
      ...Array<EventType>(5).fill("transaction.settled"),
      "redemption.created",
      "redemption.completed",
    ];
    await until("webhooks for every event of the member", 60, () => {
      const distinct = new Set(receiver.idsOf());
      return distinct.size >= expected.length ? true : undefined;
    });
    check(receiver.rejected.length === 0, `every delivery verified (${receiver.rejected.join("; ")})`);
    const types = [...new Map(receiver.deliveries.map((d) => [d.webhookId, d.event.type])).values()].sort();
    check(JSON.stringify(types) === JSON.stringify([...expected].sort()), "one webhook per event, of the expected types");
    const sequences = [...new Map(receiver.deliveries.map((d) => [d.webhookId, d.event.data.memberSequence])).values()].sort((a, b) => a - b);
    check(sequences.every((s, i) => s === sequences[0]! + i), "memberSequence has no gap");

    const retried = await until("the 500-answered webhook delivered again", 90, () => {
      const ids = receiver.idsOf("member.created");
      return ids.length >= 2 ? ids : undefined;
    });
    check(retried[0] === retried[1], "the retry carries the same webhook-id");
    const forced = receiver.deliveries.filter((d) => d.webhookId === retried[0]);
    check(forced[0]?.answered === 500 && forced[1]?.answered === 200, "first attempt answered 500, the retry 200");
    const attempts = await until("both attempts in the deliveries log", 30, async () => {
      const seen: (number | null)[] = [];
      for await (const d of client.webhookEndpoints.iterateDeliveries(endpoint.endpointId, { limit: 50 })) {
        if (d.eventId === retried[0]) seen.push(d.status);
      }
      return seen.includes(500) && seen.includes(200) ? seen : undefined;
    });
    check(attempts.length >= 2, "GET deliveries lists the failed attempt and the retry");

    // The events API has the same events, in the member's order.
    const fromApi: MemberRewardsEvent[] = await until("events listed by the API", 30, async () => {
      const mine: MemberRewardsEvent[] = [];
      for await (const e of client.events.iterate({ limit: 100, ...(cursor ? { after: cursor } : {}) })) {
        if (e.data.externalMemberId === memberId) mine.push(e);
      }
      return mine.length >= expected.length ? mine : undefined;
    });
    check(
      JSON.stringify(fromApi.map((e) => e.id).sort()) === JSON.stringify([...new Set(receiver.idsOf())].sort()),
      "GET /events lists exactly the events the webhooks brought",
    );

    // Endpoint management.
    const got = await client.webhookEndpoints.get(endpoint.endpointId);
    check(got.url === endpoint.url && !("secret" in got), "GET endpoint has no secret");
    check((await client.webhookEndpoints.list()).some((e) => e.endpointId === endpoint.endpointId), "the list has the endpoint");
    const updated = await client.webhookEndpoints.update(endpoint.endpointId, { description: `renamed ${run}` });
    check(updated.description === `renamed ${run}`, "update changes the description");
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.endpointId);
    check(rotated.secret.startsWith("whsec_") && rotated.secret !== endpoint.secret, "rotate-secret gives a new secret");
    receiver.verifier = new Webhook(rotated.secret); // the old one signs beside it: either alone must verify

    // Replay since the start: every event comes again, signed with both secrets.
    const seenBefore = receiver.deliveries.length;
    const replay = await client.webhookEndpoints.replay(endpoint.endpointId, startedAt);
    check(replay.replayed >= expected.length, `replay queued ${replay.replayed} events`);
    await until("the replayed events", 60, () =>
      receiver.deliveries.length - seenBefore >= expected.length ? true : undefined,
    );
    check(receiver.rejected.length === 0, "replayed deliveries verify with the new secret alone");

    // Close the member: the rest of the balance is forfeited.
    const closed = await client.members.close(memberId, { reason: "sdk scenario" });
    check(closed.status === "closed" && closed.pointsForfeited === awarded - points, "member closed, the rest forfeited");
  } finally {
    try {
      await client.webhookEndpoints.delete(endpoint.endpointId);
    } finally {
      await receiver.stop();
    }
  }
  try {
    await client.webhookEndpoints.get(endpoint.endpointId);
    check(false, "a deleted endpoint is gone");
  } catch (e) {
    check(e instanceof MemberRewardsError && e.code === "webhook_endpoint_not_found" && e.status === 404, "a deleted endpoint is webhook_endpoint_not_found");
  }
  console.log("scenario passed");
}

main().catch((e: unknown) => {
  if (e instanceof Mismatch) console.error(`FAIL - ${e.message}`);
  else if (e instanceof MemberRewardsError) {
    console.error(`FAIL - ${e.code} (HTTP ${e.status}, request ${e.requestId}): ${e.message}`, e.details);
  } else console.error("FAIL -", e);
  process.exit(1);
});
