// mr_load: the benchmarks' HTTP load generator. Keep-alive connections on
// epoll, one event loop per thread, each connection sending its next
// request as soon as the previous answer is complete (closed loop, like
// wrk). Unlike wrk it signs every request itself when asked (each settled
// POST needs its own idempotency key and signature) and counts every answer
// by status: an answer other than --expect, a closed connection or a
// timeout is a failed request, printed, never dropped.
//
//   mr_load --url http://127.0.0.1:PORT --conns N --seconds S [--threads T]
//           [--expect STATUS] [--min-ok N] (fixed request, --settle, --reverse or --redeem)
//   --min-ok: go on past S seconds until N answers came (at most 30 s more)
//   fixed:  --method M --path P [--body B] [--key ID --secret S [--bad-signature]]
//           (--bad-signature: the signature's last hex digit changed)
//           [--idem KEY] [--header "Name: value"]...   one request, signed once at the start
//   settle: --key ID --secret S --settle PARTNER_REF --member-prefix P
//           a settled transaction for member P<conn>-<1..16>, new key and
//           signature per request
//   reverse: --key ID --secret S --reverse PARTNER_REF --member-prefix P --tx-prefix X
//           the whole of settled transaction X<conn>-<seq> (seq 0, 1, ...
//           per connection) of member P<conn>-<seq % 16 + 1>: the caller
//           settles those first (bench/seed_reversals.sql)
//   redeem: --key ID --secret S --redeem PARTNER_REF --member-prefix P
//           a 1-point redemption (GBP) for member P<conn>-<1..16> under a
//           new requestId (expect 202; the members need points and wallets)
//
// Prints one line: rate=… p50_ms=… p99_ms=… requests=… ok=… failed=…
// unfinished=… statuses=200:n,… (0: no answer: connection closed or
// failed); exits 1 when any request failed or none succeeded. Requests
// still waiting at the end are unfinished, not failed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "client/mr_client.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Answers as expected so far, over all threads: --min-ok runs past the end
// until this many came (a slow line still yields a rate), at most 30 s more.
std::atomic<long> g_ok{0};

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  int conns = 8, threads = 1, expect = 200;
  long min_ok = 0;
  double seconds = 5;
  std::string method = "GET", path = "/", body, key, secret, idem, member_prefix, tx_prefix;
  // --settle, --reverse, --redeem: a new signed write per request.
  enum class Write { none, settle, reverse, redeem } write = Write::none;
  std::string write_ref;  // the partnerRef of those writes
  mr::HeaderList headers;  // --header "Name: value", added as given
  bool bad_signature = false;
};

// Builds the bytes of one request; `conn` and `seq` make settle requests unique.
using RequestMaker = std::function<std::string(int conn, long seq)>;

std::string http_request(std::string_view method, std::string_view path, std::string_view body,
                         const mr::HeaderList& headers) {
  std::string out;
  out.reserve(512 + body.size());
  out.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: bench\r\n");
  for (const auto& [k, v] : headers) out.append(k).append(": ").append(v).append("\r\n");
  if (!body.empty() || method == "POST") out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n").append(body);
  return out;
}

mr::HeaderList sign(const mr::MrClient& client, const Options& o, std::string_view method, std::string_view path,
                    std::string_view body) {
  mr::HeaderList h = client.signed_headers(method, path.substr(0, path.find('?')), body);
  // Well-formed ("v1=" and 64 hex digits) and wrong in its last digit, as a
  // wrong secret's would be: the edge computes the HMAC before refusing it.
  if (o.bad_signature) h[2].second.back() = h[2].second.back() == '0' ? '1' : '0';
  return h;
}

RequestMaker fixed_request(const Options& o) {
  mr::HeaderList headers;
  if (!o.key.empty()) headers = sign(mr::MrClient("", o.key, o.secret), o, o.method, o.path, o.body);
  if (o.method == "POST") headers.emplace_back("Content-Type", "application/json");
  if (!o.idem.empty()) headers.emplace_back("X-MR-Idempotency-Key", o.idem);
  headers.insert(headers.end(), o.headers.begin(), o.headers.end());
  const std::string bytes = http_request(o.method, o.path, o.body, headers);
  return [bytes](int, long) { return bytes; };
}

