// One logical call: sign, send, retry what may be retried (with the same
// idempotency key and body, signed afresh each attempt), and turn the answer
// into data or a MemberRewardsError.
import { randomUUID } from "node:crypto";
import { MemberRewardsConnectionError, MemberRewardsError, type ErrorDetail } from "./errors";
import { signRequest, timestampNow } from "./signing";

export const SDK_VERSION = "1.0.0";

export interface ClientOptions {
  /** e.g. "https://sandbox.example.com" or "http://127.0.0.1:8080"; paths start at /api/v1. */
  baseUrl: string;
  /** `mrk_sbx_...` or `mrk_prd_...`. */
  keyId: string;
  /** The key's secret as issued (used as ASCII bytes, not decoded). */
  keySecret: string;
  /** Your club's reference; the client puts it in every body. */
  partnerRef: string;
  /** Per attempt, from sending to the whole answer read. Default 30 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 3; 0 turns retrying off. */
  maxRetries?: number;
  /** First backoff step; doubles per retry, with jitter. Default 500 ms. */
  initialRetryDelayMs?: number;
  /** Cap of one backoff step. Default 8 000 ms. */
  maxRetryDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error is thrown. Default 60 s. */
  maxRetryAfterSeconds?: number;
  /** Replaces the global fetch (proxies, tests). */
  fetch?: typeof fetch;
  /** Appended to the User-Agent. */
  userAgent?: string;
}

export interface RequestOptions {
  /** POST only: the key of this logical request. Default: a new random one per call, kept across its retries. */
  idempotencyKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  /** Cancels the call, including a wait between retries. */
  signal?: AbortSignal;
}

export type QueryValue = string | number | readonly string[] | undefined;

export interface CallSpec {
  method: "GET" | "POST";
  /** Path from the base URL's root, segments already percent-encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  /** JSON body (POST). */
  body?: unknown;
}

/** A successful answer with what the caller may want beside the data. */
export interface ApiResponse<T> {
  data: T;
  status: number;
  requestId: string | null;
  idempotentReplay: boolean;
  idempotencyKey: string | undefined;
  attempts: number;
}

interface Envelope {
  ok?: unknown;
  data?: unknown;
  error?: {
    code?: unknown;
    message?: unknown;
    requestId?: unknown;
    details?: unknown;
    redemptionId?: unknown;
  };
}

/**
 * Percent-encodes one path segment (a member, redemption or endpoint id).
 * An id the API cannot take (not 1-128 printable ASCII characters) or one a
 * URL parser would resolve ("." and "..", also encoded) is refused before
 * anything is sent: a MemberRewardsError with code "invalid_argument".
 */
