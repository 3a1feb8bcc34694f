// libcurl's multi-socket interface on nginx's event loop (the shape of
// curl's docs/examples/multi-uv.c): libcurl says which sockets it waits on
// (CURLMOPT_SOCKETFUNCTION) and when it wants a timeout (TIMERFUNCTION);
// nginx connections over those sockets call curl_multi_socket_action on
// readiness, an nginx timer on the timeout. Nothing blocks the worker:
// names resolve in libcurl's resolver thread, sockets are non-blocking.
//
// The driver also opens and closes the transfers' sockets itself
// (OPENSOCKET/CLOSESOCKETFUNCTION): a transfer's `allow` sees every
// address before a socket is made for it (the SSRF check), and nginx stops
// watching a socket before it is closed.
#pragma once

#include <curl/curl.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx::webhooks {

struct MultiFree {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct EasyFree {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using Multi = std::unique_ptr<CURLM, MultiFree>;
using Easy = std::unique_ptr<CURL, EasyFree>;
using Slist = std::unique_ptr<curl_slist, SlistFree>;

class CurlDriver {
 public:
  // Whether a connection to this address may be opened (a refusal makes
  // libcurl try the next address, then fail with CURLE_COULDNT_CONNECT).
  using Allow = std::function<bool(const curl_sockaddr& address)>;
  // The transfer ended (the easy handle is out of the multi again).
  using Done = std::function<void(CURLcode result)>;

  // `keep`: idle connections kept for reuse (a receiver's next attempt
  // goes on one instead of a new TCP and TLS handshake). libcurl's own
  // default, four per transfer still added, closes most of those a burst
  // opened as soon as the burst ends. A reused connection went through
  // `allow` when it was opened, to the same host and port.
  CurlDriver(ngx_log_t* log, long keep);  // throws when libcurl cannot make a multi handle
  // Ends every transfer without calling its Done, closes every socket.
  ~CurlDriver();
  CurlDriver(const CurlDriver&) = delete;
  CurlDriver& operator=(const CurlDriver&) = delete;

  // Starts `easy` (set up by the caller, who keeps owning it and may free
  // it only after Done ran or cancel returned). False when libcurl refused.
  bool start(CURL* easy, Allow allow, Done done);
  // Takes `easy` out before it ended; its Done is not called.
  void cancel(CURL* easy);
  std::size_t transfers() const { return transfers_.size(); }

 private:
  struct Transfer {
    CurlDriver* driver;
    Allow allow;
    Done done;
  };
  struct Watched {
    ngx_connection_t* c = nullptr;
    unsigned long inode = 0;  // which socket c watches (see watch())
  };

  static int on_socket(CURL* easy, curl_socket_t fd, int what, void* driver, void*) noexcept;
  static int on_timer(CURLM* multi, long timeout_ms, void* driver) noexcept;
  static curl_socket_t on_open(void* transfer, curlsocktype purpose, curl_sockaddr* address) noexcept;
  static int on_close(void* driver, curl_socket_t fd) noexcept;
  static void on_event(ngx_event_t* ev) noexcept;
  static void on_timeout(ngx_event_t* ev) noexcept;

  void watch(curl_socket_t fd, int what);
  void unwatch(curl_socket_t fd);
  void act(curl_socket_t fd, int flags);
  void read_completions();

  Multi multi_;
  ngx_log_t* log_;
  std::unordered_map<curl_socket_t, Watched> sockets_;
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> transfers_;
  ngx_event_t timer_{};
  bool reading_ = false;  // inside read_completions: a nested call returns
};

}  // namespace mr::ngx::webhooks
