// What a non-blocking connect's deadline means (libpq_socket.hpp acts on
// it): a server that did not answer, or a socket nginx failed to watch.
// libpq replaces its socket while it connects (the next host of a
// multi-host DSN, a standby refused by target_session_attrs), often under
// the same number; a socket nginx does not watch looks like a server that
// never answers, until the deadline. A socket still ready at the deadline
// may also be an event nginx hands over later in that very pass, so it gets
// one more pass; only if nginx handed over no event in it and the socket is
// still ready is it the watcher's defect (ready again after an event: libpq
// moved on to a host that accepted at once). No nginx header: unit-tested.
#pragma once

#include <cstdint>
#include <optional>

namespace mr::ngx {

class ConnectDeadline {
 public:
  enum class Verdict {
    one_more_pass,     // ready at the deadline: look again after this pass
    server_silent,     // the server did not answer in time: give up on it
    ready_unwatched,   // ready all along, nginx handed nothing over: a defect
    socket_replaced,   // the socket libpq has is not the one watched: a defect
  };

  // nginx handed over an event of the socket.
  void handed_over() { events_++; }
  // The connect is over (or starts again): no deadline pending.
  void reset() { at_deadline_.reset(); }

  // The deadline passed. `watched`: libpq's socket now is the one watched;
  // `ready`: it is ready for what the connect waits for.
  Verdict reached(bool watched, bool ready) {
    if (watched && ready && !at_deadline_) {
      at_deadline_ = events_;
      return Verdict::one_more_pass;
    }
    const bool handed = at_deadline_ && *at_deadline_ != events_;
    at_deadline_.reset();
    if (!watched) return Verdict::socket_replaced;
    if (ready && !handed) return Verdict::ready_unwatched;
    return Verdict::server_silent;
  }

 private:
  std::uint64_t events_ = 0;                   // handed over by nginx
  std::optional<std::uint64_t> at_deadline_;  // events_ when a deadline found the socket ready
};

}  // namespace mr::ngx
