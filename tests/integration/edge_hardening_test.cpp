// What a security review probes at the edge: bodies nginx spooled to a
// temp file, rate limits charged before the signature is checked, raw client bytes in answers and logs, HTML for 505, the ops
// listener reading a body before its token.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/stack_env.hpp"

using mr::test::client;
using mr::test::env;

namespace {

// One raw HTTP/1.1 exchange (Connection: close) from `source` (a loopback
// address), for what libcurl will not send: 1-byte chunks, HTTP/2.0 on an
// HTTP/1 line, a body before the token is checked.
struct Raw {
  long status = 0;
  std::string head, body;
  std::string all;  // every byte answered, for more than one response
  bool closed = false;  // nginx closed the connection (not a read timeout)
};

std::pair<std::string, int> host_port(const std::string& url) {
  const auto colon = url.rfind(':');
  return {url.substr(7, colon - 7), std::stoi(url.substr(colon + 1))};
}

// Gives up reading after `timeout_s` (the answer so far is returned);
// waits `pause_ms` before each piece after the first.
Raw raw_exchange(const std::string& url, const std::vector<std::string>& pieces,
                 const std::string& source = "127.0.0.1", int timeout_s = 30, int pause_ms = 0) {
  const auto [host, port] = host_port(url);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  cr_assert(fd >= 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &local.sin_addr);
  cr_assert_eq(::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local), 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  timeval tv{timeout_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  cr_assert_eq(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0 && pause_ms > 0) usleep(static_cast<useconds_t>(pause_ms) * 1000);
    if (::send(fd, pieces[i].data(), pieces[i].size(), MSG_NOSIGNAL) < 0) break;
  }
  std::string all;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) all.append(buf, static_cast<size_t>(n));
  ::close(fd);
  Raw out;
  out.closed = n == 0;
  out.all = all;
  const auto end = all.find("\r\n\r\n");
  out.head = all.substr(0, end);
  out.body = end == std::string::npos ? "" : all.substr(end + 4);
  if (all.size() > 12 && all.starts_with("HTTP/")) out.status = std::stol(all.substr(9, 3));
  return out;
}

std::string head_line(const std::string& name, const std::string& value) { return name + ": " + value + "\r\n"; }

// A body with a member whose name pads it to `size` bytes.
std::string padded_member(std::size_t size) {
  std::string body = R"({"partnerRef":"club-a","member":{"externalMemberId":")" + mr::test::unique("big") +
                     R"(","firstName":"A","lastName":"B","email":"a@b.c"},"pad":")";
  body += std::string(size - body.size() - 2, 'x') + "\"}";
  return body;
}

std::string request_head(const std::string& method, const std::string& path, const mr::HeaderList& headers,
                         bool close = true) {
  std::string head = method + " " + path + " HTTP/1.1\r\nHost: x\r\n" + (close ? "Connection: close\r\n" : "");
  for (const auto& [k, v] : headers) head += head_line(k, v);
  return head;
}

std::string one_byte_chunks(const std::string& body) {
  std::string out;
  for (char ch : body) out += "1\r\n" + std::string(1, ch) + "\r\n";
  return out + "0\r\n\r\n";
}

}  // namespace

// A signed 16 KiB body sent in 1-byte chunks outgrows nginx's buffer and is
// spooled to a temp file; it is read back from there and passes the edge.
Test(edge, spooled_signed_body_is_read_back) {
  auto c = client("A");
  const std::string body = padded_member(16 * 1024);
  auto headers = c.signed_headers("POST", "/api/v1/members", body);
  headers.emplace_back("Content-Type", "application/json");
  headers.emplace_back("X-MR-Idempotency-Key", mr::test::unique("idem"));
  headers.emplace_back("Transfer-Encoding", "chunked");
  const Raw r = raw_exchange(env("MR_BASE_URL"),
                             {request_head("POST", "/api/v1/members", headers) + "\r\n" + one_byte_chunks(body)});
  cr_expect_eq(r.status, 201, "%s\n%s", r.head.c_str(), r.body.c_str());
}

// A body that comes 200 ms after its headers is read when it arrives (nginx
// waits, and mr_auth decides in the body's callback), and the keep-alive
// connection then serves a request whose body came with its headers
// (decided at once, without running the phases a second time): each path
// gives back the reference reading the body took, exactly once.
Test(edge, late_body_is_read_and_the_connection_serves_the_next) {
  auto c = client("A");
  const auto signed_post = [&](const std::string& body, bool close) {
    auto headers = c.signed_headers("POST", "/api/v1/members", body);
    headers.emplace_back("Content-Type", "application/json");
    headers.emplace_back("X-MR-Idempotency-Key", mr::test::unique("idem"));
    headers.emplace_back("Content-Length", std::to_string(body.size()));
    return request_head("POST", "/api/v1/members", headers, close) + "\r\n";
  };
  const std::string late = padded_member(400), prompt = padded_member(400);
  const Raw r = raw_exchange(env("MR_BASE_URL"),
                             {signed_post(late, false), late + signed_post(prompt, true) + prompt}, "127.0.0.1", 5,
                             200);
  // Closed after the second answer (Connection: close): both requests were
  // freed; a reference left behind keeps the connection open.
  cr_expect(r.closed, "the connection was still open after 5 s: %s", r.all.c_str());
  cr_expect(r.all.starts_with("HTTP/1.1 201"), "%s", r.all.c_str());
  const auto second = r.all.find("HTTP/1.1 ", 1);
  cr_assert(second != std::string::npos, "one answer on the kept connection: %s", r.all.c_str());
  cr_expect(r.all.compare(second, 12, "HTTP/1.1 201") == 0, "%s", r.all.c_str());
}

