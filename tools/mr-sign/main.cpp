// mr-sign: signs a partner API request (contract section 2) and prints its
// headers, a ready-to-paste curl command, or sends it and prints the answer.
//
//   mr-sign --method POST --path /api/v1/members --body FILE|- [--key-id ID]
//           [--secret S] [--timestamp T] [--idempotency-key K]
//           [--send BASE_URL | --print-curl [--base-url URL]]
// Defaults: MR_KEY_ID, MR_KEY_SECRET, MR_BASE_URL from the environment.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include "lua-free-config/secret_box.hpp"
#include "tests/support/mr_client.hpp"

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int fail(const std::string& message) {
  std::cerr << "mr-sign: " << message << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--print-curl") {
      opt["print-curl"] = "1";
    } else if (a.starts_with("--") && i + 1 < argc) {
      opt[a.substr(2)] = argv[++i];
    } else {
      return fail("unexpected argument " + a);
    }
  }
  const auto get = [&](const std::string& k, const char* env) -> std::string {
    if (opt.contains(k)) return opt[k];
    const char* v = env ? std::getenv(env) : nullptr;
    return v ? v : "";
  };
  const std::string key_id = get("key-id", "MR_KEY_ID"), secret = get("secret", "MR_KEY_SECRET");
  std::string method = get("method", nullptr), path = get("path", nullptr);
  if (key_id.empty() || secret.empty()) return fail("--key-id and --secret (or MR_KEY_ID, MR_KEY_SECRET) are required");
  if (method.empty() || path.empty()) return fail("--method and --path are required");
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
  mr::MrClient client(base, key_id, secret);
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
    mr::HttpResponse r = client.send(method, path, body, headers);
    if (r.status == 0) return fail("no answer from " + base);
    std::cout << "HTTP " << r.status << "\n";
    for (const auto& [k, v] : r.headers) std::cout << k << ": " << v << "\n";
    std::cout << "\n" << r.body << "\n";
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
