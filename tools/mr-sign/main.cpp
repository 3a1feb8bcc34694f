// mr-sign: signs a partner API request (contract section 2) and prints its
// headers, a ready-to-paste curl command, or sends it and prints the answer.
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "keys/secret_box.hpp"
#include "client/mr_client.hpp"

namespace {

constexpr const char* kUsage = R"(usage: mr-sign --method M --path /api/v1/... [options]
  --key-id ID            key id (default: $MR_KEY_ID)
  --secret S             key secret (default: $MR_KEY_SECRET)
  --method M             HTTP method, signed in upper case
  --path P               path as sent; a ?query is sent but not signed
  --body FILE|-          raw body bytes from FILE or stdin (default: empty)
  --timestamp T          X-MR-Timestamp to sign (default: now, UTC)
  --idempotency-key K    POST only (default: a random one)
  --send BASE_URL        send it and print status line, headers and body
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

}  // namespace

int main(int argc, char** argv) {
  static const std::set<std::string> kValued = {"key-id", "secret", "method", "path", "body", "timestamp",
                                                "idempotency-key", "send", "base-url"};
  std::map<std::string, std::string> opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--print-curl") {
      opt["print-curl"] = "1";
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

  mr::MrClient client(base, key_id, secret);
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
    for (const auto& [k, v] : headers) cmd << " \\\n  -H " << shell_quote(k + ": " + v);
    if (!body.empty()) cmd << " \\\n  --data-binary " << shell_quote(body);
    cmd << " \\\n  " << shell_quote(base + path);
    std::cout << cmd.str() << "\n";
    return 0;
  }
  for (const auto& [k, v] : headers) std::cout << k << ": " << v << "\n";
  return 0;
}
