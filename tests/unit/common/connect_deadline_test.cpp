// What a connect's deadline means (modules/common/connect_deadline.hpp):
// the races of the pool's and the listen connection's connects with the
// sockets libpq replaces and the events nginx hands over late.
#include <criterion/criterion.h>

#include "modules/common/connect_deadline.hpp"

using mr::ngx::ConnectDeadline;
using Verdict = ConnectDeadline::Verdict;

Test(connect_deadline, a_silent_server_is_given_up_at_once) {
  ConnectDeadline d;
  cr_expect(d.reached(true, false) == Verdict::server_silent);
}

// libpq moved to another socket (the next host) and nginx kept watching
// the old one: the connect could only hang.
Test(connect_deadline, a_replaced_socket_is_the_watchers_defect) {
  ConnectDeadline d;
  cr_expect(d.reached(false, false) == Verdict::socket_replaced);
  // ...also when the first look found it ready and the second not watched.
  cr_expect(d.reached(true, true) == Verdict::one_more_pass);
  cr_expect(d.reached(false, false) == Verdict::socket_replaced);
}

// Ready at the deadline: maybe nginx hands the event over later in this
// very pass. One more pass; if nginx handed nothing over and it is still
// ready, nginx never watched it.
Test(connect_deadline, ready_twice_with_nothing_handed_over_is_a_defect) {
  ConnectDeadline d;
  cr_expect(d.reached(true, true) == Verdict::one_more_pass);
  cr_expect(d.reached(true, true) == Verdict::ready_unwatched);
}

Test(connect_deadline, ready_again_after_an_event_is_a_slow_server) {
  ConnectDeadline d;
  cr_expect(d.reached(true, true) == Verdict::one_more_pass);
  d.handed_over();  // libpq moved on to a host that accepted at once: ready again
  cr_expect(d.reached(true, true) == Verdict::server_silent);
}

Test(connect_deadline, not_ready_after_one_more_pass_is_a_slow_server) {
  ConnectDeadline d;
  cr_expect(d.reached(true, true) == Verdict::one_more_pass);
  cr_expect(d.reached(true, false) == Verdict::server_silent);
}

// Every deadline starts afresh: a connect that ended (or the next one)
// gets its one more pass again, and events counted before it do not count.
Test(connect_deadline, each_deadline_gets_its_own_pass) {
  ConnectDeadline d;
  d.handed_over();
  cr_expect(d.reached(true, true) == Verdict::one_more_pass);
  d.reset();
  cr_expect(d.reached(true, true) == Verdict::one_more_pass);
  cr_expect(d.reached(true, true) == Verdict::ready_unwatched);
  cr_expect(d.reached(true, true) == Verdict::one_more_pass);
}
