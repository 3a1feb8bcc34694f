#include "ledger/result_render.hpp"

#include <charconv>
#include <cstdint>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ledger/errors.hpp"
#include "ledger/json_document.hpp"

namespace mr::ledger {

Response render_result(std::string_view result_json, std::string_view request_id) {
  const auto internal = [&] {
    return error_response(ErrorCode::internal_error, "", request_id);
  };
  JsonDocument d;
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
    auto body = ok_body([&](JsonWriter& w) { return d["data"].Accept(w); });
    if (!body) return internal();
    const int status = outcome == "created" ? 201 : outcome == "accepted" ? 202 : 200;
    return Response{status, std::move(*body), replayed};
  }
  const auto code = code_from_name(outcome);
  if (!code) return internal();
  Error error{*code, {}, {}};
  if (d.HasMember("message") && d["message"].IsString()) error.message = d["message"].GetString();
  if (d.HasMember("details") && d["details"].IsArray()) {
    for (const auto& p : d["details"].GetArray()) {
      if (p.IsObject() && p.HasMember("field") && p["field"].IsString() && p.HasMember("problem") &&
          p["problem"].IsString()) {
        error.details.push_back({p["field"].GetString(), p["problem"].GetString()});
      }
    }
  }
  // duplicate_request_id names the first redemption: a member of the
  // result beside "message", carried into error.redemptionId.
  if (d.HasMember("redemptionId") && d["redemptionId"].IsString()) {
    error.redemption_id.assign(d["redemptionId"].GetString(), d["redemptionId"].GetStringLength());
  }
  return error_response(error, first_id, replayed);
}

namespace {

// A bigint column as RapidJSON writes it; a numeric that does not fit goes
// through RapidJSON's own parse, as the jsonb text did before.
bool write_number(JsonWriter& w, std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && end == text.data() + text.size()) return w.Int64(v);
  JsonDocument d;
  d.Parse(text.data(), text.size());
  return !d.HasParseError() && d.IsNumber() && d.Accept(w);
}

}  // namespace

Response render_balance(const ResultView& row, std::string_view request_id) {
  const auto internal = [&] {
    return error_response(ErrorCode::internal_error, "", request_id);
  };
  if (row.rows() == 0) {
    const auto code = ErrorCode::cardholder_not_found;
    return error_response(code, "", request_id);
  }
  enum Col { external_id, status, points, reserved, earned, redeemed, currency, cash };
  if (row.rows() != 1) return internal();
  for (int c : {external_id, status, points, reserved, earned, redeemed, cash}) {
    if (row.is_null(0, c)) return internal();
  }
  const auto text = [&](int c) { return row.value(0, c); };
  const auto str = [&](JsonWriter& w, int c) {
    const auto v = text(c);
    return w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  auto body = ok_body([&](JsonWriter& w) {
    w.StartObject();
    w.Key("currency");
    if (row.is_null(0, currency)) {
      w.Null();
    } else {
      str(w, currency);
    }
    w.Key("memberStatus");
    str(w, status);
    w.Key("pointsBalance");
    bool ok = write_number(w, text(points));
    w.Key("cashValueMinor");
    ok = write_number(w, text(cash)) && ok;
    w.Key("externalMemberId");
    str(w, external_id);
    w.Key("lifetimePointsEarned");
    ok = write_number(w, text(earned)) && ok;
    w.Key("reservedPointsBalance");
    ok = write_number(w, text(reserved)) && ok;
    w.Key("lifetimePointsRedeemed");
    ok = write_number(w, text(redeemed)) && ok;
    return w.EndObject() && ok;
  });
  if (!body) return internal();
  return Response{200, std::move(*body), false};
}

}  // namespace mr::ledger