// An unsigned body of some KiB, plain and in 1-byte chunks (whose framing
// outgrows nginx's buffer from 3 KB on): the edge's 401, never a 500.
Test(edge, large_unsigned_body_is_unauthorized) {
  auto c = client("A");
  for (std::size_t size : {3000u, 9000u, 16000u}) {
    const std::string body = padded_member(size);
    const mr::HeaderList headers{{"Content-Type", "application/json"}, {"X-MR-Key-Id", "mrk_sbx_nosuchkey"}};
    EXPECT_ERROR(c.send("POST", "/api/v1/members", body, headers), 401, "unauthorized");
    mr::HeaderList chunked_headers = headers;
    chunked_headers.emplace_back("Transfer-Encoding", "chunked");
    const Raw r = raw_exchange(env("MR_BASE_URL"), {request_head("POST", "/api/v1/members", chunked_headers) +
                                                    "\r\n" + one_byte_chunks(body)});
    cr_expect_eq(r.status, 401, "%zu bytes: %s", size, r.body.c_str());
  }
}

// 300 unsigned requests naming club E's real key id must not spend E's rate
// limit (keyed on the raw header, anyone knowing a key id could exhaust
// it): they are refused per client address, logged without key or club, and E's next
// signed request passes. Unknown key ids are limited per address too.
Test(edge, refused_requests_spend_the_address_not_the_key) {
  const std::string key_id = env("MR_KEY_E_ID");
  mr::MrClient c(env("MR_LIMITED_URL"), key_id, env("MR_KEY_E_SECRET"));
  int refused = 0, limited = 0;
  std::string refused_id;
  for (int i = 0; i < 300; ++i) {
    // Names the key, no timestamp or signature: invalid_request.
    auto r = c.send("GET", "/api/v1/members/rl/balance", "", {{"X-MR-Key-Id", key_id}});
    if (r.status == 400) ++refused;
    if (r.status == 429) ++limited;
    if (r.status == 400 && refused_id.empty()) refused_id = mr::test::header(r, "x-request-id");
  }
  cr_expect_eq(refused + limited, 300);
  cr_expect(limited > 0, "the per-address limit never refused (%d x 400)", refused);
  auto signed_get = c.get("/api/v1/members/rl/balance");
  cr_expect_neq(signed_get.status, 429, "the key's limit was spent by unsigned requests: %s", signed_get.body.c_str());
  cr_expect_neq(signed_get.status, 401, "%s", signed_get.body.c_str());

  // Logged only once verified: the refused request names no key or club,
  // the signed one names both.
  const std::string refused_line = mr::test::limited_log_line(refused_id);
  cr_assert(!refused_line.empty(), "no log line for %s", refused_id.c_str());
  cr_expect(refused_line.find("\"keyId\":\"\"") != std::string::npos, "%s", refused_line.c_str());
  cr_expect(refused_line.find("\"clubId\":\"\"") != std::string::npos, "%s", refused_line.c_str());
  const std::string signed_line = mr::test::limited_log_line(mr::test::header(signed_get, "x-request-id"));
  cr_expect(signed_line.find("\"keyId\":\"" + key_id + "\"") != std::string::npos, "%s", signed_line.c_str());
  cr_expect(std::regex_search(signed_line, std::regex("\"clubId\":\"[1-9][0-9]*\"")), "%s", signed_line.c_str());

  // Unknown key ids spend no key's limit: the address's is spent instead.
  mr::MrClient stranger(env("MR_LIMITED_URL"), "mrk_sbx_unknown", "x");
  int stranger_limited = 0;
  for (int i = 0; i < 100; ++i) {
    auto r = stranger.get("/api/v1/members/rl/balance");
    if (r.status == 429) {
      ++stranger_limited;
      EXPECT_ERROR(r, 429, "rate_limited");
    }
  }
  cr_expect(stranger_limited > 0);
}

// nginx's own 505 (a request line of HTTP/2.0) is an HTML page; every
// status nginx answers by itself must be the JSON envelope.
Test(edge, unsupported_http_version_is_json) {
  const Raw r = raw_exchange(env("MR_BASE_URL"), {"GET /api/v1/members/m1/balance HTTP/2.0\r\nHost: x\r\n\r\n"});
  cr_expect_eq(r.status, 400, "%s\n%s", r.head.c_str(), r.body.c_str());
  cr_expect(r.head.find("Content-Type: application/json") != std::string::npos, "%s", r.head.c_str());
  rapidjson::Document d = mr::parse_json(r.body);
  cr_expect(d.IsObject() && d.HasMember("error") && d["error"]["code"] == "invalid_request", "%s", r.body.c_str());
}

