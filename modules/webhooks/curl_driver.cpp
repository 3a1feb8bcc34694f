#include "modules/webhooks/curl_driver.hpp"

#include <stdexcept>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ngx-boundary/guarded.hpp"
#include "modules/common/foreign_socket.hpp"

namespace mr::ngx::webhooks {
namespace {

// The socket's identity: a closed socket's number is soon given to another.
unsigned long inode_of(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? static_cast<unsigned long>(st.st_ino) : 0;
}

}  // namespace

CurlDriver::CurlDriver(ngx_log_t* log, long keep) : multi_(curl_multi_init()), log_(log) {
  if (!multi_) throw std::runtime_error("curl_multi_init failed");
  curl_multi_setopt(multi_.get(), CURLMOPT_MAXCONNECTS, keep);
  curl_multi_setopt(multi_.get(), CURLMOPT_SOCKETFUNCTION, mr::ngx::c_entry(on_socket));
  curl_multi_setopt(multi_.get(), CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_.get(), CURLMOPT_TIMERFUNCTION, mr::ngx::c_entry(on_timer));
  curl_multi_setopt(multi_.get(), CURLMOPT_TIMERDATA, this);
  timer_.handler = mr::ngx::c_entry(on_timeout);
  timer_.data = this;
  timer_.log = log;
  // libcurl's own timer never holds an exiting worker: each attempt has a
  // non-cancelable timer of its own (the engine's).
  timer_.cancelable = 1;
}

CurlDriver::~CurlDriver() {
  for (auto& [easy, transfer] : transfers_) curl_multi_remove_handle(multi_.get(), easy);
  transfers_.clear();
  // Closes the connections libcurl keeps for reuse (through on_close).
  multi_.reset();
  // Sockets libcurl closed without telling (see watch()).
  while (!sockets_.empty()) unwatch(sockets_.begin()->first);
  if (timer_.timer_set) ngx_del_timer(&timer_);
}

bool CurlDriver::start(CURL* easy, Allow allow, Done done) {
  auto transfer = std::make_unique<Transfer>(Transfer{this, std::move(allow), std::move(done)});
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, mr::ngx::c_entry(on_open));
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, transfer.get());
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, mr::ngx::c_entry(on_close));
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);
  transfers_[easy] = std::move(transfer);
  if (curl_multi_add_handle(multi_.get(), easy) != CURLM_OK) {
    transfers_.erase(easy);
    return false;
  }
  return true;  // libcurl asks for a timeout of 0 at once: the timer starts it
}

void CurlDriver::cancel(CURL* easy) {
  if (transfers_.erase(easy) == 0) return;
  curl_multi_remove_handle(multi_.get(), easy);
}

// --- libcurl's callbacks: none may throw, none may call back into libcurl.

int CurlDriver::on_socket(CURL*, curl_socket_t fd, int what, void* driver, void*) noexcept {
  auto* self = static_cast<CurlDriver*>(driver);
  // -1 (out of memory, no free connection): libcurl fails the transfers on
  // this socket.
  return mr::ngx::guarded(self->log_, -1, [&] {
    if (what == CURL_POLL_REMOVE) {
      self->unwatch(fd);
    } else {
      self->watch(fd, what);
    }
    return 0;
  });
}

int CurlDriver::on_timer(CURLM*, long timeout_ms, void* driver) noexcept {
  auto* self = static_cast<CurlDriver*>(driver);
  if (self->timer_.timer_set) ngx_del_timer(&self->timer_);
  if (timeout_ms >= 0) ngx_add_timer(&self->timer_, static_cast<ngx_msec_t>(timeout_ms));
  return 0;
}

curl_socket_t CurlDriver::on_open(void* transfer, curlsocktype purpose, curl_sockaddr* address) noexcept {
  auto* t = static_cast<Transfer*>(transfer);
  const bool allowed = mr::ngx::guarded(t->driver->log_, false, [&] {
    return purpose == CURLSOCKTYPE_IPCXN && t->allow && t->allow(*address);
  });
  if (!allowed) return CURL_SOCKET_BAD;
  const int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd < 0) return CURL_SOCKET_BAD;
  // A brand-new socket: a watch left under its number was of a closed one.
  if (auto it = t->driver->sockets_.find(fd); it != t->driver->sockets_.end()) {
    mr::ngx::unwatch_socket(it->second.c, true);
    t->driver->sockets_.erase(it);
  }
  return fd;
}