// The body and path of write `seq` on connection `conn` (unique by `run`).
std::pair<std::string, std::string> write_body(const Options& o, const std::string& run, int conn, long seq) {
  const std::string member = o.member_prefix + std::to_string(conn) + "-" + std::to_string(seq % 16 + 1);
  const std::string id = "t" + run + "-" + std::to_string(conn) + "-" + std::to_string(seq);
  const std::string head = R"({"partnerRef":")" + o.write_ref + R"(",)";
  switch (o.write) {
    case Options::Write::reverse:
      return {head + R"("eventId":"e-)" + id + R"(","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":")" +
                  member + R"("},"transaction":{"externalTransactionId":")" + o.tx_prefix + std::to_string(conn) + "-" +
                  std::to_string(seq) + R"(","currency":"GBP"},"reason":"bench"})",
              "/api/v1/transactions/reversed"};
    case Options::Write::redeem:
      return {head + R"("requestId":"r-)" + id + R"(","member":{"externalMemberId":")" + member +
                  R"("},"redemption":{"points":1,"currency":"GBP"}})",
              "/api/v1/redemptions"};
    default:
      return {head + R"("eventId":"e-)" + id + R"(","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":")" +
                  member + R"("},"transaction":{"externalTransactionId":")" + id +
                  R"(","merchantId":"m1","merchantName":"Bench Shop","amountMinor":1000,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"}})",
              "/api/v1/transactions/settled"};
  }
}

RequestMaker write_request(const Options& o, const std::string& run) {
  auto client = std::make_shared<mr::MrClient>("", o.key, o.secret);
  return [o, run, client](int conn, long seq) {
    const auto [body, path] = write_body(o, run, conn, seq);
    mr::HeaderList h = sign(*client, o, "POST", path, body);
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("X-MR-Idempotency-Key", "k" + run + "-" + std::to_string(conn) + "-" + std::to_string(seq));
    return http_request("POST", path, body, h);
  };
}

struct Result {
  long ok = 0, failed = 0, unfinished = 0;
  std::map<int, long> statuses;  // 0: connection closed, error or timeout
  std::vector<std::uint32_t> latencies_us;
  std::string first_failure;
};

// Where `needle` (lower case) starts in `hay`, ignoring ASCII case; npos if nowhere.
std::size_t find_ci(std::string_view hay, std::string_view needle) {
  const auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char h, char n) {
    return (n >= 'a' && n <= 'z' ? (h | 0x20) : h) == n;
  });
  return it == hay.end() ? std::string_view::npos : static_cast<std::size_t>(it - hay.begin());
}

// One response parsed incrementally from `in`: status, then Content-Length
// or chunked body. Returns bytes consumed when complete, 0 when more is
// needed, -1 when malformed.
long parse_response(std::string_view in, int& status, bool& closes) {
  const auto head_end = in.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return 0;
  if (in.size() < 12 || !in.starts_with("HTTP/1.")) return -1;
  status = std::atoi(std::string(in.substr(9, 3)).c_str());
  const std::string_view head = in.substr(0, head_end);
  const std::size_t body_start = head_end + 4;
  closes = find_ci(head, "\r\nconnection: close") != std::string_view::npos;
  if (auto cl = find_ci(head, "\r\ncontent-length:"); cl != std::string_view::npos) {
    const long len = std::atol(std::string(head.substr(cl + 17, 24)).c_str());
    return in.size() >= body_start + len ? static_cast<long>(body_start + len) : 0;
  }
  if (find_ci(head, "\r\ntransfer-encoding: chunked") != std::string_view::npos) {
    std::size_t pos = body_start;
    for (;;) {
      const auto eol = in.find("\r\n", pos);
      if (eol == std::string_view::npos) return 0;
      const long size = std::strtol(std::string(in.substr(pos, eol - pos)).c_str(), nullptr, 16);
      pos = eol + 2 + size + 2;
      if (pos > in.size()) return 0;
      if (size == 0) return static_cast<long>(pos);
    }
  }
  return static_cast<long>(body_start);  // no body (e.g. 204, 304)
}

struct Conn {
  int fd = -1, index = 0;
  long seq = 0;
  std::string out, in;
  std::size_t sent = 0;
  bool watch_out = false;  // EPOLLOUT registered: connecting, or bytes the socket did not take
  Clock::time_point started;
};

int connect_to(const Options& o) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(o.port));
  inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