// The access log's route must not hold the decoded path's raw bytes
// (invalid UTF-8, markup): they are percent-encoded, and the line is valid
// UTF-8.
// Signed, so that the limited server charges club A's key: an unsigned
// request shares the refused-address zone with the rate test beside it,
// which empties that zone, and would then be answered 429 from /mr-error.
Test(edge, logged_route_has_no_raw_bytes) {
  mr::MrClient c(env("MR_LIMITED_URL"), env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
  auto r = c.get("/api/v1/members/%FF%3Cscript%3E/balance");
  cr_expect_neq(r.status, 429, "%s", r.body.c_str());
  const std::string id = mr::test::header(r, "x-request-id");
  const std::string line = mr::test::limited_log_line(id);
  cr_assert(!line.empty(), "no log line for %s", id.c_str());
  cr_expect(line.find("\"route\":\"/api/v1/members/%FF<script>/balance\"") != std::string::npos, "%s", line.c_str());
}

// mr_json is written unescaped ($mr_log_fields escapes what it holds, the
// rest is nginx's time, status and counters): hostile bytes in the path, in
// headers the edge reads and in the method leave every line a JSON object,
// and the signed request's route holds them percent-encoded.
Test(edge, every_access_log_line_is_json_whatever_the_client_sent) {
  auto c = mr::MrClient(env("MR_LIMITED_URL"), env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
  const std::string path = "/api/v1/members/%22%5C%1F%1A%0A%FF/balance";
  auto headers = c.signed_headers("GET", path, "");
  headers.emplace_back("traceparent", "00-\"\\\x1f-x");
  headers.emplace_back("X-MR-Idempotency-Key", "k\"\\\x1f");
  const Raw signed_get = raw_exchange(env("MR_LIMITED_URL"), {request_head("GET", path, headers) + "\r\n"});
  cr_assert_neq(signed_get.status, 0L, "%s", signed_get.all.c_str());
  const Raw named_key = raw_exchange(
      env("MR_LIMITED_URL"),
      {request_head("GET", "/api/v1/members/m/balance", {{"X-MR-Key-Id", "mrk\"\\\x1f\x1a"}}) + "\r\n"});
  // 429 when the rate test beside this one has spent the address's zone.
  cr_expect(named_key.status == 401 || named_key.status == 429, "%s", named_key.all.c_str());
  const Raw bad_method = raw_exchange(env("MR_LIMITED_URL"), {"GE\"T / HTTP/1.1\r\nHost: x\r\n\r\n"});
  cr_expect_eq(bad_method.status, 400L, "%s", bad_method.all.c_str());

  // nginx logs after the answer (after a lingering close, for the bad
  // request line): wait for each line by its request id.
  std::vector<std::string> lines;
  for (const Raw* r : {&signed_get, &named_key, &bad_method}) {
    const auto at = r->head.find("X-Request-Id: ");
    cr_assert_neq(at, std::string::npos, "%s", r->head.c_str());
    const std::string id = r->head.substr(at + 14, 32);
    lines.push_back(mr::test::limited_log_line(id));
    cr_assert(!lines.back().empty(), "no log line for %s", id.c_str());
  }
  rapidjson::Document d = mr::parse_json(lines[0]);
  cr_assert(d.IsObject(), "%s", lines[0].c_str());
  cr_expect_eq(std::string(d["route"].GetString()), "/api/v1/members/%22%5C%1F%1A%0A%FF/balance", "%s",
               lines[0].c_str());
  cr_expect_eq(std::string(d["traceparent"].GetString()), "", "%s", lines[0].c_str());
  cr_expect_eq(std::string(d["keyId"].GetString()), env("MR_KEY_A_ID"), "%s", lines[0].c_str());

  // And every line of the log, whichever test wrote it; not a last line
  // without its newline, which nginx may be writing as this reads (the
  // rate test beside this one sends hundreds).
  std::string log = mr::read_file(env("MR_STACK_DIR") + "/nginx/logs/limited-access.log");
  log.erase(log.rfind('\n') + 1);
  std::istringstream in(log);
  for (std::string each; std::getline(in, each);) {
    rapidjson::Document e;
    e.Parse(each.data(), each.size());
    cr_expect(!e.HasParseError() && e.IsObject() && e.HasMember("requestId") && e.HasMember("status"),
              "not a JSON log line: %s", each.c_str());
  }
}

// The ops listener read (and spooled) a body before looking at the token: a
// caller without it announcing a body it never sends is answered at once.
Test(edge, ops_token_before_body) {
  const Raw r = raw_exchange(env("MR_OPS_URL"), {"POST /payouts/po_x/fail HTTP/1.1\r\nHost: x\r\n"
                                                  "Content-Type: application/json\r\nContent-Length: 500000\r\n\r\n{"},
                             "127.0.0.1", 3);
  cr_expect_eq(r.status, 401, "%s\n%s", r.head.c_str(), r.body.c_str());
}
