// The nginx-free idempotency rules: record format, decisions, what is kept.
#include <criterion/criterion.h>

#include <string>

#include "ledger/errors.hpp"
#include "signing/hmac_key.hpp"
#include "modules/idempotency/idempotency_core.hpp"

using namespace mr::idempotency;

Test(idempotency_core, key_is_scoped_by_club) {
  cr_expect_eq(redis_key(7, "abc"), std::string("mr:idem:7:abc"));
  cr_expect_neq(redis_key(7, "abc"), redis_key(8, "abc"));
  // A colon in the key cannot make two clubs' keys meet: the club id is digits.
  cr_expect_neq(redis_key(1, "2:x"), redis_key(12, ":x"));
}

Test(idempotency_core, pending_round_trip) {
  auto r = parse_record(pending_record("f1"));
  cr_assert(r.has_value());
  cr_expect(!r->done);
  cr_expect_eq(r->fingerprint, std::string("f1"));
}

Test(idempotency_core, done_round_trip_keeps_bytes) {
  const std::string body = "{\"ok\":true,\"data\":{\"x\":\"\\u00e9\\n\\\"q\\\"\"}}";
  auto r = parse_record(done_record("f2", 201, body));
  cr_assert(r.has_value());
  cr_expect(r->done);
  cr_expect_eq(r->status, 201);
  cr_expect_eq(r->body, body);
}

Test(idempotency_core, done_record_carries_its_expiry) {
  auto r = parse_record(done_record("f2", 200, "{}", 1'790'000'000'123));
  cr_assert(r.has_value());
  cr_expect_eq(r->expires_ms, 1'790'000'000'123);
  // Records stored before the expiry was kept still replay; they carry none.
  auto old = parse_record(R"({"state":"done","fingerprint":"f","status":200,"body":"{}"})");
  cr_assert(old.has_value());
  cr_expect_eq(old->expires_ms, 0);
  cr_expect(!parse_record(R"({"state":"done","fingerprint":"f","status":200,"body":"{}","expiresMs":"1"})"));
  cr_expect(!parse_record(R"({"state":"done","fingerprint":"f","status":200,"body":"{}","expiresMs":-5})"));
}

Test(idempotency_core, unreadable_records) {
  cr_expect(!parse_record("").has_value());
  cr_expect(!parse_record("not json").has_value());
  cr_expect(!parse_record(R"({"state":"done","fingerprint":"f"})").has_value());
  cr_expect(!parse_record(R"({"state":"other","fingerprint":"f"})").has_value());
  cr_expect(!parse_record(R"({"fingerprint":"f"})").has_value());
}

Test(idempotency_core, decisions) {
  Record pending{false, "f", 0, ""};
  Record done{true, "f", 200, "{}"};
  cr_expect(decide(pending, "f") == Decision::in_progress);
  cr_expect(decide(pending, "g") == Decision::conflict);
  cr_expect(decide(done, "f") == Decision::replay);
  cr_expect(decide(done, "g") == Decision::conflict);
}

Test(idempotency_core, what_is_kept) {
  using mr::ErrorCode;
  cr_expect(storable(200, std::nullopt));
  cr_expect(storable(201, std::nullopt));
  cr_expect(storable(202, std::nullopt));
  cr_expect(storable(404, ErrorCode::cardholder_not_found));
  cr_expect(storable(404, ErrorCode::partner_not_found));
  cr_expect(storable(409, ErrorCode::duplicate_transaction));
  cr_expect(storable(422, ErrorCode::unsupported_currency));
  cr_expect(!storable(422, ErrorCode::duplicate_idempotency_conflict));
  cr_expect(!storable(404, ErrorCode::not_found), "an unknown path may be fixed and retried");
  cr_expect(!storable(409, ErrorCode::idempotency_in_progress));
  cr_expect(!storable(404, std::nullopt), "a 404 that is no envelope of ours");
  cr_expect(!storable(400, ErrorCode::invalid_request));
  cr_expect(!storable(401, ErrorCode::unauthorized));
  cr_expect(!storable(413, ErrorCode::payload_too_large));
  cr_expect(!storable(429, ErrorCode::rate_limited));
  cr_expect(!storable(500, ErrorCode::internal_error));
  cr_expect(!storable(503, ErrorCode::service_unavailable));
}

// A failure's code travels with its record; a record stored before it did
// gets it back from the body it replays.
Test(idempotency_core, done_record_carries_its_error_code) {
  using mr::ErrorCode;
  const std::string body = mr::render_error(ErrorCode::member_closed, "", "rid");
  auto r = parse_record(done_record("f", 409, body, 1, ErrorCode::member_closed));
  cr_assert(r.has_value());
  cr_expect(r->error == ErrorCode::member_closed);
  auto ok = parse_record(done_record("f", 200, "{}", 1));
  cr_assert(ok.has_value());
  cr_expect(!ok->error.has_value());
  // Without a code: the record as stored before codes were kept.
  auto old = parse_record(done_record("f", 409, body, 1));
  cr_assert(old.has_value());
  cr_expect(old->error == ErrorCode::member_closed);
  cr_expect(!parse_record(R"({"state":"done","fingerprint":"f","status":409,"body":"{}","errorCode":"no_such"})"));
  cr_expect(!parse_record(R"({"state":"done","fingerprint":"f","status":409,"body":"{}","errorCode":1})"));
}

// Records are sealed to their Redis key: a forgery, an edit, a record moved
// to another club's or key's slot, or one sealed with another key is refused.
Test(idempotency_core, sealed_records) {
  const mr::HmacKey mac(std::string(32, 'k')), other(std::string(32, 'o'));
  const std::string key = redis_key(7, "abc"), record = done_record("f1", 201, R"({"ok":true})");
  const auto sealed = seal_record(mac, key, record);
  cr_assert(sealed.has_value());
  cr_expect_eq(sealed->size(), 64 + record.size());
  auto opened = open_record(mac, key, *sealed);
  cr_assert(opened.has_value());
  cr_expect_eq(*opened, record);
  cr_expect(!open_record(mac, key, record).has_value(), "an unsealed record (as anyone could write)");
  std::string edited = *sealed;
  edited.replace(edited.find("201"), 3, "200");
  cr_expect(!open_record(mac, key, edited).has_value(), "an edited record");
  cr_expect(!open_record(mac, redis_key(8, "abc"), *sealed).has_value(), "moved to another club");
  cr_expect(!open_record(mac, redis_key(7, "abd"), *sealed).has_value(), "moved to another key");
  cr_expect(!open_record(other, key, *sealed).has_value(), "sealed with another key");
  cr_expect(!open_record(mac, key, "").has_value());
  cr_expect(!open_record(mac, key, sealed->substr(0, 63)).has_value());
}
