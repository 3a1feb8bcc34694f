#include "client/mr_client.hpp"

#include <curl/curl.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "signing/digest.hpp"
#include "signing/signature.hpp"

namespace mr {
namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

size_t on_body(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* userdata) {
  auto* out = static_cast<HttpResponse*>(userdata);
  std::string_view line(data, size * n);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {
    // A new response starts (after a 1xx): keep only the final one's headers.
    out->status_line = std::string(line);
    out->headers.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    out->headers[name] = std::string(value);
  }
  return size * n;
}

std::string_view path_only(std::string_view path_and_query) {
  return path_and_query.substr(0, path_and_query.find('?'));
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Splits one line of a POSIX shell env file into words, undoing '...',
// "..." (with \" \\ \$ \`) and backslash quoting; stops at an unquoted #.
std::vector<std::string> shell_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == '\'') {
      const std::size_t end = line.find('\'', i + 1);
      word.append(line.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
      i = end == std::string_view::npos ? line.size() : end;
      in_word = true;
    } else if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos) ++i;
        word.push_back(line[i]);
      }
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word.push_back(line[++i]);
      in_word = true;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

// MR_RECORD_ANSWERS=<dir>: every answer is appended as one JSON line to
// <dir>/answers-<pid>.jsonl (method, path, status, the headers the OpenAPI
// declares, body), for tests/docs/openapi_answers.py to check against
// docs/openapi.yaml. One write per line under a lock: the tests' threads
// and forked workers never interleave lines.
void record_answer(std::string_view method, std::string_view path_and_query, const HttpResponse& r) {
  static const char* const dir = std::getenv("MR_RECORD_ANSWERS");
  if (dir == nullptr || *dir == '\0' || r.status == 0) return;
  using Writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                   rapidjson::CrtAllocator, rapidjson::kWriteValidateEncodingFlag>;
  const auto line = [&](bool with_body) -> std::optional<std::string> {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    const auto str = [&w](std::string_view v) { return w.String(v.data(), static_cast<rapidjson::SizeType>(v.size())); };
    w.StartObject();
    w.Key("method");
    str(method);
    w.Key("path");
    str(path_and_query.substr(0, path_and_query.find('?')));
    w.Key("status");
    w.Int(static_cast<int>(r.status));
    w.Key("headers");
    w.StartObject();
    for (const char* name : {"content-type", "x-request-id", "x-mr-idempotent-replay", "retry-after"}) {
      if (auto it = r.headers.find(name); it != r.headers.end()) {
        w.Key(name);
        if (!str(it->second)) return std::nullopt;
      }
    }
    w.EndObject();
    w.Key("body");
    if (with_body) {
      if (!str(r.body)) return std::nullopt;
    } else {
      w.Null();  // not UTF-8 (so not JSON): the check reports it
      w.Key("bodyNotUtf8");
      w.Bool(true);
    }
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
  };
  auto text = line(true);
  if (!text) text = line(false);
  if (!text) return;
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  const std::string file = std::string(dir) + "/answers-" + std::to_string(::getpid()) + ".jsonl";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const auto written = ::write(fd, text->data(), text->size());
  ::close(fd);
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
  const std::string canonical = signing::canonical_string(ts, method, path_no_query, sha256_hex(body));
  return {{"X-MR-Key-Id", key_id_}, {"X-MR-Timestamp", ts}, {"X-MR-Signature", signing::sign(secret_, canonical)}};
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
  if (!ca_file_.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, ca_file_.c_str());
  // HEAD: no body follows the headers, curl must not wait for one.
  if (method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  bool chunked = false, has_content_type = false;
  struct SlistFree {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
  };
  curl_slist* list = nullptr;
  for (const auto& [k, v] : headers) {
    if (iequals(k, "Transfer-Encoding") && iequals(v, "chunked")) chunked = true;
    if (iequals(k, "Content-Type")) has_content_type = true;
    // "Name;" is curl's spelling of a header sent with an empty value.
    list = curl_slist_append(list, (v.empty() ? k + ";" : k + ": " + v).c_str());
  }
  // No 100-continue round trip, and no Content-Type the caller did not ask
  // for (curl would add application/x-www-form-urlencoded to a POST).
  list = curl_slist_append(list, "Expect:");
  if (!has_content_type) list = curl_slist_append(list, "Content-Type:");
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
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &out);
  const CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
  } else {
    out.error = error[0] != '\0' ? error : curl_easy_strerror(rc);
  }
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);  // `error` dies here
  record_answer(method, path_and_query, out);
  return out;
}

std::string rfc3339(std::chrono::system_clock::time_point t) { return signing::format_timestamp(t); }
std::string now_rfc3339() {
  using namespace std::chrono;
  // Strictly increasing in the process, across threads and clients: two
  // requests signed here never share a timestamp, so never a signature.
  static std::atomic<std::int64_t> last_us{0};
  const std::int64_t now_us = duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
  std::int64_t prev = last_us.load();
  std::int64_t mine = 0;
  do {
    mine = std::max(now_us, prev + 1);
  } while (!last_us.compare_exchange_weak(prev, mine));
  return signing::format_timestamp_us(system_clock::time_point(microseconds(mine)));
}

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
    // `export A='x' B=y` or `A=x`, one or more assignments a line.
    for (const std::string& word : shell_words(line)) {
      const auto eq = word.find('=');
      if (eq == 0 || eq == std::string::npos) continue;  // `export`, stray words
      env[word.substr(0, eq)] = word.substr(eq + 1);
    }
  }
  return env;
}

}  // namespace mr
