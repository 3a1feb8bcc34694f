#include "ledger/write_requests.hpp"

#include <climits>
#include <functional>
#include <optional>

#include "ledger/json_fields.hpp"
#include "ledger/json_text.hpp"

namespace mr::ledger {
namespace {

constexpr std::int64_t kMaxAmount = 1000000000000;  // 10^12 minor units
constexpr std::size_t kMaxName = 200;

using Writer = JsonWriter;

void put(Writer& w, const char* key, const std::optional<std::string>& v) {
  if (!v) return;
  w.Key(key);
  w.String(v->data(), static_cast<rapidjson::SizeType>(v->size()));
}

void put(Writer& w, const char* key, const std::optional<std::int64_t>& v) {
  if (!v) return;
  w.Key(key);
  w.Int64(*v);
}

// Shared frame: parse, refuse clubId, read the fields, and either collect
// the problems into invalid_request or write the command.
Parsed build(std::string_view body, const char* op,
             const std::function<void(const rapidjson::Document&, Fields&, Writer&)>& read) {
  JsonDocument doc;
  if (auto refused = parse_partner_body(body, doc)) return *std::move(refused);
  std::vector<FieldProblem> problems;
  Fields f(problems);
  JsonText w(body.size());  // a command is about the body's size
  w.StartObject();
  read(doc, f, w);
  w.EndObject();
  if (!problems.empty()) {
    return Error{ErrorCode::invalid_request, "The body does not match the endpoint schema.", std::move(problems)};
  }
  return WriteCommand{op, w.str()};
}

void read_wallet(const rapidjson::Value& member, Fields& f, Writer& w) {
  const rapidjson::Value* wallet = f.object(member, "member", "wallet", false);
  if (wallet == nullptr) return;
  auto provider = f.text(*wallet, "member.wallet", "provider", kMaxName, false);
  auto wallet_ref = f.text(*wallet, "member.wallet", "walletRef", kMaxName, false);
  auto status = f.text(*wallet, "member.wallet", "status", 64, false);
  const rapidjson::Value* bank = f.object(*wallet, "member.wallet", "bankAccount", false);
  std::optional<std::string> number, sort, name;
  if (bank != nullptr) {
    number = f.digits(*bank, "member.wallet.bankAccount", "accountNumber", 8);
    sort = f.digits(*bank, "member.wallet.bankAccount", "sortCode", 6);
    name = f.text(*bank, "member.wallet.bankAccount", "name", kMaxName);
  }
  w.Key("wallet");
  w.StartObject();
  put(w, "provider", provider);
  put(w, "walletRef", wallet_ref);
  put(w, "status", status);
  if (bank != nullptr) {
    w.Key("bankAccount");
    w.StartObject();
    put(w, "accountNumber", number);
    put(w, "sortCode", sort);
    put(w, "name", name);
    w.EndObject();
  }
  w.EndObject();
}

// partnerRef, eventId, occurredAt and member.externalMemberId: the frame of
// both transaction requests.
const rapidjson::Value* read_event(const rapidjson::Document& d, Fields& f, Writer& w) {
  put(w, "partnerRef", f.identifier(d, "", "partnerRef"));
  put(w, "eventId", f.identifier(d, "", "eventId"));
  put(w, "occurredAt", f.timestamp(d, "", "occurredAt"));
  if (const rapidjson::Value* m = f.object(d, "", "member", true)) {
    put(w, "externalMemberId", f.identifier(*m, "member", "externalMemberId"));
  }
  return f.object(d, "", "transaction", true);
}

}  // namespace

Parsed parse_member(std::string_view body) {
  return build(body, "member", [](const rapidjson::Document& d, Fields& f, Writer& w) {
    put(w, "partnerRef", f.identifier(d, "", "partnerRef"));
    const rapidjson::Value* m = f.object(d, "", "member", true);
    if (m == nullptr) return;
    put(w, "externalMemberId", f.identifier(*m, "member", "externalMemberId"));
    put(w, "firstName", f.text(*m, "member", "firstName", kMaxName));
    put(w, "lastName", f.text(*m, "member", "lastName", kMaxName));
    put(w, "email", f.email(*m, "member", "email"));
    read_wallet(*m, f, w);
  });
}

Parsed parse_settlement(std::string_view body) {
  return build(body, "settle", [](const rapidjson::Document& d, Fields& f, Writer& w) {
    const rapidjson::Value* t = read_event(d, f, w);
    if (t == nullptr) return;
    put(w, "externalTransactionId", f.identifier(*t, "transaction", "externalTransactionId"));
    put(w, "merchantId", f.identifier(*t, "transaction", "merchantId"));
    put(w, "merchantName", f.text(*t, "transaction", "merchantName", kMaxName));
    put(w, "amountMinor", f.integer(*t, "transaction", "amountMinor", 1, kMaxAmount));
    put(w, "currency", f.currency(*t, "transaction", "currency"));
    put(w, "settledAt", f.timestamp(*t, "transaction", "settledAt"));
  });
}

Parsed parse_reversal(std::string_view body) {
  return build(body, "reverse", [](const rapidjson::Document& d, Fields& f, Writer& w) {
    put(w, "reason", f.note(d, "", "reason", 500));
    const rapidjson::Value* t = read_event(d, f, w);
    if (t == nullptr) return;
    put(w, "externalTransactionId", f.identifier(*t, "transaction", "externalTransactionId"));
    put(w, "amountMinor", f.integer(*t, "transaction", "amountMinor", 1, kMaxAmount, false));
    put(w, "currency", f.currency(*t, "transaction", "currency"));
  });
}

Parsed parse_redemption(std::string_view body) {
  return build(body, "redeem", [body](const rapidjson::Document& d, Fields& f, Writer& w) {
    put(w, "partnerRef", f.identifier(d, "", "partnerRef"));
    put(w, "requestId", f.identifier(d, "", "requestId"));
    if (const rapidjson::Value* m = f.object(d, "", "member", true)) {
      put(w, "externalMemberId", f.identifier(*m, "member", "externalMemberId"));
    }
    if (const rapidjson::Value* r = f.object(d, "", "redemption", true)) {
      // Any JSON integer here: its range is a business rule
      // (invalid_redemption_points), checked after the member. An integer
      // token beyond int64 is kept as "too big" rather than refused.
      std::optional<std::int64_t> points;
      const auto p = r->FindMember("points");
      if (p != r->MemberEnd() && p->value.IsNumber() && !p->value.IsInt64()) {
        points = clamped_integer_token(body, "redemption", "points");
      }
      if (!points) points = f.integer(*r, "redemption", "points", INT64_MIN, INT64_MAX);
      put(w, "points", points);
      put(w, "currency", f.currency(*r, "redemption", "currency"));
    }
  });
}

Parsed parse_test_payout(std::string_view body, std::string_view redemption_id) {
  const std::string redemption(redemption_id);
  return build(body, "test_payout", [&redemption](const rapidjson::Document& d, Fields& f, Writer& w) {
    put(w, "partnerRef", f.identifier(d, "", "partnerRef"));
    put(w, "redemptionId", std::optional<std::string>(redemption));
    auto outcome = f.text(d, "", "outcome", 16);
    if (outcome && *outcome != "succeeded" && *outcome != "failed") {
      f.problem("outcome", "must be succeeded or failed");
      outcome.reset();
    }
    put(w, "outcome", outcome);
    // As the operator's report takes it (ops listener, mrctl): used when
    // the payout fails.
    put(w, "failureReason", f.text(d, "", "failureReason", 500, false));
  });
}

Parsed parse_close(std::string_view body, std::string_view external_member_id) {
  const std::string member(external_member_id);
  return build(body, "close", [&member](const rapidjson::Document& d, Fields& f, Writer& w) {
    put(w, "partnerRef", f.identifier(d, "", "partnerRef"));
    put(w, "reason", f.note(d, "", "reason", 500));
    put(w, "externalMemberId", std::optional<std::string>(member));
  });
}

}  // namespace mr::ledger
