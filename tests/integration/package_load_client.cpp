// package_load_client BASE_URL KEY_ID SECRET MEMBER STOP_FILE READY_FILE
// The load package_test.sh keeps on nginx while the packages are upgraded
// and nginx reloads: four keep-alive clients alternate a signed award
// (1 point, a new transaction each) and a balance read until STOP_FILE
// exists. READY_FILE is written after the first answered round. Prints
// {"requests":N,"failed":F,"awarded":A} and exits 1 if any request did not
// get its 200 — no retries here, a dropped request counts as failed.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include "client/mr_client.hpp"

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string award_body(const std::string& member, const std::string& tx) {
  return R"({"partnerRef":"club-a","eventId":"e","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":")" +
         member + R"("},"transaction":{"externalTransactionId":")" + tx +
         R"(","merchantId":"m","merchantName":"S","amountMinor":100,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"}})";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: package_load_client BASE_URL KEY_ID SECRET MEMBER STOP_FILE READY_FILE\n";
    return 2;
  }
  const std::string base = argv[1], key_id = argv[2], secret = argv[3], member = argv[4], stop_file = argv[5],
                    ready_file = argv[6];
  std::atomic<long> requests{0}, failed{0}, awarded{0};
  std::atomic<bool> stop{false};
  std::once_flag ready;
  std::mutex err_mutex;
  const auto report = [&](const char* what, const mr::HttpResponse& r) {
    if (failed++ >= 10) return;  // the first few say what went wrong
    std::lock_guard lock(err_mutex);
    std::cerr << "package_load_client: " << what << ": status " << r.status << " " << r.error << " " << r.body << "\n";
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      mr::MrClient c(base, key_id, secret);
      const std::string balance = "/api/v1/members/" + member + "/balance";
      for (long i = 0; !stop; ++i) {
        const std::string tx = member + "-" + std::to_string(t) + "-" + std::to_string(i);
        const mr::HttpResponse a = c.post("/api/v1/transactions/settled", award_body(member, tx), "k-" + tx);
        requests++;
        if (a.status == 200) {
          awarded++;
        } else {
          report("award", a);
        }
        const mr::HttpResponse b = c.get(balance);
        requests++;
        if (b.status != 200) report("balance", b);
        if (a.status == 200 && b.status == 200) std::call_once(ready, [&] { std::ofstream(ready_file) << "ready\n"; });
      }
    });
  }
  while (!exists(stop_file)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  for (auto& th : threads) th.join();
  std::cout << "{\"requests\":" << requests << ",\"failed\":" << failed << ",\"awarded\":" << awarded << "}\n";
  return failed == 0 ? 0 : 1;
}
