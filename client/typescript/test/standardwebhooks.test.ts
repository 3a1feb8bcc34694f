// The webhook vectors of client/test-vectors.json through the Standard
// Webhooks project's own npm library (standardwebhooks, a dev dependency
// pinned by package-lock.json): it must accept exactly the vectors every SDK
// accepts ("valid") and refuse every other one, so the service's format and
// the SDKs' checks cannot drift from the standard. The library takes one
// secret and a fixed 5-minute window on Date.now():
// - a receiver holding several secrets tries each (any acceptance accepts);
// - the clock is the vector's `now`, through Date.now;
// - a vector with its own tolerance T at distance d from its timestamp is
//   run at the same distance from the library's window edge: d - T + 300
//   (the edge itself is accepted on both sides, as the vectors say).
import { test } from "node:test";
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Webhook as StandardWebhook } from "standardwebhooks";

interface WebhookVerifyVector {
  name: string;
  secrets: string[];
  headers: Record<string, string>;
  body: string;
  now: number;
  toleranceSeconds?: number;
  expect: string;
  eventId?: string;
}
interface Vectors {
  webhookVerify: { defaultToleranceSeconds: number; vectors: WebhookVerifyVector[] };
}

const vectorsPath = process.env.MR_TEST_VECTORS ?? resolve(__dirname, "../../../test-vectors.json");
const vectors = JSON.parse(readFileSync(vectorsPath, "utf8")) as Vectors;
const LIBRARY_TOLERANCE = 300;

function libraryClock(v: WebhookVerifyVector): number {
  const tolerance = v.toleranceSeconds ?? vectors.webhookVerify.defaultToleranceSeconds;
  const sent = Number(v.headers["webhook-timestamp"] ?? Number.NaN);
  if (tolerance === LIBRARY_TOLERANCE || !Number.isInteger(sent)) return v.now;
  const distance = Math.abs(v.now - sent) - tolerance + LIBRARY_TOLERANCE;
  return v.now >= sent ? sent + distance : sent - distance;
}

function libraryAccepts(v: WebhookVerifyVector): { accepted: boolean; event?: { id?: string } } {
  const realNow = Date.now;
  Date.now = () => libraryClock(v) * 1000;
  try {
    for (const secret of v.secrets) {
      try {
        const event = new StandardWebhook(secret).verify(v.body, v.headers) as { id?: string };
        return { accepted: true, event };
      } catch {
        // the next secret, if any
      }
    }
    return { accepted: false };
  } finally {
    Date.now = realNow;
  }
}

test("the library's window is the SDKs' default", () => {
  assert.equal(vectors.webhookVerify.defaultToleranceSeconds, LIBRARY_TOLERANCE);
  assert.ok(vectors.webhookVerify.vectors.length >= 25);
});

for (const v of vectors.webhookVerify.vectors) {
  test(`standardwebhooks: ${v.name} -> ${v.expect === "valid" ? "accepted" : "refused"}`, () => {
    const got = libraryAccepts(v);
    assert.equal(got.accepted, v.expect === "valid", `the library ${got.accepted ? "accepts" : "refuses"} ${v.name}`);
    if (got.accepted && v.eventId !== undefined) assert.equal(got.event?.id, v.eventId);
  });
}
