// Holes a security review found at the edge, each closed: bodies nginx
// spooled to a temp file, rate limits charged before the signature was
// checked, raw client bytes in answers and logs, HTML for 505, the ops
// listener reading a body before its token.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
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
};

std::pair<std::string, int> host_port(const std::string& url) {
  const auto colon = url.rfind(':');
  return {url.substr(7, colon - 7), std::stoi(url.substr(colon + 1))};
}

Raw raw_exchange(const std::string& url, const std::vector<std::string>& pieces,
                 const std::string& source = "127.0.0.1") {
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
  cr_assert_eq(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  for (const auto& p : pieces) {
    if (::send(fd, p.data(), p.size(), MSG_NOSIGNAL) < 0) break;
  }
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<size_t>(n));
  ::close(fd);
  Raw out;
  const auto end = all.find("\r\n\r\n");
  out.head = all.substr(0, end);
  out.body = end == std::string::npos ? "" : all.substr(end + 4);
  if (all.size() > 12) out.status = std::stol(all.substr(9, 3));
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

std::string request_head(const std::string& method, const std::string& path, const mr::HeaderList& headers) {
  std::string head = method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
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
// spooled to a temp file; it was answered 500, now it passes the edge.
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
