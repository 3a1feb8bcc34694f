// Reading the ops listener's /metrics in tests.
#pragma once

#include <sstream>
#include <string>

#include "tests/integration/stack_env.hpp"

namespace mr::test {

inline mr::HeaderList ops_auth() {
  std::string token = mr::read_file(env("MR_OPS_TOKEN_FILE"));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  return {{"Authorization", "Bearer " + token}};
}

inline std::string scrape() {
  auto r = mr::MrClient(env("MR_OPS_URL"), "", "").send("GET", "/metrics", "", ops_auth());
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  return r.body;
}

// The value of one series (exact name and labels as rendered); 0 if absent.
inline double metric(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 && line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return 0;
}

inline std::string requests_series(const std::string& route, int status, const std::string& code) {
  return "mr_http_requests_total{route=\"" + route + "\",status=\"" + std::to_string(status) + "\",code=\"" + code +
         "\"}";
}

// Asserts that `series` grew by at least `by` between two scrapes.
#define EXPECT_GREW(before, after, series, by)                                                              \
  cr_expect_geq(mr::test::metric(after, series) - mr::test::metric(before, series), (by), "%s: %g -> %g", \
                std::string(series).c_str(), mr::test::metric(before, series), mr::test::metric(after, series))

}  // namespace mr::test
