#include "ledger/result_render.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ledger/errors.hpp"

namespace mr::ledger {

Response render_result(std::string_view result_json, std::string_view request_id) {
  const auto internal = [&] {
    return Response{500, render_error(ErrorCode::internal_error, "", request_id), false};
  };
  rapidjson::Document d;
  d.Parse(result_json.data(), result_json.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("outcome") || !d["outcome"].IsString()) {
    return internal();
  }
  const std::string_view outcome(d["outcome"].GetString(), d["outcome"].GetStringLength());
  const bool replayed = d.HasMember("replayed") && d["replayed"].IsTrue();
  // The first answer's request id: a replay repeats it.
  std::string_view first_id = request_id;
  if (d.HasMember("requestId") && d["requestId"].IsString()) {
    first_id = {d["requestId"].GetString(), d["requestId"].GetStringLength()};
  }
  if (outcome == "ok" || outcome == "created" || outcome == "updated" || outcome == "accepted") {
    if (!d.HasMember("data") || !d["data"].IsObject()) return internal();
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> w(out);
    w.StartObject();
    w.Key("ok");
    w.Bool(true);
    w.Key("data");
    d["data"].Accept(w);
    w.EndObject();
    const int status = outcome == "created" ? 201 : outcome == "accepted" ? 202 : 200;
    return Response{status, std::string(out.GetString(), out.GetSize()), replayed};
  }
  const auto code = code_from_name(outcome);
  if (!code) return internal();
  std::string message;
  if (d.HasMember("message") && d["message"].IsString()) message = d["message"].GetString();
  std::vector<FieldProblem> details;
  if (d.HasMember("details") && d["details"].IsArray()) {
    for (const auto& p : d["details"].GetArray()) {
      if (p.IsObject() && p.HasMember("field") && p["field"].IsString() && p.HasMember("problem") &&
          p["problem"].IsString()) {
        details.push_back({p["field"].GetString(), p["problem"].GetString()});
      }
    }
  }
  return Response{http_status(*code), render_error(*code, message, first_id, details), replayed};
}

}  // namespace mr::ledger
