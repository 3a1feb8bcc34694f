// A local HTTP server for the offline tests: records every request and lets
// each test script the answers.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createHash, createHmac } from "node:crypto";

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  receivedAt: number;
}

export type Handler = (req: Recorded, res: ServerResponse, index: number) => void;

export interface Stub {
  baseUrl: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export async function startStub(handler: Handler): Promise<Stub> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rec: Recorded = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAt: Date.now(),
      };
      requests.push(rec);
      handler(rec, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "application/json", "X-Request-Id": "req-" + status, ...headers });
  res.end(JSON.stringify(body));
}

export function ok(res: ServerResponse, data: unknown, status = 200): void {
  json(res, status, { ok: true, data });
}

export function fail(res: ServerResponse, status: number, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): void {
  json(res, status, { ok: false, error: { code, message: code + " message", requestId: "rid-" + code, ...extra } }, headers);
}

/** The signature the server would expect, computed here independently of the SDK. */
export function expectedSignature(secret: string, req: Recorded): string {
  const path = req.url.split("?")[0] ?? "";
  const hash = createHash("sha256").update(req.body, "utf8").digest("hex");
  const canonical = [req.headers["x-mr-timestamp"], req.method, path, hash].join("\n");
  return "v1=" + createHmac("sha256", secret).update(canonical).digest("hex");
}
