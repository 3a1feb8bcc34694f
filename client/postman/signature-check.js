// Offline check of the collection's signing script: a local server that
// recomputes every request's X-MR-Signature (node:crypto, independently of
// CryptoJS) and answers a plain success. `node signature-check.js` runs
// newman against it and fails if any request was signed wrongly or sent
// without what a POST needs. Business assertions are not the point here.
"use strict";
const http = require("node:http");
const crypto = require("node:crypto");
const path = require("node:path");
const newman = require("newman");

const secret = "fJ3kq9V0s7bX2mN8pL4tR6wY1zC5dH0gA9eK3uQ7iOs";
const problems = [];
let seen = 0;

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    seen++;
    const body = Buffer.concat(chunks);
    const pathOnly = req.url.split("?")[0];
    const hash = crypto.createHash("sha256").update(body).digest("hex");
    const ts = req.headers["x-mr-timestamp"];
    const canonical = `${ts}\n${req.method}\n${pathOnly}\n${hash}`;
    const want = "v1=" + crypto.createHmac("sha256", secret).update(canonical).digest("hex");
    const where = `${req.method} ${req.url}`;
    if (req.headers["x-mr-key-id"] !== "mrk_sbx_check") problems.push(`${where}: X-MR-Key-Id`);
    if (!ts || Math.abs(Date.parse(ts) - Date.now()) > 60000) problems.push(`${where}: X-MR-Timestamp ${ts}`);
    if (req.headers["x-mr-signature"] !== want) problems.push(`${where}: signature ${req.headers["x-mr-signature"]} != ${want}`);
    if (req.method === "POST") {
      if (!/^application\/json/.test(req.headers["content-type"] || "")) problems.push(`${where}: Content-Type`);
      if (!/^[!-~]{1,255}$/.test(req.headers["x-mr-idempotency-key"] || "")) problems.push(`${where}: idempotency key`);
      try {
        const json = JSON.parse(body.toString("utf8"));
        if (json.partnerRef !== "check-club") problems.push(`${where}: partnerRef`);
        if (body.includes("{{")) problems.push(`${where}: unresolved variable in the body`);
      } catch {
        problems.push(`${where}: body is not JSON`);
      }
    }
    res.writeHead(200, { "Content-Type": "application/json", "X-Request-Id": "0".repeat(32) });
    res.end(JSON.stringify({ ok: true, data: { entries: [] } }));
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  newman.run(
    {
      collection: require(path.join(__dirname, "member-rewards.postman_collection.json")),
      envVar: [
        { key: "baseUrl", value: `http://127.0.0.1:${port}` },
        { key: "keyId", value: "mrk_sbx_check" },
        { key: "keySecret", value: secret },
        { key: "partnerRef", value: "check-club" },
      ],
      reporters: [],
    },
    (err, summary) => {
      server.close();
      const requests = summary ? summary.run.stats.requests.total : 0;
      if (err) problems.push(`newman: ${err.message}`);
      if (seen === 0 || seen !== requests) problems.push(`server saw ${seen} requests, newman sent ${requests}`);
      for (const p of problems) console.error(`FAIL - ${p}`);
      console.log(`${seen} requests checked, ${problems.length} problems`);
      process.exit(problems.length === 0 ? 0 : 1);
    },
  );
});
