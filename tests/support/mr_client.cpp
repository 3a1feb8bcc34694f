#include "tests/support/mr_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "modules/auth/auth_core.hpp"

namespace mr {
namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

size_t on_body(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* out) {
  std::string_view line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = std::string(value);
  }
  return size * n;
}

std::string_view path_only(std::string_view path_and_query) {
  return path_and_query.substr(0, path_and_query.find('?'));
}

}  // namespace

void MrClient::CurlFree::operator()(void* h) const { curl_easy_cleanup(static_cast<CURL*>(h)); }

MrClient::MrClient(std::string base_url, std::string key_id, std::string secret)
    : base_url_(std::move(base_url)), key_id_(std::move(key_id)), secret_(std::move(secret)) {
  static CurlGlobal global;
  curl_.reset(curl_easy_init());
}

MrClient::~MrClient() = default;
MrClient::MrClient(MrClient&&) noexcept = default;

HeaderList MrClient::signed_headers(std::string_view method, std::string_view path_no_query,
                                    std::string_view body, std::optional<std::string> timestamp) const {
  const std::string ts = timestamp ? *timestamp : now_rfc3339();
  const std::string canonical = auth::canonical_string(ts, method, path_no_query, auth::sha256_hex(body));
  return {{"X-MR-Key-Id", key_id_}, {"X-MR-Timestamp", ts}, {"X-MR-Signature", auth::sign(secret_, canonical)}};
}

HttpResponse MrClient::get(std::string_view path_and_query) {
  return send("GET", path_and_query, "", signed_headers("GET", path_only(path_and_query), ""));
}

HttpResponse MrClient::post(std::string_view path, std::string_view body, std::string_view idempotency_key) {
  HeaderList h = signed_headers("POST", path_only(path), body);
  h.emplace_back("Content-Type", "application/json");
  h.emplace_back("X-MR-Idempotency-Key", std::string(idempotency_key));
  return send("POST", path, body, h);
}

HttpResponse MrClient::send(std::string_view method, std::string_view path_and_query, std::string_view body,
                            const HeaderList& headers) {
  HttpResponse out;
  CURL* c = static_cast<CURL*>(curl_.get());
  curl_easy_reset(c);
  const std::string url = base_url_ + std::string(path_and_query);
  const std::string m(method);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, m.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  bool chunked = false;
  struct SlistFree {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
  };
  curl_slist* list = nullptr;
  for (const auto& [k, v] : headers) {
    if (k == "Transfer-Encoding" && v == "chunked") chunked = true;
    list = curl_slist_append(list, (k + ": " + v).c_str());
  }
  list = curl_slist_append(list, "Expect:");
  if (!headers.empty() && std::none_of(headers.begin(), headers.end(),
                                       [](const auto& kv) { return kv.first == "Content-Type"; })) {
    list = curl_slist_append(list, "Content-Type:");
  }
  std::unique_ptr<curl_slist, SlistFree> owned(list);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  struct Reader {
    std::string_view data;
    static size_t read(char* buf, size_t size, size_t n, void* p) {
      auto* r = static_cast<Reader*>(p);
      const size_t len = std::min(size * n, r->data.size());
      std::copy_n(r->data.data(), len, buf);
      r->data.remove_prefix(len);
      return len;
    }
  } reader{body};
  if (chunked) {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, &Reader::read);
    curl_easy_setopt(c, CURLOPT_READDATA, &reader);
  } else if (!body.empty() || method == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &out.headers);
  if (curl_easy_perform(c) == CURLE_OK) {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
  }
  return out;
}

std::string rfc3339(std::chrono::system_clock::time_point t) { return auth::format_timestamp(t); }
std::string now_rfc3339() { return rfc3339(std::chrono::system_clock::now()); }

rapidjson::Document parse_json(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError()) d.SetNull();
  return d;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> read_env_file(const std::string& path) {
  std::map<std::string, std::string> env;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("export ")) line = line.substr(7);
    auto eq = line.find('=');
    if (eq == std::string::npos || line.starts_with("#")) continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"')) value = value.substr(1, value.size() - 2);
    env[line.substr(0, eq)] = value;
  }
  return env;
}

}  // namespace mr