void run_thread(const Options& o, int first_conn, int nconns, const RequestMaker& make, Clock::time_point end,
                Result& res) {
  const int ep = epoll_create1(0);
  std::vector<Conn> conns(static_cast<std::size_t>(nconns));
  std::vector<Conn*> failed_conns;
  auto fail = [&](Conn& c, std::string why) {
    res.failed++;
    res.statuses[0]++;
    if (res.first_failure.empty()) res.first_failure = std::move(why);
    if (c.fd >= 0) close(c.fd);
    c.fd = -1;
    failed_conns.push_back(&c);  // reconnected by the loop, after a pause
  };
  // Write interest only while it is needed (like wrk): a request on a live
  // connection is sent at once, so a request costs no epoll_ctl and no
  // extra wake-up, and the client takes less of the machine from what it
  // measures.
  auto watch_out = [&](Conn& c, bool on) {
    if (c.watch_out == on) return;
    c.watch_out = on;
    epoll_event ev{on ? EPOLLIN | EPOLLOUT : EPOLLIN, {.ptr = &c}};
    epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
  };
  auto send_rest = [&](Conn& c) {
    const ssize_t w = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN) {
      fail(c, std::string("send: ") + std::strerror(errno));
      return;
    }
    if (w > 0) c.sent += static_cast<std::size_t>(w);
    watch_out(c, c.sent < c.out.size());
  };
  auto start_request = [&](Conn& c) {
    const bool fresh = c.fd < 0;
    if (fresh) {
      c.fd = connect_to(o);
      if (c.fd < 0) return false;
      c.watch_out = true;  // sent once the connect completes
      epoll_event ev{EPOLLIN | EPOLLOUT, {.ptr = &c}};
      epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
    }
    c.out = make(c.index, c.seq++);
    c.sent = 0;
    c.in.clear();
    c.started = Clock::now();
    if (!fresh) send_rest(c);
    return true;
  };
  for (int i = 0; i < nconns; ++i) {
    conns[i].index = first_conn + i;
    if (!start_request(conns[i])) fail(conns[i], "connect failed");
  }
  std::vector<epoll_event> events(static_cast<std::size_t>(nconns));
  char buf[65536];
  const auto hard_end = end + std::chrono::seconds(30);
  auto running = [&] {
    const auto now = Clock::now();
    return now < end || (now < hard_end && g_ok.load(std::memory_order_relaxed) < o.min_ok);
  };
  while (running()) {
    if (!failed_conns.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      auto retry = std::move(failed_conns);
      failed_conns.clear();
      for (Conn* c : retry)
        if (!start_request(*c)) fail(*c, "connect failed");
    }
    const int n = epoll_wait(ep, events.data(), nconns, 100);
    for (int i = 0; i < n; ++i) {
      Conn& c = *static_cast<Conn*>(events[i].data.ptr);
      if (c.fd < 0) continue;
      if ((events[i].events & EPOLLOUT) && c.sent < c.out.size()) {
        send_rest(c);
        if (c.fd < 0) continue;
      }
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        const ssize_t r = recv(c.fd, buf, sizeof buf, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN)) {
          fail(c, r == 0 ? "connection closed by server" : std::string("recv: ") + std::strerror(errno));
          continue;
        }
        if (r > 0) c.in.append(buf, static_cast<std::size_t>(r));
        int status = 0;
        bool closes = false;
        const long used = parse_response(c.in, status, closes);
        if (used < 0) {
          fail(c, "malformed response: " + c.in.substr(0, 80));
          continue;
        }
        if (used == 0) continue;
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - c.started).count();
        res.latencies_us.push_back(static_cast<std::uint32_t>(us));
        res.statuses[status]++;
        if (status == o.expect) {
          res.ok++;
          g_ok.fetch_add(1, std::memory_order_relaxed);
        } else {
          res.failed++;
          if (res.first_failure.empty()) res.first_failure = c.in.substr(0, 400);
        }
        if (closes) {  // keepalive_requests reached: a new connection, not a failure
          close(c.fd);
          c.fd = -1;
        }
        if (running() && !start_request(c)) fail(c, "connect failed");
      }
    }
  }
  // A request still in flight at the end is unfinished: slow is not failed
  // (a stuck server shows as a zero rate).
  for (auto& c : conns) {
    if (c.fd < 0) continue;
    res.unfinished++;
    close(c.fd);
  }
  close(ep);
}

