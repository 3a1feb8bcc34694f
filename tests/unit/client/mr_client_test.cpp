// The test client against a tiny in-process HTTP server: what goes on the
// wire is signed so that auth_core accepts it, and the answer is parsed.
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/mr_client.hpp"
#include "modules/auth/auth_core.hpp"
#include "signing/digest.hpp"
#include "signing/signature.hpp"

namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Binds `fd` to 127.0.0.1 on a port the kernel picks; returns the port.
int bind_loopback(int fd) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  cr_assert(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

struct Request {
  std::string method, target, body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::optional<std::string> header(std::string_view lower) const {
    for (const auto& [k, v] : headers)
      if (k == lower) return v;
    return std::nullopt;
  }
};

// Answers every request on 127.0.0.1:<port> with 201 and keeps the
// connection open (Content-Length framing) to show the client reuses it.
class Server {
 public:
  Server() : listener_(::socket(AF_INET, SOCK_STREAM, 0)) {
    port_ = bind_loopback(listener_.fd);
    cr_assert(::listen(listener_.fd, 8) == 0);
    thread_ = std::thread([this] { run(); });
  }
  ~Server() {
    ::shutdown(listener_.fd, SHUT_RDWR);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Request> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  int connections() const { return connections_; }

 private:
  void run() {
    for (;;) {
      const int c = ::accept(listener_.fd, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      Fd conn(c);
      serve(conn.fd);
    }
  }
  void serve(int fd) {
    std::string buf;
    char chunk[4096];
    for (;;) {
      std::size_t end;
      while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) return;
        buf.append(chunk, static_cast<std::size_t>(n));
      }
      Request r;
      std::string head = buf.substr(0, end);
      std::size_t pos = head.find("\r\n");
      const std::string line = head.substr(0, pos);
      r.method = line.substr(0, line.find(' '));
      r.target = line.substr(line.find(' ') + 1, line.rfind(' ') - line.find(' ') - 1);
      std::size_t length = 0;
      while (pos != std::string::npos && pos < head.size()) {
        const std::size_t next = head.find("\r\n", pos + 2);
        const std::string h = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
        const std::size_t colon = h.find(':');
        std::string name = h.substr(0, colon);
        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        std::string value = colon + 1 < h.size() ? h.substr(colon + 1) : "";
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        if (name == "content-length") length = std::stoul(value);
        r.headers.emplace_back(name, value);
        pos = next;
      }
      buf.erase(0, end + 4);
      while (buf.size() < length) {
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) return;
        buf.append(chunk, static_cast<std::size_t>(n));
      }
      r.body = buf.substr(0, length);
      buf.erase(0, length);
      const bool head_request = r.method == "HEAD";
      {
        std::lock_guard lock(mu_);
        requests_.push_back(std::move(r));
      }
      const std::string payload = R"({"ok":true,"data":{}})";
      std::string resp = "HTTP/1.1 201 Created\r\nX-Request-Id: req-1\r\nContent-Type: application/json\r\n"
                         "Content-Length: " + std::to_string(payload.size()) + "\r\n\r\n";
      if (!head_request) resp += payload;
      if (::send(fd, resp.data(), resp.size(), MSG_NOSIGNAL) < 0) return;
    }
  }

  Fd listener_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Request> requests_;
  std::atomic<int> connections_{0};
};

const std::string kSecret = "s3cr3t_base64url-value";

// Runs what the server received through the edge's own rules.
std::string verdict(const Request& r) {
  mr::auth::RequestFacts f;
  f.method = r.method;
  const std::string path = r.target.substr(0, r.target.find('?'));
  f.path = path;
  const auto key = r.header("x-mr-key-id"), ts = r.header("x-mr-timestamp"), sig = r.header("x-mr-signature"),
             idem = r.header("x-mr-idempotency-key"), ct = r.header("content-type");
  if (key) f.key_id = *key;
  if (ts) f.timestamp = *ts;
  if (sig) f.signature = *sig;
  if (idem) f.idempotency_key = *idem;
  if (ct) f.content_type = *ct;
  const std::string hash = mr::sha256_hex(r.body);
  f.body_sha256_hex = hash;
  const mr::auth::KeyLookup lookup = [](std::string_view id) -> std::optional<mr::auth::KeyView> {
    if (id != "mrk_sbx_t") return std::nullopt;
    return mr::auth::KeyView{kSecret, 3, "club-t"};
  };
  const auto v = mr::auth::check_request(f, lookup, std::chrono::system_clock::now());
  return v.error ? std::string(mr::code_name(*v.error)) + ": " + v.message : "ok";
}

}  // namespace

