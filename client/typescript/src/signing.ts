// Request signing, contract section 2: the canonical string is the timestamp
// as sent, the method in upper case, the path as on the request line (up to
// "?", not decoded) and the hex SHA-256 of the raw body, joined by "\n"; the
// signature is "v1=" + hex HMAC-SHA256 keyed with the secret's ASCII bytes.
import { createHash, createHmac } from "node:crypto";

/** Hex SHA-256 of the empty body (every GET). */
export const EMPTY_BODY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

export type BodyBytes = string | Uint8Array;

function bytes(body: BodyBytes): Uint8Array {
  return typeof body === "string" ? Buffer.from(body, "utf8") : body;
}

/** Lower-case hex SHA-256 of the raw body bytes (a string is hashed as UTF-8). */
export function sha256Hex(body: BodyBytes): string {
  return createHash("sha256").update(bytes(body)).digest("hex");
}

/** The path as signed: everything before the first "?". */
export function pathWithoutQuery(pathAndQuery: string): string {
  const q = pathAndQuery.indexOf("?");
  return q === -1 ? pathAndQuery : pathAndQuery.slice(0, q);
}

/** The four-line canonical string (no trailing newline). */
export function canonicalString(timestamp: string, method: string, path: string, body: BodyBytes = ""): string {
  return `${timestamp}\n${method.toUpperCase()}\n${pathWithoutQuery(path)}\n${sha256Hex(body)}`;
}

/** `X-MR-Signature` for a request: "v1=" + lower-case hex HMAC-SHA256. */
export function signRequest(secret: string, timestamp: string, method: string, path: string, body: BodyBytes = ""): string {
  const mac = createHmac("sha256", Buffer.from(secret, "utf8"));
  mac.update(canonicalString(timestamp, method, path, body), "utf8");
  return `v1=${mac.digest("hex")}`;
}

/** Now as RFC 3339 UTC with milliseconds, as `X-MR-Timestamp` wants it. */
export function timestampNow(now: Date = new Date()): string {
  return now.toISOString();
}

export interface SignedHeaders {
  "X-MR-Key-Id": string;
  "X-MR-Timestamp": string;
  "X-MR-Signature": string;
}

/** The three authentication headers for one request. */
export function signedHeaders(
  keyId: string,
  secret: string,
  method: string,
  path: string,
  body: BodyBytes = "",
  timestamp: string = timestampNow(),
): SignedHeaders {
  return {
    "X-MR-Key-Id": keyId,
    "X-MR-Timestamp": timestamp,
    "X-MR-Signature": signRequest(secret, timestamp, method, path, body),
  };
}
