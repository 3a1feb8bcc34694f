// A partner's webhook receiver on loopback, for the delivery tests: an HTTP
// server of the test's own (a thread per connection, Connection: close)
// that records every request it gets and answers as the test says: a
// status, headers such as Retry-After, and a delay (a slow receiver).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mr::test {

struct ReceivedHook {
  std::string method, target;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::chrono::steady_clock::time_point at;
  std::string header(const std::string& lower) const {
    auto it = headers.find(lower);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HookAnswer {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds delay{0};
};

class WebhookReceiver {
 public:
  using Policy = std::function<HookAnswer(const ReceivedHook&)>;

  WebhookReceiver() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("receiver: socket");
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 128) != 0) {
      throw std::runtime_error("receiver: bind/listen");
    }
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~WebhookReceiver() { stop(); }
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  std::string url(const std::string& path = "/hooks") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  void answer_with(Policy p) {
    std::lock_guard lock(mu_);
    policy_ = std::move(p);
  }
  std::vector<ReceivedHook> received() const {
    std::lock_guard lock(mu_);
    return got_;
  }
  std::size_t count() const {
    std::lock_guard lock(mu_);
    return got_.size();
  }
  // Waits until `done(received())` holds, or the deadline passes; returns
  // whether it held.
  bool wait_for(const std::function<bool(const std::vector<ReceivedHook>&)>& done,
                std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return done(got_); });
  }
  void stop() {
    if (stopping_.exchange(true)) return;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (acceptor_.joinable()) acceptor_.join();
    std::vector<std::thread> workers;
    {
      std::lock_guard lock(mu_);
      workers.swap(workers_);
    }
    for (auto& t : workers) t.join();
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::lock_guard lock(mu_);
      workers_.emplace_back([this, c] { serve(c); });
    }
  }

  // Reads one request (headers, then Content-Length bytes), at most 10 s.
  static bool read_request(int c, ReceivedHook& h) {
    std::string in;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::size_t header_end = std::string::npos, want = 0;
    char buf[16384];
    while (std::chrono::steady_clock::now() < give_up) {
      if (header_end == std::string::npos) {
        header_end = in.find("\r\n\r\n");
        if (header_end != std::string::npos) {
          if (!parse_head(in.substr(0, header_end), h)) return false;
          const std::string cl = h.header("content-length");
          want = cl.empty() ? 0 : std::stoul(cl);
        }
      }
      if (header_end != std::string::npos && in.size() >= header_end + 4 + want) {
        h.body = in.substr(header_end + 4, want);
        return true;
      }
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return false;
      in.append(buf, static_cast<std::size_t>(n));
    }
    return false;
  }

  static bool parse_head(const std::string& head, ReceivedHook& h) {
    std::size_t pos = head.find("\r\n");
    const std::string line = head.substr(0, pos);
    const auto sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string::npos || sp2 == sp1) return false;
    h.method = line.substr(0, sp1);
    h.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    while (pos != std::string::npos && pos < head.size()) {
      const std::size_t next = head.find("\r\n", pos + 2);
      const std::string field = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      const auto colon = field.find(':');
      if (colon != std::string::npos) {
        std::string name = field.substr(0, colon), value = field.substr(colon + 1);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
        value.erase(0, value.find_first_not_of(' '));
        h.headers[name] = value;
      }
      pos = next;
    }
    return true;
  }

  void serve(int c) {
    ReceivedHook h;
    if (read_request(c, h)) {
      h.at = std::chrono::steady_clock::now();
      HookAnswer a;
      {
        std::lock_guard lock(mu_);
        if (policy_) a = policy_(h);
        got_.push_back(h);
      }
      cv_.notify_all();
      if (a.delay.count() > 0) std::this_thread::sleep_for(a.delay);
      std::string out = "HTTP/1.1 " + std::to_string(a.status) + " X\r\nContent-Length: 2\r\nConnection: close\r\n";
      for (const auto& [k, v] : a.headers) out += k + ": " + v + "\r\n";
      out += "\r\nok";
      (void)::send(c, out.data(), out.size(), MSG_NOSIGNAL);
    }
    ::close(c);
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  Policy policy_;
  std::vector<ReceivedHook> got_;
  std::vector<std::thread> workers_;
};

}  // namespace mr::test
