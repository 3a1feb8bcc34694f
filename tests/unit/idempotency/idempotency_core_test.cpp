// The nginx-free idempotency rules: record format, decisions, what is kept.
#include <criterion/criterion.h>

#include <string>

#include "ledger/errors.hpp"
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
  const auto err = [](mr::ErrorCode c) { return mr::render_error(c, "", "rid"); };
  cr_expect(storable(200, "{}"));
  cr_expect(storable(201, "{}"));
  cr_expect(storable(202, "{}"));
  cr_expect(storable(404, err(mr::ErrorCode::cardholder_not_found)));
  cr_expect(storable(404, err(mr::ErrorCode::partner_not_found)));
  cr_expect(storable(409, err(mr::ErrorCode::duplicate_transaction)));
  cr_expect(storable(422, err(mr::ErrorCode::unsupported_currency)));
  cr_expect(!storable(422, err(mr::ErrorCode::duplicate_idempotency_conflict)));
  cr_expect(!storable(404, err(mr::ErrorCode::not_found)), "an unknown path may be fixed and retried");
  cr_expect(!storable(409, err(mr::ErrorCode::idempotency_in_progress)));
  cr_expect(!storable(400, err(mr::ErrorCode::invalid_request)));
  cr_expect(!storable(401, err(mr::ErrorCode::unauthorized)));
  cr_expect(!storable(413, err(mr::ErrorCode::payload_too_large)));
  cr_expect(!storable(429, err(mr::ErrorCode::rate_limited)));
  cr_expect(!storable(500, err(mr::ErrorCode::internal_error)));
  cr_expect(!storable(503, err(mr::ErrorCode::service_unavailable)));
}