Test(mr_client, post_and_get_are_signed_as_the_edge_checks) {
  Server server;
  mr::MrClient c(server.url(), "mrk_sbx_t", kSecret);
  const std::string body = R"({"partnerRef":"club-t","note":"it's"})";
  const mr::HttpResponse p = c.post("/api/v1/members", body, "idem-1");
  cr_expect_eq(p.status, 201);
  cr_expect_eq(p.status_line, std::string("HTTP/1.1 201 Created"));
  cr_expect_eq(p.headers.at("x-request-id"), std::string("req-1"));
  cr_expect(p.error.empty());
  const rapidjson::Document d = mr::parse_json(p.body);
  cr_expect(d.IsObject() && d["ok"].IsTrue());

  const mr::HttpResponse g = c.get("/api/v1/members/m1/balance?from=2026-01-01&x=%2F");
  cr_expect_eq(g.status, 201);

  const auto reqs = server.requests();
  cr_assert_eq(reqs.size(), 2u);
  cr_expect_eq(reqs[0].method, std::string("POST"));
  cr_expect_eq(reqs[0].body, body);
  cr_expect_eq(reqs[0].header("content-type").value_or(""), std::string("application/json"));
  cr_expect_eq(reqs[0].header("x-mr-idempotency-key").value_or(""), std::string("idem-1"));
  cr_expect(!reqs[0].header("expect"), "no 100-continue round trip");
  cr_expect_eq(verdict(reqs[0]), std::string("ok"));

  cr_expect_eq(reqs[1].method, std::string("GET"));
  cr_expect_eq(reqs[1].target, std::string("/api/v1/members/m1/balance?from=2026-01-01&x=%2F"));
  cr_expect(!reqs[1].header("content-type"));
  cr_expect(reqs[1].body.empty());
  cr_expect_eq(verdict(reqs[1]), std::string("ok"), "the query is not signed");
  cr_expect_eq(server.connections(), 1, "one kept-alive connection per client");
}

Test(mr_client, send_passes_headers_exactly) {
  Server server;
  mr::MrClient c(server.url(), "mrk_sbx_t", kSecret);
  // Tampering: signed for one body, another sent.
  mr::HeaderList h = c.signed_headers("POST", "/api/v1/members", "{}");
  h.emplace_back("Content-Type", "application/json");
  h.emplace_back("X-MR-Idempotency-Key", "k");
  c.send("POST", "/api/v1/members", "{ }", h);
  // No Content-Type given: none sent, not curl's form default.
  c.send("POST", "/api/v1/members", "{}", c.signed_headers("POST", "/api/v1/members", "{}"));
  // An explicit empty value is sent as such.
  c.send("GET", "/api/v1/x", "", {{"X-MR-Key-Id", ""}});
  const mr::HttpResponse head = c.send("HEAD", "/api/v1/x", "", {});
  cr_expect_eq(head.status, 201);
  cr_expect(head.body.empty());

  const auto reqs = server.requests();
  cr_assert_eq(reqs.size(), 4u);
  cr_expect(verdict(reqs[0]).starts_with("invalid_signature"), "%s", verdict(reqs[0]).c_str());
  cr_expect(!reqs[1].header("content-type"));
  cr_expect(verdict(reqs[1]).starts_with("invalid_request"), "%s", verdict(reqs[1]).c_str());
  cr_expect_eq(reqs[2].header("x-mr-key-id").value_or("absent"), std::string(""));
  cr_expect_eq(reqs[3].method, std::string("HEAD"));
}

Test(mr_client, signed_headers_with_a_given_timestamp) {
  mr::MrClient c("http://unused", "mrk_sbx_t", kSecret);
  const auto h = c.signed_headers("get", "/api/v1/x", "", std::string("2026-11-22T10:00:00Z"));
  cr_assert_eq(h.size(), 3u);
  cr_expect_eq(h[0].second, std::string("mrk_sbx_t"));
  cr_expect_eq(h[1].second, std::string("2026-11-22T10:00:00Z"));
  const std::string canonical =
      mr::signing::canonical_string("2026-11-22T10:00:00Z", "GET", "/api/v1/x", mr::sha256_hex(""));
  cr_expect_eq(h[2].second, mr::signing::sign(kSecret, canonical));
}

