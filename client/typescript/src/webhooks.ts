// Standard Webhooks v1 verification (contract section 10, "Delivery"):
// webhook-signature holds one or more "v1,<base64 HMAC-SHA256>" separated by
// spaces (two during a secret rotation), keyed with the base64-decoded part
// of the secret after "whsec_", over "{webhook-id}.{webhook-timestamp}.{body}".
import { createHmac, timingSafeEqual } from "node:crypto";
import type { MemberRewardsEvent } from "./types";

export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookVerificationReason =
  | "missing_header"
  | "invalid_secret"
  | "invalid_timestamp"
  | "timestamp_out_of_tolerance"
  | "no_matching_signature"
  | "invalid_payload";

/** Thrown by Webhook.verify; `reason` says which check failed. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** Anything that carries the request's headers: a fetch Headers, Node's
 *  IncomingHttpHeaders (lower-case keys, maybe arrays), a Map or a plain object. */
export type HeaderSource =
  | { get(name: string): string | null | undefined }
  | Record<string, string | string[] | undefined>;

export interface WebhookOptions {
  /** Largest allowed distance between webhook-timestamp and now, either way. Default 300 s. */
  toleranceSeconds?: number;
}

export interface VerifyOptions {
  /** The clock, for tests. */
  now?: Date;
}

function header(source: HeaderSource, name: string): string | undefined {
  if (typeof (source as { get?: unknown }).get === "function") {
    const v = (source as { get(name: string): string | null | undefined }).get(name);
    return v ?? undefined;
  }
  const record = source as Record<string, string | string[] | undefined>;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() === name) {
      const v = record[key];
      return Array.isArray(v) ? v.join(" ") : v;
    }
  }
  return undefined;
}

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new WebhookVerificationError("invalid_secret", "The webhook secret is not whsec_ followed by base64.");
  }
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0) throw new WebhookVerificationError("invalid_secret", "The webhook secret is empty.");
  return key;
}

function bodyBytes(body: string | Uint8Array): Buffer {
  return typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

function mac(key: Buffer, id: string, timestamp: string, body: Buffer): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`, "utf8").update(body).digest();
}

/**
 * The verifier of one endpoint's deliveries, in the Standard Webhooks
 * libraries' shape: made from the endpoint's secret (`whsec_...`), or
 * several while you roll a rotated one out (any match passes).
 *
 *   const wh = new Webhook(secret);
 *   const event = wh.verify(rawBody, req.headers); // throws WebhookVerificationError
 */
export class Webhook {
  private readonly keys: Buffer[];
  private readonly toleranceSeconds: number;

  constructor(secret: string | readonly string[], options: WebhookOptions = {}) {
    const secrets = typeof secret === "string" ? [secret] : [...secret];
    if (secrets.length === 0) throw new WebhookVerificationError("invalid_secret", "No webhook secret given.");
    this.keys = secrets.map(secretKey);
    this.toleranceSeconds = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  }

  /**
   * Checks a delivery and returns its event. `body` must be the raw bytes
   * (or the exact string) received, before any JSON parsing; `headers` the
   * request's (Node's IncomingHttpHeaders, a fetch Headers, a plain object).
   * Throws WebhookVerificationError when the message is not authentic.
   */
  verify<E = MemberRewardsEvent>(body: string | Uint8Array, headers: HeaderSource, options: VerifyOptions = {}): E {
    const id = header(headers, "webhook-id");
    const timestamp = header(headers, "webhook-timestamp");
    const signatures = header(headers, "webhook-signature");
    if (!id || !timestamp || !signatures) {
      throw new WebhookVerificationError(
        "missing_header",
        "webhook-id, webhook-timestamp and webhook-signature are all required.",
      );
    }
    if (!/^[0-9]{1,15}$/.test(timestamp)) {
      throw new WebhookVerificationError("invalid_timestamp", "webhook-timestamp is not Unix seconds.");
    }
    const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
    const sent = Number(timestamp);
    if (nowSeconds - sent > this.toleranceSeconds) {
      throw new WebhookVerificationError("timestamp_out_of_tolerance", "webhook-timestamp is older than the tolerance.");
    }
    if (sent - nowSeconds > this.toleranceSeconds) {
      throw new WebhookVerificationError(
        "timestamp_out_of_tolerance",
        "webhook-timestamp is further in the future than the tolerance.",
      );
    }
    const raw = bodyBytes(body);
    const expected = this.keys.map((k) => mac(k, id, timestamp, raw));
    let matched = false;
    for (const part of signatures.split(" ")) {
      const comma = part.indexOf(",");
      if (comma === -1 || part.slice(0, comma) !== "v1") continue; // other schemes are not ours
      const given = Buffer.from(part.slice(comma + 1), "base64");
      for (const want of expected) {
        // Both are 32 bytes when well-formed; a length mismatch cannot match.
        if (given.length === want.length && timingSafeEqual(given, want)) matched = true;
      }
    }
    if (!matched) {
      throw new WebhookVerificationError("no_matching_signature", "No v1 signature matches this message.");
    }
    try {
      return JSON.parse(raw.toString("utf8")) as E;
    } catch {
      throw new WebhookVerificationError("invalid_payload", "The signed body is not JSON.");
    }
  }

  /**
   * The webhook-signature value the service sends for this message, signed
   * with the first secret: "v1," + base64 HMAC. Useful to test your receiver.
   * `timestamp` is Unix seconds or a Date.
   */
  sign(msgId: string, timestamp: number | Date, body: string | Uint8Array): string {
    const seconds = typeof timestamp === "number" ? timestamp : Math.floor(timestamp.getTime() / 1000);
    return `v1,${mac(this.keys[0]!, msgId, String(seconds), bodyBytes(body)).toString("base64")}`;
  }
}