bool parse_url(const std::string& url, Options& o) {
  const std::string prefix = "http://";
  if (!url.starts_with(prefix)) return false;
  const auto colon = url.find(':', prefix.size());
  if (colon == std::string::npos) return false;
  o.host = url.substr(prefix.size(), colon - prefix.size());
  o.port = std::atoi(url.c_str() + colon + 1);
  return o.port > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "mr_load: %s wants a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--url") {
      if (!parse_url(next(), o)) return std::fprintf(stderr, "mr_load: --url http://HOST:PORT\n"), 2;
    } else if (a == "--conns") o.conns = std::stoi(next());
    else if (a == "--threads") o.threads = std::stoi(next());
    else if (a == "--seconds") o.seconds = std::stod(next());
    else if (a == "--expect") o.expect = std::stoi(next());
    else if (a == "--min-ok") o.min_ok = std::stol(next());
    else if (a == "--method") o.method = next();
    else if (a == "--path") o.path = next();
    else if (a == "--body") o.body = next();
    else if (a == "--key") o.key = next();
    else if (a == "--secret") o.secret = next();
    else if (a == "--idem") o.idem = next();
    else if (a == "--header") {
      const std::string h = next();
      const auto colon = h.find(':');
      if (colon == std::string::npos) return std::fprintf(stderr, "mr_load: --header \"Name: value\"\n"), 2;
      o.headers.emplace_back(h.substr(0, colon), h.substr(h.find_first_not_of(' ', colon + 1)));
    } else if (a == "--bad-signature") o.bad_signature = true;
    else if (a == "--settle") o.write = Options::Write::settle, o.write_ref = next();
    else if (a == "--reverse") o.write = Options::Write::reverse, o.write_ref = next();
    else if (a == "--redeem") o.write = Options::Write::redeem, o.write_ref = next();
    else if (a == "--member-prefix") o.member_prefix = next();
    else if (a == "--tx-prefix") o.tx_prefix = next();
    else return std::fprintf(stderr, "mr_load: unknown argument %s\n", a.c_str()), 2;
  }
  if (o.port == 0 || o.conns < 1 || o.threads < 1 || (o.write != Options::Write::none && o.key.empty())) {
    std::fprintf(stderr, "mr_load: see the usage at the top of bench/mr_load.cpp\n");
    return 2;
  }
  o.threads = std::min(o.threads, o.conns);
  const std::string run = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  std::vector<Result> results(static_cast<std::size_t>(o.threads));
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  for (int t = 0, first = 0; t < o.threads; ++t) {
    const int n = o.conns / o.threads + (t < o.conns % o.threads ? 1 : 0);
    // Each thread signs with its own client (its own HMAC state).
    RequestMaker make = o.write == Options::Write::none ? fixed_request(o) : write_request(o, run);
    threads.emplace_back([&o, first, n, make, end, &res = results[t]] { run_thread(o, first, n, make, end, res); });
    first += n;
  }
  for (auto& th : threads) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  Result all;
  for (auto& r : results) {
    all.ok += r.ok;
    all.failed += r.failed;
    all.unfinished += r.unfinished;
    for (auto [s, n] : r.statuses) all.statuses[s] += n;
    all.latencies_us.insert(all.latencies_us.end(), r.latencies_us.begin(), r.latencies_us.end());
    if (all.first_failure.empty()) all.first_failure = r.first_failure;
  }
  std::sort(all.latencies_us.begin(), all.latencies_us.end());
  auto pct = [&](double p) {
    if (all.latencies_us.empty()) return 0.0;
    const auto idx = static_cast<std::size_t>(p * static_cast<double>(all.latencies_us.size() - 1));
    return all.latencies_us[idx] / 1000.0;
  };
  std::string statuses;
  for (auto [s, n] : all.statuses) statuses += (statuses.empty() ? "" : ",") + std::to_string(s) + ":" + std::to_string(n);
  std::printf("rate=%.1f p50_ms=%.3f p99_ms=%.3f requests=%ld ok=%ld failed=%ld unfinished=%ld statuses=%s\n",
              static_cast<double>(all.ok) / elapsed, pct(0.50), pct(0.99), all.ok + all.failed, all.ok, all.failed,
              all.unfinished, statuses.c_str());
  if (!all.first_failure.empty()) std::fprintf(stderr, "mr_load: first failure: %s\n", all.first_failure.c_str());
  return all.failed == 0 && all.ok > 0 ? 0 : 1;
}
