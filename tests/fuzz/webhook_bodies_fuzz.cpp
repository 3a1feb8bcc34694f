// The webhook endpoint body parsers (ledger/webhook_requests.*) and the
// events query (ledger/events_query.*) on the same bytes, and the webhook
// result renderer on them as a database result. A refusal is
// invalid_request rendered as JSON; an accepted body gives a command
// PostgreSQL takes as jsonb (valid UTF-8, no NUL, no clubId) whose url and
// event types obey the rules; a rendered answer is JSON with a sealed
// secret never in it.
#include <cstring>

#include "ledger/events_query.hpp"
#include "ledger/json_fields.hpp"
#include "ledger/webhook_render.hpp"
#include "ledger/webhook_requests.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "tests/fuzz/prepared_check.hpp"

using namespace mr::ledger;

namespace {

void check_error(const mr::Error& e) {
  FUZZ_CHECK(e.code == mr::ErrorCode::invalid_request);
  FUZZ_CHECK(mr::fuzz::is_json_object(mr::render_error(e, "rid")));
}

void check(WebhookOp op, std::string_view body, std::string_view environment) {
  const auto parsed = parse_webhook_body(op, body, environment);
  if (const auto* e = std::get_if<mr::Error>(&parsed)) return check_error(*e);
  const auto& b = std::get<WebhookBody>(parsed);
  const bool sandbox = environment == "sandbox";
  if (b.url) FUZZ_CHECK(!webhook_url_problem(*b.url, sandbox).has_value());
  FUZZ_CHECK(op == WebhookOp::create ? b.url.has_value() : op != WebhookOp::update ? !b.url : true);
  FUZZ_CHECK(op == WebhookOp::replay ? b.since.has_value() : !b.since);
  if (b.event_types) {
    for (std::size_t i = 0; i < b.event_types->size(); ++i) {
      FUZZ_CHECK(is_event_type((*b.event_types)[i]));
      for (std::size_t j = 0; j < i; ++j) FUZZ_CHECK((*b.event_types)[i] != (*b.event_types)[j]);
    }
  }
  if (b.description && *b.description) {
    FUZZ_CHECK(!(*b.description)->empty() && (*b.description)->size() <= kMaxWebhookDescription);
  }
  const auto cmd = webhook_command(op, b, "we_1", "c2VhbGVk");
  FUZZ_CHECK(cmd.op == webhook_op_name(op));
  FUZZ_CHECK(mr::fuzz::is_json_object(cmd.cmd_json));
  FUZZ_CHECK(is_storable_utf8(cmd.cmd_json));
  rapidjson::Document doc;
  doc.Parse(cmd.cmd_json.data(), cmd.cmd_json.size());
  FUZZ_CHECK(!doc.HasParseError() && !contains_club_id(doc));
  FUZZ_CHECK(doc.HasMember("endpointId") && doc.HasMember("partnerRef"));
  FUZZ_CHECK(doc.HasMember("secretSealed") == (op == WebhookOp::create || op == WebhookOp::rotate));
}

void check_render(std::string_view result) {
  for (const WebhookSecrets* s : {static_cast<const WebhookSecrets*>(&mr::fuzz::kFuzzWebhookSecrets),
                                  static_cast<const WebhookSecrets*>(nullptr)}) {
    const Response r = render_webhook_result(result, "rid", s);
    FUZZ_CHECK(r.status >= 200 && r.status < 600);
    FUZZ_CHECK(mr::fuzz::is_json_object(r.body));
    // A success's data never carries the sealed form.
    rapidjson::Document d;
    d.Parse(r.body.data(), r.body.size());
    const auto data = d.FindMember("data");
    if (data != d.MemberEnd() && data->value.IsObject()) FUZZ_CHECK(!data->value.HasMember("secretSealed"));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body = mr::fuzz::bytes(data, size);
  for (const std::string_view environment : {"production", "sandbox"}) {
    for (const auto op : {WebhookOp::create, WebhookOp::update, WebhookOp::rotate, WebhookOp::remove,
                          WebhookOp::replay}) {
      check(op, body, environment);
    }
  }
  const auto url = webhook_url_problem(body, size % 2 == 0);
  if (url) FUZZ_CHECK(!url->empty());
  const auto events = parse_events_query(body);
  if (const auto* e = std::get_if<mr::Error>(&events)) {
    check_error(*e);
  } else {
    const auto& q = std::get<EventsQuery>(events);
    FUZZ_CHECK(q.limit >= 1 && q.limit <= 100);
    if (q.after) FUZZ_CHECK(!q.after->empty() && q.after->size() <= 128 && is_storable_utf8(*q.after));
    if (q.types) FUZZ_CHECK(is_storable_utf8(*q.types) && !q.types->empty());
  }
  check_render(body);
  return 0;
}
