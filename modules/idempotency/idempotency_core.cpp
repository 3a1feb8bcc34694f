#include "modules/idempotency/idempotency_core.hpp"

#include <openssl/crypto.h>

#include <array>

#include <rapidjson/document.h>

#include "signing/hmac_key.hpp"
#include "ledger/json_document.hpp"
#include "ledger/json_text.hpp"
#include "signing/digest.hpp"

namespace mr::idempotency {
namespace {

std::string write_record(bool done, std::string_view fingerprint, int status, std::string_view body,
                         std::int64_t expires_ms, std::optional<ErrorCode> error) {
  ledger::JsonText w(96 + fingerprint.size() + body.size());
  w.StartObject();
  w.Key("state");
  w.String(done ? "done" : "pending");
  w.Key("fingerprint");
  w.String(fingerprint.data(), static_cast<rapidjson::SizeType>(fingerprint.size()));
  if (done) {
    w.Key("status");
    w.Int(status);
    w.Key("body");
    w.String(body.data(), static_cast<rapidjson::SizeType>(body.size()));
    if (expires_ms > 0) {
      w.Key("expiresMs");
      w.Int64(expires_ms);
    }
    if (error) {
      const std::string_view name = code_name(*error);
      w.Key("errorCode");
      w.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    }
  }
  w.EndObject();
  return w.str();
}

}  // namespace

std::string redis_key(std::int64_t club_id, std::string_view idempotency_key) {
  std::string key = "mr:idem:";
  key.append(std::to_string(club_id)).append(":").append(idempotency_key);
  return key;
}

namespace {

constexpr std::size_t kMacHex = 64;
using MacHex = std::array<char, kMacHex>;

// HMAC over the key, a newline and the record (the key holds no newline),
// hashed as pieces: no joined copy per request.
std::optional<MacHex> record_mac_hex(const HmacKey& mac, std::string_view redis_key, std::string_view record) {
  const std::string_view pieces[] = {redis_key, "\n", record};
  const auto digest = mac.digest(pieces);
  if (!digest) return std::nullopt;
  static_assert(std::tuple_size_v<HmacDigest> * 2 == kMacHex);
  MacHex hex;
  to_hex(digest->data(), digest->size(), hex.data());
  return hex;
}

}  // namespace

std::optional<std::string> seal_record(const HmacKey& mac, std::string_view redis_key, std::string_view record) {
  const auto hex = record_mac_hex(mac, redis_key, record);
  if (!hex) return std::nullopt;
  std::string sealed;
  sealed.reserve(kMacHex + record.size());
  return sealed.append(hex->data(), kMacHex).append(record);
}

std::optional<std::string> open_record(const HmacKey& mac, std::string_view redis_key, std::string_view stored) {
  if (stored.size() < kMacHex) return std::nullopt;
  const std::string_view record = stored.substr(kMacHex);
  const auto expected = record_mac_hex(mac, redis_key, record);
  if (!expected || CRYPTO_memcmp(expected->data(), stored.data(), kMacHex) != 0) return std::nullopt;
  return std::string(record);
}

std::string pending_record(std::string_view fingerprint) {
  return write_record(false, fingerprint, 0, {}, 0, std::nullopt);
}

std::string done_record(std::string_view fingerprint, int status, std::string_view body,
                        std::int64_t expires_ms, std::optional<ErrorCode> error) {
  return write_record(true, fingerprint, status, body, expires_ms, error);
}

std::optional<Record> parse_record(std::string_view text) {
  mr::ledger::JsonDocument d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  const auto str = [&d](const char* k) -> const rapidjson::Value* {
    auto it = d.FindMember(k);
    return it != d.MemberEnd() && it->value.IsString() ? &it->value : nullptr;
  };
  const rapidjson::Value* state = str("state");
  const rapidjson::Value* fp = str("fingerprint");
  if (state == nullptr || fp == nullptr) return std::nullopt;
  Record r;
  r.fingerprint.assign(fp->GetString(), fp->GetStringLength());
  const std::string_view s(state->GetString(), state->GetStringLength());
  if (s == "pending") return r;
  if (s != "done") return std::nullopt;
  auto status = d.FindMember("status");
  const rapidjson::Value* body = str("body");
  if (status == d.MemberEnd() || !status->value.IsInt() || body == nullptr) return std::nullopt;
  r.done = true;
  r.status = status->value.GetInt();
  r.body.assign(body->GetString(), body->GetStringLength());
  // Optional: records stored before it was kept have none.
  if (auto expires = d.FindMember("expiresMs"); expires != d.MemberEnd()) {
    if (!expires->value.IsInt64() || expires->value.GetInt64() <= 0) return std::nullopt;
    r.expires_ms = expires->value.GetInt64();
  }
  if (auto code = d.FindMember("errorCode"); code != d.MemberEnd()) {
    if (!code->value.IsString()) return std::nullopt;
    r.error = code_from_name({code->value.GetString(), code->value.GetStringLength()});
    if (!r.error) return std::nullopt;
  } else {
    if (r.status >= 400) r.error = envelope_code(r.body);  // stored before codes were kept
  }
  return r;
}

Decision decide(const Record& existing, std::string_view fingerprint) {
  if (existing.fingerprint != fingerprint) return Decision::conflict;
  return existing.done ? Decision::replay : Decision::in_progress;
}

std::optional<ErrorCode> envelope_code(std::string_view body) {
  mr::ledger::JsonDocument d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  auto error = d.FindMember("error");
  if (error == d.MemberEnd() || !error->value.IsObject()) return std::nullopt;
  auto code = error->value.FindMember("code");
  if (code == error->value.MemberEnd() || !code->value.IsString()) return std::nullopt;
  return code_from_name({code->value.GetString(), code->value.GetStringLength()});
}

bool storable(int status, std::optional<ErrorCode> error) {
  if (status >= 200 && status < 300) return true;
  if (status != 404 && status != 409 && status != 422) return false;
  // not_found is an unknown path, decided before any body check: the client
  // may fix the path and retry with the same key.
  return error && *error != ErrorCode::duplicate_idempotency_conflict &&
         *error != ErrorCode::idempotency_in_progress && *error != ErrorCode::not_found;
}

}  // namespace mr::idempotency
