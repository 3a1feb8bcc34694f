// What the nginx glue sees of the ledger: a request that passed the edge
// becomes either an immediate response or ONE statement whose single
// jsonb result the domain renders. Never throws.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ledger/errors.hpp"
#include "ledger/write_batch.hpp"

namespace mr::ledger {

// Webhook endpoint secrets (contract section 10), kept by the glue: the key
// they are sealed with never enters the domain, and a plaintext secret
// only ever goes into the answer that shows it. Unit tests fake it.
class WebhookSecrets {
 public:
  virtual ~WebhookSecrets() = default;
  // A new endpoint id ("we_..."); "" on failure.
  virtual std::string new_endpoint_id() const = 0;
  // A new secret for the endpoint, sealed (base64); "" on failure.
  virtual std::string new_sealed_secret(std::string_view endpoint_id) const = 0;
  // The secret a sealed one holds; nullopt when it does not open.
  virtual std::optional<std::string> open(std::string_view endpoint_id, std::string_view sealed) const = 0;
};

struct Request {
  std::string_view method;
  std::string_view path;   // raw, without the query
  std::string_view query;  // raw, without '?'
  std::string_view body;
  std::int64_t club_id = 0;
  std::string_view partner_ref;  // the key's club
  std::string_view request_id;
  std::string_view idempotency_key;  // POST
  std::string_view fingerprint;      // POST: SHA-256 of method, path, body
  // POST: the signature's MAC. It serves one idempotency key (contract
  // section 2): mr_write refuses it under another one. nullopt: unchecked.
  std::optional<HmacDigest> signature;
  std::string_view environment;      // the deployment's mr_environment: sandbox | production
  // mr_test_helpers on (sandbox only, nginx -t refuses it elsewhere): the
  // test-helper routes exist; without it their paths are not_found.
  bool test_helpers = false;
  // Null: the webhook endpoint writes answer internal_error.
  const WebhookSecrets* webhook_secrets = nullptr;
};

inline constexpr std::string_view kJsonContentType = "application/json";
// Prometheus' text exposition format (the ops listener's /metrics).
inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4";

struct Response {
  int status = 500;
  std::string body;
  bool replayed = false;  // answered from a kept idempotency record
  std::string_view content_type = kJsonContentType;  // a static string
  // Carries a secret (a webhook endpoint's): sent with Cache-Control:
  // no-store, which the edge's idempotency module honours by keeping no
  // copy; a retry is answered from the database's record, where the secret
  // is sealed.
  bool no_store = false;
  // A failure envelope's code, kept beside the body where it is rendered:
  // the glue tells metrics and the access log from it, never by reading
  // the body back. nullopt for a success.
  std::optional<ErrorCode> error = std::nullopt;
};

// The failure envelope of `code` (or `error`) with its HTTP status and the
// code kept typed beside it.
inline Response error_response(ErrorCode code, std::string_view message, std::string_view request_id,
                               std::span<const FieldProblem> details = {}) {
  return Response{http_status(code), render_error(code, message, request_id, details), false,
                  kJsonContentType, false, code};
}
inline Response error_response(const Error& error, std::string_view request_id, bool replayed = false) {
  return Response{http_status(error.code), render_error(error, request_id), replayed, kJsonContentType, false,
                  error.code};
}

struct Query {
  std::string sql;  // from ledger/statements.hpp
  std::vector<std::optional<std::string>> params;  // $1.. as text
  // A settle, reversal or redemption: may run with others of its kind
  // queued at the same time in one batch statement (write_batch.hpp),
  // keeping its own outcome.
  BatchKind batch = BatchKind::none;
};

class ResultView {
 public:
  virtual ~ResultView() = default;
  virtual int rows() const = 0;
  virtual bool is_null(int row, int col) const = 0;
  virtual std::string_view value(int row, int col) const = 0;
};

class Pending {
 public:
  virtual ~Pending() = default;
  virtual const Query& query() const = 0;
  virtual Response render(const ResultView& result, std::string_view request_id) const = 0;
  // A statement that raised: the answer, when the error is one the
  // statement raises on purpose (its SQLSTATE); nullopt for internal_error.
  virtual std::optional<Response> on_sql_error(std::string_view /*sqlstate*/,
                                               std::string_view /*request_id*/) const {
    return std::nullopt;
  }
  // The database could not be reached or did not answer in time: the
  // answer, when the statement has one of its own; nullopt for
  // service_unavailable.
  virtual std::optional<Response> on_unavailable(std::string_view /*request_id*/) const { return std::nullopt; }
};

using Prepared = std::variant<Response, std::unique_ptr<Pending>>;

Prepared prepare(const Request& request) noexcept;

// The ops listener (payouts, readiness, metrics): method, path, query and
// body; the token was checked by the glue.
Prepared prepare_ops(const Request& request) noexcept;

}  // namespace mr::ledger