export function pathSegment(value: string): string {
  if (typeof value !== "string" || !/^[ -~]{1,128}$/.test(value) || value === "." || value === "..") {
    throw new MemberRewardsError({
      code: "invalid_argument",
      message: `${JSON.stringify(value)} is no id: 1-128 printable ASCII characters, not "." or ".."`,
      status: 0,
    });
  }
  return encodeURIComponent(value);
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const text = Array.isArray(value)
      ? value.map((v) => encodeURIComponent(v)).join(",")
      : encodeURIComponent(String(value));
    parts.push(`${encodeURIComponent(name)}=${text}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

/** Seconds from a Retry-After header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^[0-9]+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function isRetryableAnswer(status: number, code: string): boolean {
  return status === 429 || status === 503 || (status === 409 && code === "idempotency_in_progress");
}

export class Transport {
  readonly partnerRef: string;
  private readonly baseUrl: URL;
  private readonly basePath: string;
  private readonly keyId: string;
  private readonly keySecret: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly initialRetryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly maxRetryAfterSeconds: number;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;

  constructor(options: ClientOptions) {
    for (const name of ["baseUrl", "keyId", "keySecret", "partnerRef"] as const) {
      if (typeof options[name] !== "string" || options[name] === "") throw new TypeError(`${name} is required`);
    }
    const base = new URL(options.baseUrl);
    if (base.protocol !== "http:" && base.protocol !== "https:") throw new TypeError("baseUrl must be http(s)");
    if (base.search || base.hash) throw new TypeError("baseUrl must not have a query or fragment");
    this.baseUrl = base;
    this.basePath = base.pathname.replace(/\/+$/, ""); // "" for the root
    this.keyId = options.keyId;
    this.keySecret = options.keySecret;
    this.partnerRef = options.partnerRef;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.initialRetryDelayMs = options.initialRetryDelayMs ?? 500;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 8_000;
    this.maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 60;
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("no fetch available: Node 18 or later is required");
    this.fetchImpl = f;
    this.userAgent = `member-rewards-node/${SDK_VERSION} node/${process.versions.node}` +
      (options.userAgent ? ` ${options.userAgent}` : "");
  }

  /** Backoff before retry number `retry` (0-based): exponential, half of it jittered. */
  backoffMs(retry: number, retryAfterSeconds: number | undefined): number {
    const step = Math.min(this.maxRetryDelayMs, this.initialRetryDelayMs * 2 ** retry);
    const jittered = step / 2 + Math.random() * (step / 2);
    return retryAfterSeconds === undefined ? jittered : Math.max(retryAfterSeconds * 1000, jittered);
  }

  async call<T>(spec: CallSpec, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const expectedPath = this.basePath + spec.path;
    const full = new URL(this.baseUrl.origin + expectedPath + queryString(spec.query));
    // Sign exactly the path fetch puts on the request line; a URL parser that
    // would rewrite it (dot segments) must not make us sign another one.
    const signedPath = full.pathname;
    if (signedPath !== expectedPath) throw new RangeError(`path ${spec.path} would not be sent as written`);

    const body = spec.method === "POST" ? JSON.stringify(spec.body ?? {}) : "";
    const idempotencyKey = spec.method === "POST" ? options.idempotencyKey ?? randomUUID() : undefined;
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;

    for (let attempt = 0; ; attempt++) {
      const mayRetry = attempt < maxRetries;
      const timestamp = timestampNow();
      const headers: Record<string, string> = {
        Accept: "application/json",
        "User-Agent": this.userAgent,
        "X-MR-Key-Id": this.keyId,
        "X-MR-Timestamp": timestamp,
        "X-MR-Signature": signRequest(this.keySecret, timestamp, spec.method, signedPath, body),
      };
      if (idempotencyKey !== undefined) {
        headers["Content-Type"] = "application/json";
        headers["X-MR-Idempotency-Key"] = idempotencyKey;
      }

      let status: number;
      let text: string;
      let responseHeaders: Headers;
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      const onCallerAbort = (): void => controller.abort();
      options.signal?.addEventListener("abort", onCallerAbort, { once: true });
      try {
        if (options.signal?.aborted) throw options.signal.reason;
        const init: RequestInit = { method: spec.method, headers, signal: controller.signal, redirect: "manual" };
        if (spec.method === "POST") init.body = body;
        const response = await this.fetchImpl(full.href, init);
        status = response.status;
        responseHeaders = response.headers;
        text = await response.text();
      } catch (cause) {
        if (options.signal?.aborted) {
          throw new MemberRewardsConnectionError({ code: "aborted", message: "The call was aborted.", idempotencyKey, cause });
        }
        const error = new MemberRewardsConnectionError({
          code: timedOut ? "timeout" : "connection_error",
          message: timedOut
            ? `No complete answer within ${timeoutMs} ms.`
            : `Could not reach ${this.baseUrl.origin}: ${(cause as Error)?.message ?? String(cause)}`,
          idempotencyKey,
          cause,
        });
        if (!mayRetry) throw error;
        await this.wait(attempt, undefined, options.signal, idempotencyKey);
        continue;
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onCallerAbort);
      }

      const headerRequestId = responseHeaders.get("x-request-id");
      let envelope: Envelope | undefined;
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) envelope = parsed as Envelope;
      } catch {
        envelope = undefined;
      }

      if (envelope?.ok === true && status >= 200 && status < 300 && "data" in envelope) {
        return {
          data: envelope.data as T,
          status,
          requestId: headerRequestId,
          idempotentReplay: responseHeaders.get("x-mr-idempotent-replay") === "true",
          idempotencyKey,
          attempts: attempt + 1,
        };
      }

      const retryAfterSeconds = parseRetryAfter(responseHeaders.get("retry-after"));
      const e = envelope?.error;
      const error =
        envelope?.ok === false && e && typeof e.code === "string"
          ? new MemberRewardsError({
              code: e.code,
              message: typeof e.message === "string" ? e.message : e.code,
              status,
              requestId: typeof e.requestId === "string" ? e.requestId : headerRequestId,
              details: Array.isArray(e.details) ? (e.details as ErrorDetail[]) : [],
              ...(typeof e.redemptionId === "string" ? { redemptionId: e.redemptionId } : {}),
              ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
              idempotencyKey,
            })
          : new MemberRewardsError({
              code: "invalid_response",
              message: `HTTP ${status} without the API's JSON envelope`,
              status,
              requestId: headerRequestId,
              ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
              idempotencyKey,
            });
      if (!mayRetry || !isRetryableAnswer(status, error.code)) throw error;
      if (retryAfterSeconds !== undefined && retryAfterSeconds > this.maxRetryAfterSeconds) throw error;
      await this.wait(attempt, retryAfterSeconds, options.signal, idempotencyKey);
    }
  }

  private async wait(
    attempt: number,
    retryAfterSeconds: number | undefined,
    signal: AbortSignal | undefined,
    idempotencyKey: string | undefined,
  ): Promise<void> {
    try {
      await sleep(this.backoffMs(attempt, retryAfterSeconds), signal);
    } catch (cause) {
      throw new MemberRewardsConnectionError({ code: "aborted", message: "The call was aborted.", idempotencyKey, cause });
    }
  }
}
