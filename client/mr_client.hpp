// A signing HTTP client over libcurl for the integration tests, the
// benchmarks and mr-sign: it signs with the same auth_core the edge checks.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

namespace mr {

struct HttpResponse {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string status_line;  // e.g. "HTTP/1.1 201 Created"
  std::string error;        // curl's reason when no answer came (status 0)
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

class MrClient {
 public:
  MrClient(std::string base_url, std::string key_id, std::string secret);
  ~MrClient();
  MrClient(MrClient&&) noexcept;
  MrClient(const MrClient&) = delete;
  MrClient& operator=(const MrClient&) = delete;

  HttpResponse get(std::string_view path_and_query);
  HttpResponse post(std::string_view path, std::string_view body, std::string_view idempotency_key);
  // Any method with exactly these headers (for tests of missing or bad ones).
  HttpResponse send(std::string_view method, std::string_view path_and_query, std::string_view body,
                    const HeaderList& headers);
  // HTTPS: trust this CA bundle (PEM) instead of the system's, e.g. a
  // sandbox's own CA; the server's name or address is still checked.
  void set_ca_file(std::string path) { ca_file_ = std::move(path); }
  // X-MR-Key-Id, X-MR-Timestamp and X-MR-Signature for this request.
  HeaderList signed_headers(std::string_view method, std::string_view path_no_query, std::string_view body,
                            std::optional<std::string> timestamp = std::nullopt) const;

 private:
  struct CurlFree {
    void operator()(void* h) const;
  };
  std::string base_url_, key_id_, secret_, ca_file_;
  std::unique_ptr<void, CurlFree> curl_;
};

std::string rfc3339(std::chrono::system_clock::time_point t);
// Now to the microsecond (signing::format_timestamp_us), strictly increasing
// in the process: what requests are signed with.
std::string now_rfc3339();
rapidjson::Document parse_json(std::string_view text);
// KEY=value lines as a shell would read them: `export A='x' B="y"`, quotes
// undone, comments skipped. Missing file: empty map.
std::map<std::string, std::string> read_env_file(const std::string& path);
std::string read_file(const std::string& path);

}  // namespace mr