int CurlDriver::on_close(void* driver, curl_socket_t fd) noexcept {
  auto* self = static_cast<CurlDriver*>(driver);
  self->unwatch(fd);  // out of epoll while the number still names this socket
  return ::close(fd);
}

// --- nginx's side.

// libcurl may close a socket before it reports its removal (its resolver's
// socketpair is closed when the name is resolved), and the number may come
// back at once for another socket. The inode tells a watch of a socket that
// is gone (the kernel took it out of epoll when it closed: no epoll_ctl on
// its number) from one of the socket the number names now.
void CurlDriver::watch(curl_socket_t fd, int what) {
  auto it = sockets_.find(fd);
  const unsigned long inode = inode_of(fd);
  if (it != sockets_.end() && it->second.inode != inode) {
    mr::ngx::unwatch_socket(it->second.c, true);
    sockets_.erase(it);
    it = sockets_.end();
  }
  if (it == sockets_.end()) {
    ngx_connection_t* c = mr::ngx::watch_socket(fd, log_, this, on_event);
    if (c == nullptr) throw std::runtime_error("no free nginx connection");
    it = sockets_.emplace(fd, Watched{c, inode}).first;
  }
  ngx_connection_t* c = it->second.c;
  // Level-triggered (flags 0 on epoll): libcurl may leave data unread.
  const bool in = what == CURL_POLL_IN || what == CURL_POLL_INOUT;
  const bool out = what == CURL_POLL_OUT || what == CURL_POLL_INOUT;
  if (in && !c->read->active) ngx_add_event(c->read, NGX_READ_EVENT, 0);
  if (!in && c->read->active) ngx_del_event(c->read, NGX_READ_EVENT, 0);
  if (out && !c->write->active) ngx_add_event(c->write, NGX_WRITE_EVENT, 0);
  if (!out && c->write->active) ngx_del_event(c->write, NGX_WRITE_EVENT, 0);
}

void CurlDriver::unwatch(curl_socket_t fd) {
  const auto it = sockets_.find(fd);
  if (it == sockets_.end()) return;
  const bool gone = inode_of(fd) != it->second.inode;
  mr::ngx::unwatch_socket(it->second.c, gone);
  sockets_.erase(it);
}

void CurlDriver::on_event(ngx_event_t* ev) noexcept {
  auto* c = static_cast<ngx_connection_t*>(ev->data);
  auto* self = static_cast<CurlDriver*>(c->data);
  // c may be freed inside the action: read what is needed first.
  const curl_socket_t fd = c->fd;
  const int flags = ev->write ? CURL_CSELECT_OUT : CURL_CSELECT_IN;
  mr::ngx::guarded(self->log_, [&] { self->act(fd, flags); });
}

void CurlDriver::on_timeout(ngx_event_t* ev) noexcept {
  auto* self = static_cast<CurlDriver*>(ev->data);
  mr::ngx::guarded(self->log_, [self] { self->act(CURL_SOCKET_TIMEOUT, 0); });
}

void CurlDriver::act(curl_socket_t fd, int flags) {
  int running = 0;
  const CURLMcode rc = curl_multi_socket_action(multi_.get(), fd, flags, &running);
  if (rc != CURLM_OK) {
    ngx_log_error(NGX_LOG_ERR, log_, 0, "mr_webhook: curl_multi_socket_action: %s", curl_multi_strerror(rc));
  }
  read_completions();
}

void CurlDriver::read_completions() {
  if (reading_) return;
  reading_ = true;
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    const CURLcode result = msg->data.result;
    const auto it = transfers_.find(easy);
    if (it == transfers_.end()) continue;
    auto transfer = std::move(it->second);
    transfers_.erase(it);
    curl_multi_remove_handle(multi_.get(), easy);
    mr::ngx::guarded(log_, [&] { transfer->done(result); });
  }
  reading_ = false;
}

}  // namespace mr::ngx::webhooks
