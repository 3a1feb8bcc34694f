// edge_work: what mr_auth computes per signed request, without nginx or the
// network — SHA-256 of the body and auth::check_request (headers, window,
// HMAC with the key keyed once) — in a hot loop, as ns per request. Far
// steadier than the edge lines of run_all.sh on a shared machine, so it
// shows what a change to the pure code moved; it is not a floor ratio.
//   edge_work [--requests N] [--body-bytes B]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "modules/auth/auth_core.hpp"
#include "signing/digest.hpp"
#include "signing/hmac_key.hpp"
#include "signing/signature.hpp"

int main(int argc, char** argv) {
  long requests = 300000;
  std::size_t body_bytes = 0;  // 0: the settled POST run_all.sh sends
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--requests") requests = std::atol(argv[i + 1]);
    else if (flag == "--body-bytes") body_bytes = static_cast<std::size_t>(std::atol(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: edge_work [--requests N] [--body-bytes B]\n");
      return 2;
    }
  }
  if (requests <= 0) return 2;
  using namespace std::chrono;
  // Distinct requests, as partners send them: each its own body (the
  // transaction id differs) and so its own signature. One fixed signature
  // would let the branch predictor learn its digits, which real traffic
  // never allows.
  constexpr std::size_t kDistinct = 1024;
  std::vector<std::string> bodies, signatures;
  const mr::HmacKey key("lE4BNLPUju9T2mJOAB0ts2rc2Tx_L323LeuxBX8A8DQ");
  const auto now = system_clock::now();
  const std::string ts = mr::signing::format_timestamp(now);
  const std::string path = "/api/v1/transactions/settled";
  for (std::size_t n = 0; n < kDistinct; ++n) {
    const std::string id = std::to_string(n);
    std::string body = body_bytes > 0 ? std::string(body_bytes - std::min(body_bytes, id.size()), 'x') + id
                                      : R"({"partnerRef":"bench","eventId":"e-edge","occurredAt":"2026-11-20T10:00:00Z",)"
                                        R"("member":{"externalMemberId":"pgb-0-1"},"transaction":{"externalTransactionId":"edge-)" +
                                            id +
                                            R"(","merchantId":"m1","merchantName":"Bench Shop","amountMinor":1000,"currency":"GBP",)"
                                            R"("settledAt":"2026-11-20T10:00:00Z"}})";
    signatures.push_back(mr::signing::sign(key, mr::signing::canonical_string(ts, "POST", path, mr::sha256_hex(body))));
    bodies.push_back(std::move(body));
  }
  const mr::auth::KeyLookup lookup = [&](std::string_view) -> std::optional<mr::auth::KeyView> {
    return mr::auth::KeyView{{}, 1, "bench", &key};
  };
  long refused = 0;
  const auto start = steady_clock::now();
  for (long i = 0; i < requests; ++i) {
    const std::size_t n = static_cast<std::size_t>(i) % kDistinct;
    const mr::Sha256Hex body_hash = mr::sha256_hex_inline(bodies[n]);
    mr::auth::RequestFacts f;
    f.method = "POST";
    f.path = path;
    f.key_id = "mrk_sbx_bench";
    f.timestamp = ts;
    f.signature = signatures[n];
    f.idempotency_key = "e1";
    f.content_type = "application/json";
    f.body_sha256_hex = mr::view(body_hash);
    refused += mr::auth::check_request(f, lookup, now).error.has_value();
  }
  const double ns = static_cast<double>(duration_cast<nanoseconds>(steady_clock::now() - start).count());
  std::printf("edge_work: body_bytes=%zu requests=%ld ns_per_request=%.0f refused=%ld\n", bodies.front().size(), requests,
              ns / static_cast<double>(requests), refused);
  return refused == 0 ? 0 : 1;  // every request is signed right: a refusal is a broken benchmark
}
