#include "ledger/webhook_render.hpp"

#include <rapidjson/document.h>

#include "ledger/errors.hpp"
#include "ledger/json_document.hpp"
#include "ledger/result_render.hpp"

namespace mr::ledger {
namespace {

// The plaintext secret is wiped when the answer has been written.
struct WipedSecret {
  std::optional<std::string> text;
  ~WipedSecret() {
    if (text) {
      volatile char* p = text->data();
      for (std::size_t i = 0; i < text->size(); ++i) p[i] = 0;
    }
  }
};

std::string_view view(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

// data's members in their order, "secretSealed" opened into "secret" in its
// place (or left out): the same result always renders to the same bytes.
bool write_data(JsonWriter& w, const rapidjson::Value& data, const WebhookSecrets* reveal_with, bool& revealed) {
  w.StartObject();
  for (const auto& m : data.GetObject()) {
    if (view(m.name) != "secretSealed") {
      if (!w.Key(m.name.GetString(), m.name.GetStringLength()) || !m.value.Accept(w)) return false;
      continue;
    }
    if (reveal_with == nullptr) continue;
    const auto id = data.FindMember("endpointId");
    if (!m.value.IsString() || id == data.MemberEnd() || !id->value.IsString()) return false;
    WipedSecret secret{reveal_with->open(view(id->value), view(m.value))};
    if (!secret.text) return false;
    w.Key("secret");
    w.String(secret.text->data(), static_cast<rapidjson::SizeType>(secret.text->size()));
    revealed = true;
  }
  return w.EndObject();
}

}  // namespace

Response render_webhook_result(std::string_view result_json, std::string_view request_id,
                               const WebhookSecrets* reveal_with) {
  JsonDocument d;
  // PostgreSQL's jsonb text is valid UTF-8; anything else is malformed
  // (internal_error), never passed on to the client.
  d.Parse<rapidjson::kParseValidateEncodingFlag>(result_json.data(), result_json.size());
  const auto internal = [&] {
    return error_response(ErrorCode::internal_error, "", request_id);
  };
  if (d.HasParseError() || !d.IsObject()) return internal();
  const auto outcome = d.FindMember("outcome");
  const std::string_view name =
      outcome != d.MemberEnd() && outcome->value.IsString() ? view(outcome->value) : "";
  const bool success = name == "ok" || name == "created" || name == "updated" || name == "accepted";
  // Failures as every result (render_error keeps them valid UTF-8).
  if (!success) return render_result(result_json, request_id);
  const auto data = d.FindMember("data");
  if (data == d.MemberEnd() || !data->value.IsObject()) return internal();
  bool revealed = false;
  auto body = ok_body([&](JsonWriter& w) { return write_data(w, data->value, reveal_with, revealed); });
  if (!body) return internal();
  const auto replayed = d.FindMember("replayed");
  const int status = name == "created" ? 201 : name == "accepted" ? 202 : 200;
  Response out{status, std::move(*body), replayed != d.MemberEnd() && replayed->value.IsTrue()};
  out.no_store = revealed;
  return out;
}

}  // namespace mr::ledger
