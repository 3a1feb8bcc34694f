// mr-route-table: prints the partner route table (ledger/routes.cpp) and
// the error code table (ledger/errors.cpp) as JSON, so that
// tests/docs/openapi_check.py can hold docs/openapi.yaml against the code
// itself rather than against a second copy of either table.
#include <cstdio>
#include <exception>
#include <string>

#include "ledger/errors.hpp"
#include "ledger/json_text.hpp"
#include "ledger/routes.hpp"

int main() {
  try {
    mr::ledger::JsonText w(4096);
    const auto str = [&w](std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); };
    w.StartObject();
    w.Key("routes");
    w.StartArray();
    for (const auto& r : mr::ledger::partner_routes()) {
      w.StartObject();
      w.Key("method");
      str(r.method);
      w.Key("path");
      str(r.path);
      w.Key("route");
      str(mr::ledger::route_label(r.route));
      w.EndObject();
    }
    w.EndArray();
    w.Key("errors");
    w.StartArray();
    for (const auto code : mr::all_codes()) {
      w.StartObject();
      w.Key("code");
      str(mr::code_name(code));
      w.Key("status");
      w.Int(mr::http_status(code));
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    const std::string out = w.str() + "\n";
    return std::fwrite(out.data(), 1, out.size(), stdout) == out.size() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mr-route-table: %s\n", e.what());
    return 1;
  }
}
