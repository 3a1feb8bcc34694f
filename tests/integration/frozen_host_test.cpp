// A server that hangs (a frozen or unreachable machine: connections are
// accepted by the kernel, nothing ever answers) named first in the ledger's
// DSN, the fixture's PostgreSQL second. libpq moves on only from a host that
// refuses or fails, so every connect would hang on the first host until the
// pool's connect timeout and start there again; the pool starts the next
// attempt one host further on, and the node serves from the second host.
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/integration/retried_load.hpp"

using namespace mr::test;

namespace {
// Listens on a free loopback port and never accepts: what a frozen
// PostgreSQL looks like to a client.
struct FrozenServer {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  FrozenServer() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0 && listen(fd, 64) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
  }
  ~FrozenServer() { if (fd >= 0) close(fd); }
};
}  // namespace

Test(frozen_host, ledger_moves_past_a_host_that_hangs, .timeout = 120) {
  FrozenServer frozen;
  cr_assert_gt(frozen.port, 0);
  const std::string node = env("MR_STACK_DIR") + "/../frozen-first";
  const std::string free_port = env("MR_REPO") + "/tools/free-port.sh";
  const std::string dsn = "host=127.0.0.1,127.0.0.1 hostaddr=127.0.0.1,127.0.0.1 port=" +
                          std::to_string(frozen.port) + "," + env("MR_PG_PORT") +
                          " target_session_attrs=read-write dbname=mr user=postgres gssencmode=disable sslmode=disable";
  // A node of its own on the fixture's database and Redis; its master
  // loads the keys with blocking libpq, whose connect_timeout moves it on.
  const int up = sh("MR_NODE_OF='" + env("MR_STACK_DIR") + "' MR_PG_DSN='" + dsn + "' MR_PORT=$(" + free_port +
                    ") MR_OPS_PORT=$(" + free_port + ") '" + env("MR_REPO") + "/tools/stack.sh' up '" + node +
                    "' >/dev/null");
  cr_assert_eq(up, 0);
  const auto node_env = mr::read_env_file(node + "/stack.env");
  MrClient c(node_env.at("MR_BASE_URL"), env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));

  auto members = onboard_members(c, "frozen", 1);
  const std::string prefix = unique("frozen");
  auto awards = plan_awards(members, 5, prefix);
  for (auto& a : awards) apply_with_retries(a, [&](int) -> MrClient& { return c; }, std::chrono::seconds(40));
  expect_each_applied_once(c, awards, prefix);
  // The operator reads which host hung, as an error, from the pool and from
  // the webhooks' listen connection alike (modules/common/libpq_socket.hpp):
  // both watched the socket (a missed one would be an alert).
  for (const char* who : {"mr_ledger", "mr_webhook"}) {
    const std::string hung = std::string(who) + ": connecting to PostgreSQL timed out: 127.0.0.1:" +
                             std::to_string(frozen.port) + " did not answer within ";
    const bool logged = eventually([&] { return error_log(node).find(hung) != std::string::npos; },
                                   std::chrono::seconds(30));
    cr_expect(logged, "no line: %s", hung.c_str());
  }
  const std::string faults = error_log_faults(node, 0);
  cr_expect(faults.empty(), "nginx error log:\n%s", faults.c_str());
  cr_expect_eq(sh("'" + env("MR_REPO") + "/tools/stack.sh' down '" + node + "' >/dev/null"), 0);
}
