// mr-sign: signs a partner API request (contract section 2) and prints its
// headers, a ready-to-paste curl command, or sends it and prints the answer.
#include <algorithm>
#include <cctype>
#include <optional>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "keys/secret_box.hpp"
#include "client/mr_client.hpp"

namespace {

constexpr const char* kUsage = R"(usage: mr-sign --method M --path /api/v1/... [options]
  --key-id ID            key id (default: $MR_KEY_ID)
  --secret S             key secret (default: $MR_KEY_SECRET)
  --method M             HTTP method, signed in upper case
  --path P               path as sent; a ?query is sent but not signed
  --body FILE|-          raw body bytes from FILE or stdin (default: empty)
  --timestamp T          X-MR-Timestamp to sign (default: now, UTC, to the microsecond)
  --idempotency-key K    POST only (default: a random one)
  --header "Name: value" one more header to send, unsigned (repeatable), e.g.
                         "traceparent: 00-<trace id>-<parent id>-01"
  --send BASE_URL        send it and print status line, headers and body
  --cacert FILE          with --send (or --print-curl) to https://: trust this
                         CA bundle (PEM), e.g. a sandbox's own CA
  --print-curl           print a curl command line instead of the headers
  --base-url URL         base URL for --print-curl (default: $MR_BASE_URL)
Without --send or --print-curl: prints the headers, one "Name: value" a line.
Exit status: 0 signed (or sent and answered below 400), 1 answered 400 or
above, 2 usage or transport error.
)";

// One shell word: single-quoted, with ' written as '\''.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int fail(const std::string& message, bool usage = true) {
  std::cerr << "mr-sign: " << message << (usage ? "\n(mr-sign --help for usage)\n" : "\n");
  return 2;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// "Name: value" as --header gives it: an HTTP token, then printable text.
// Headers mr-sign writes itself are refused: a second copy would make the
// request ambiguous (and the signed ones are the signature).
std::optional<std::pair<std::string, std::string>> parse_header(const std::string& text, std::string& why) {
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  static constexpr std::string_view kToken = "!#$%&'*+-.^_`|~";
  const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kToken.find(c) != std::string_view::npos;
  });
  if (colon == std::string::npos || !token) {
    why = "--header \"" + text + "\" is not \"Name: value\"";
    return std::nullopt;
  }
  std::string value = text.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
  if (std::any_of(value.begin(), value.end(), [](char c) {
        return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
      })) {
    why = "--header " + name + ": the value holds a control character";
    return std::nullopt;
  }
  for (const char* own : {"X-MR-Key-Id", "X-MR-Timestamp", "X-MR-Signature", "X-MR-Idempotency-Key", "Content-Type",
                          "Content-Length", "Host", "Transfer-Encoding"}) {
    if (iequals(name, own)) {
      why = "--header " + name + ": mr-sign sets it itself (--idempotency-key for the idempotency key)";
      return std::nullopt;
    }
  }
  return std::pair{name, value};
}

}  // namespace

int main(int argc, char** argv) {
  static const std::set<std::string> kValued = {"key-id", "secret", "method", "path", "body", "timestamp",
                                                "idempotency-key", "send", "base-url", "cacert"};
  std::map<std::string, std::string> opt;
  mr::HeaderList extra;  // --header, in the order given
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--print-curl") {
      opt["print-curl"] = "1";
    } else if (a == "--header") {
      if (i + 1 >= argc) return fail(a + " needs a value");
      std::string why;
      auto header = parse_header(argv[++i], why);
      if (!header) return fail(why);
      extra.push_back(std::move(*header));
    } else if (a.starts_with("--") && kValued.contains(a.substr(2))) {
      if (i + 1 >= argc) return fail(a + " needs a value");
      opt[a.substr(2)] = argv[++i];
    } else {
      return fail("unknown argument " + a);
    }
  }
  const auto get = [&](const std::string& k, const char* env) -> std::string {
    if (auto it = opt.find(k); it != opt.end()) return it->second;
    const char* v = env ? std::getenv(env) : nullptr;
    return v ? v : "";
  };
  const std::string key_id = get("key-id", "MR_KEY_ID"), secret = get("secret", "MR_KEY_SECRET");
  std::string method = get("method", nullptr);
  const std::string path = get("path", nullptr);
  if (key_id.empty() || secret.empty()) return fail("--key-id and --secret (or MR_KEY_ID, MR_KEY_SECRET) are required");
  if (method.empty() || path.empty()) return fail("--method and --path are required");
  if (!path.starts_with("/")) return fail("--path must start with / (the base URL goes in --send or --base-url)");
  if (opt.contains("send") && opt.contains("print-curl")) return fail("--send and --print-curl exclude each other");
  for (char& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));

  std::string body;
  if (opt.contains("body")) {
    if (opt["body"] == "-") {
      body.assign(std::istreambuf_iterator<char>(std::cin), {});
    } else {
      std::ifstream in(opt["body"], std::ios::binary);
      if (!in) return fail("cannot read " + opt["body"]);
      body.assign(std::istreambuf_iterator<char>(in), {});
    }
  }
  const std::string base = opt.contains("send") ? opt["send"] : get("base-url", "MR_BASE_URL");
  if (opt.contains("print-curl") && base.empty()) return fail("--print-curl needs --base-url or MR_BASE_URL");

  if (opt.contains("cacert")) {
    if (!opt.contains("send") && !opt.contains("print-curl")) return fail("--cacert goes with --send or --print-curl");
    if (!std::ifstream(opt["cacert"])) return fail("cannot read " + opt["cacert"]);
  }

  mr::MrClient client(base, key_id, secret);
  if (opt.contains("cacert")) client.set_ca_file(opt["cacert"]);
  // The query string travels but is not part of the canonical string.
  const std::string path_no_query = path.substr(0, path.find('?'));
  std::optional<std::string> ts;
  if (opt.contains("timestamp")) ts = opt["timestamp"];
  mr::HeaderList headers = client.signed_headers(method, path_no_query, body, ts);
  if (method == "POST") {
    headers.emplace_back("Content-Type", "application/json");
    headers.emplace_back("X-MR-Idempotency-Key",
                         opt.contains("idempotency-key") ? opt["idempotency-key"] : "idem-" + mr::random_base64url(12));
  }
  headers.insert(headers.end(), extra.begin(), extra.end());

  if (opt.contains("send")) {
    const mr::HttpResponse r = client.send(method, path, body, headers);
    if (r.status == 0) return fail("no answer from " + base + ": " + r.error, false);
    std::cout << r.status_line << "\n";
    for (const auto& [k, v] : r.headers) std::cout << k << ": " << v << "\n";
    std::cout << "\n" << r.body;
    if (!r.body.empty() && !r.body.ends_with('\n')) std::cout << "\n";
    return r.status < 400 ? 0 : 1;
  }
  if (opt.contains("print-curl")) {
    std::ostringstream cmd;
    cmd << "curl -sS -i -X " << method;
    if (opt.contains("cacert")) cmd << " --cacert " << shell_quote(opt["cacert"]);
    for (const auto& [k, v] : headers) cmd << " \\\n  -H " << shell_quote(k + ": " + v);
    if (!body.empty()) cmd << " \\\n  --data-binary " << shell_quote(body);
    cmd << " \\\n  " << shell_quote(base + path);
    std::cout << cmd.str() << "\n";
    return 0;
  }
  for (const auto& [k, v] : headers) std::cout << k << ": " << v << "\n";
  return 0;
}