Test(mr_client, no_answer_gives_status_zero_and_a_reason) {
  int port;
  {
    Fd s(::socket(AF_INET, SOCK_STREAM, 0));  // bound, never listening: refused
    port = bind_loopback(s.fd);
    mr::MrClient c("http://127.0.0.1:" + std::to_string(port), "k", "s");
    const mr::HttpResponse r = c.get("/api/v1/x");
    cr_expect_eq(r.status, 0);
    cr_expect(!r.error.empty());
  }
}

Test(mr_client, timestamps_round_trip) {
  const auto t = std::chrono::sys_days{std::chrono::November / 22 / 2026} + std::chrono::hours(10) +
                 std::chrono::milliseconds(999);
  cr_expect_eq(mr::rfc3339(t), std::string("2026-11-22T10:00:00Z"));
  const auto now = mr::auth::parse_timestamp(mr::now_rfc3339());
  cr_assert(now.has_value());
  cr_expect(std::chrono::abs(*now - std::chrono::system_clock::now()) < std::chrono::seconds(2));
}

// A POST's signature serves one idempotency key: two requests signed in
// this process never share a timestamp, however close together.
Test(mr_client, signing_timestamps_strictly_increase) {
  cr_expect_eq(mr::signing::format_timestamp_us(std::chrono::sys_days{std::chrono::November / 22 / 2026} +
                                                std::chrono::microseconds(1'234'567)),
               std::string("2026-11-22T00:00:01.234567Z"));
  std::string last = mr::now_rfc3339();
  for (int i = 0; i < 10000; ++i) {
    std::string next = mr::now_rfc3339();
    cr_assert(next > last, "%s after %s", next.c_str(), last.c_str());
    last = std::move(next);
  }
}

Test(mr_client, parse_json) {
  const rapidjson::Document ok = mr::parse_json(R"({"a":[1,2]})");
  cr_expect(ok.IsObject() && ok["a"].Size() == 2);
  cr_expect(mr::parse_json("{\"a\":").IsNull());
  cr_expect(mr::parse_json("").IsNull());
  // Not NUL-terminated: only the view's bytes are read.
  const std::string s = R"({"b":true}garbage)";
  cr_expect(mr::parse_json(std::string_view(s).substr(0, 10)).IsObject());
}

Test(mr_client, read_env_file_as_a_shell_would) {
  char path[] = "/tmp/mr-env-XXXXXX";
  const int fd = ::mkstemp(path);
  cr_assert(fd >= 0);
  ::close(fd);
  {
    std::ofstream out(path);
    out << "# written by the fixture\n"
        << "export MR_PORT=8081 MR_PG_PORT=5433 MR_REDIS_PORT='6380'\n"
        << "MR_BASE_URL='http://127.0.0.1:8081'\n"
        << "export MR_KEY_A_SECRET='ab'\\''cd'\n"
        << "MR_NAME=\"Club \\\"A\\\" \\$x\"   # trailing comment\n"
        << "MR_EMPTY=\n"
        << "MR_CRLF='v'\r\n"
        << "\n"
        << "not an assignment\n";
  }
  const auto env = mr::read_env_file(path);
  ::unlink(path);
  cr_expect_eq(env.at("MR_PORT"), std::string("8081"));
  cr_expect_eq(env.at("MR_PG_PORT"), std::string("5433"));
  cr_expect_eq(env.at("MR_REDIS_PORT"), std::string("6380"));
  cr_expect_eq(env.at("MR_BASE_URL"), std::string("http://127.0.0.1:8081"));
  cr_expect_eq(env.at("MR_KEY_A_SECRET"), std::string("ab'cd"));
  cr_expect_eq(env.at("MR_NAME"), std::string("Club \"A\" $x"));
  cr_expect_eq(env.at("MR_EMPTY"), std::string(""));
  cr_expect_eq(env.at("MR_CRLF"), std::string("v"));
  cr_expect_eq(env.size(), 8u);
  cr_expect(mr::read_env_file("/nonexistent/mr.env").empty());
}
