// Load generator: signed settled transactions for distinct members of one
// club through nginx, C client threads for S seconds. Prints the rate of
// processed transactions. bench/run_settle_bench.sh compares it with
// pgbench running the equivalent transaction without any club row.
//
//   settle_bench BASE_URL KEY_ID SECRET PARTNER_REF CONCURRENCY SECONDS
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "client/mr_client.hpp"

namespace {

std::string member_body(const std::string& ref, const std::string& id) {
  return R"({"partnerRef":")" + ref + R"(","member":{"externalMemberId":")" + id +
         R"(","firstName":"Bench","lastName":"Member","email":"bench@example.com"}})";
}

std::string settle_body(const std::string& ref, const std::string& id, const std::string& tx) {
  return R"({"partnerRef":")" + ref + R"(","eventId":"e-)" + tx +
         R"(","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":")" + id +
         R"("},"transaction":{"externalTransactionId":")" + tx +
         R"(","merchantId":"m1","merchantName":"Bench Shop","amountMinor":1000,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"}})";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s BASE_URL KEY_ID SECRET PARTNER_REF CONCURRENCY SECONDS\n", argv[0]);
    return 2;
  }
  const std::string base = argv[1], key = argv[2], secret = argv[3], ref = argv[4];
  const int concurrency = std::stoi(argv[5]);
  const int seconds = std::stoi(argv[6]);
  const std::string run = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  constexpr int kMembersPerThread = 16;

  // Onboard distinct members first (not timed).
  {
    mr::MrClient c(base, key, secret);
    for (int t = 0; t < concurrency; ++t) {
      for (int m = 0; m < kMembersPerThread; ++m) {
        const std::string id = "b" + run + "-" + std::to_string(t) + "-" + std::to_string(m);
        auto r = c.post("/api/v1/members", member_body(ref, id), "m-" + id);
        if (r.status != 201 && r.status != 200) {
          std::fprintf(stderr, "onboarding failed: %ld %s\n", r.status, r.body.c_str());
          return 1;
        }
      }
    }
  }

  std::atomic<long> ok{0}, failed{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < concurrency; ++t) {
    threads.emplace_back([&, t] {
      mr::MrClient c(base, key, secret);
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const std::string id = "b" + run + "-" + std::to_string(t) + "-" + std::to_string(i % kMembersPerThread);
        const std::string tx = "t" + run + "-" + std::to_string(t) + "-" + std::to_string(i);
        auto r = c.post("/api/v1/transactions/settled", settle_body(ref, id, tx), "k-" + tx);
        if (r.status == 200) {
          ok++;
        } else if (failed++ < 3) {
          std::fprintf(stderr, "failed: %ld %s\n", r.status, r.body.c_str());
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& th : threads) th.join();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("settled_ok=%ld failed=%ld seconds=%.2f tps=%.1f\n", ok.load(), failed.load(), elapsed,
              ok.load() / elapsed);
  return failed.load() == 0 ? 0 : 1;
}
