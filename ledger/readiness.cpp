#include "ledger/readiness.hpp"

#include <algorithm>
#include <charconv>

#include "ledger/errors.hpp"
#include "ledger/result_render.hpp"
#include "ledger/sql/migrations.hpp"

namespace mr::ledger {
namespace {

// The newest migration these modules were built with: fixed at build
// time, found once.
int newest_migration() {
  static const int newest = [] {
    int v = 0;
    for (const Migration& m : migrations()) v = std::max(v, m.version);
    return v;
  }();
  return newest;
}

PodReadiness behind(std::string_view pod, int version) {
  return {std::string(pod), false,
          "The ledger database's schema is at migration " + std::to_string(version) + ", these modules need " +
              std::to_string(newest_migration()) + ": run `mrctl migrate`."};
}

}  // namespace

PodReadiness readiness_of_version(std::string_view pod, std::string_view version_text) {
  int version = 0;
  const auto [end, ec] = std::from_chars(version_text.data(), version_text.data() + version_text.size(), version);
  if (ec != std::errc{} || end != version_text.data() + version_text.size()) {
    return {std::string(pod), false, "The ledger database answered an unreadable schema version."};
  }
  if (version < newest_migration()) return behind(pod, version);
  return {std::string(pod), true, {}};
}

PodReadiness readiness_of_sql_error(std::string_view pod, std::string_view sqlstate) {
  if (sqlstate == "42P01") return behind(pod, 0);
  return {std::string(pod), false, "The ledger database could not say its schema version (SQLSTATE " +
                                       std::string(sqlstate) + ")."};
}

PodReadiness readiness_unavailable(std::string_view pod) {
  return {std::string(pod), false, "The ledger database cannot be reached."};
}

Response render_readiness(const std::vector<PodReadiness>& pods, std::string_view request_id) {
  const bool all = std::all_of(pods.begin(), pods.end(), [](const PodReadiness& p) { return p.ready; });
  if (pods.size() == 1) {
    if (all) return Response{200, R"({"ok":true,"data":{"status":"ready"}})", false};
    return error_response(ErrorCode::service_unavailable, pods.front().reason, request_id);
  }
  if (all) {
    auto body = ok_body([&pods](JsonWriter& w) {
      w.StartObject();
      w.Key("status");
      w.String("ready");
      w.Key("pods");
      w.StartArray();
      for (const PodReadiness& p : pods) {
        w.StartObject();
        w.Key("pod");
        w.String(p.pod.data(), static_cast<rapidjson::SizeType>(p.pod.size()));
        w.Key("status");
        w.String("ready");
        w.EndObject();
      }
      w.EndArray();
      return w.EndObject();
    });
    if (!body) return error_response(ErrorCode::internal_error, "", request_id);
    return Response{200, std::move(*body), false};
  }
  std::string message;
  for (const PodReadiness& p : pods) {
    if (p.ready) continue;
    message += (message.empty() ? "Not ready: pod " : "; pod ") + p.pod + ": " + p.reason;
  }
  return error_response(ErrorCode::service_unavailable, message, request_id);
}

}  // namespace mr::ledger
