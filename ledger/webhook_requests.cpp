#include "ledger/webhook_requests.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "ledger/address_policy.hpp"
#include "ledger/json_fields.hpp"
#include "ledger/json_text.hpp"
#include "ledger/text_rules.hpp"

namespace mr::ledger {
namespace {

// More than the nine types with every one repeated: a longer list is a
// mistake, and bounds the work.
constexpr std::size_t kMaxEventTypeItems = 64;

bool ascii_iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

bool is_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_';
}

// RFC 3986's path and query characters: unreserved, sub-delims, ':', '@',
// '/', '?' and percent-escapes. Refused: space, '"', '<', '>', '\\', '^',
// '`', '{', '|', '}' (is_visible_ascii already refused controls).
bool valid_path_and_query(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() || hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0) return false;
      i += 2;
    } else if (std::string_view("\"<>\\^`{|}").find(c) != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// The refusal of a non-public IP literal: the class it is in, which says
// why a spelling such as 127.1 or [::ffff:10.0.0.1] counts as what it is.
// The class is the rule's word, not the client's bytes.
std::string not_public(AddressClass cls) {
  return "must name a public address, and this one is " + std::string(class_name(cls)) +
         " (loopback and private addresses are allowed in sandbox only)";
}

// Decimal digits only, 1 to 65535.
bool valid_port(std::string_view port) {
  int n = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  return port.size() <= 5 && ec == std::errc{} && end == port.data() + port.size() && n >= 1 && n <= 65535;
}

void put(JsonWriter& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

// eventTypes: an array of known types; a type sent twice counts once.
std::optional<std::vector<std::string>> read_event_types(const rapidjson::Value& d, Fields& f) {
  const auto it = d.FindMember("eventTypes");
  if (it == d.MemberEnd() || it->value.IsNull()) return std::nullopt;
  const std::string rule = "must be an array of event types, each one of " + event_type_list();
  if (!it->value.IsArray()) {
    f.problem("eventTypes", rule);
    return std::nullopt;
  }
  const auto items = it->value.GetArray();
  if (items.Size() > kMaxEventTypeItems) {
    f.problem("eventTypes", "must hold at most " + std::to_string(kMaxEventTypeItems) + " items");
    return std::nullopt;
  }
  std::vector<std::string> types;
  for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
    const auto& item = items[i];
    const std::string field = "eventTypes[" + std::to_string(i) + "]";
    if (!item.IsString()) {
      f.problem(field, "must be a string, one of " + event_type_list());
      return std::nullopt;
    }
    const std::string_view type(item.GetString(), item.GetStringLength());
    // The type sent is not named back: client bytes stay out of the answer.
    if (!is_event_type(type)) {
      f.problem(field, "is not an event type; must be one of " + event_type_list());
      return std::nullopt;
    }
    if (std::find(types.begin(), types.end(), type) == types.end()) types.emplace_back(type);
  }
  return types;
}

// description: 0 to 256 bytes of UTF-8; "" and null both mean none.
std::optional<std::optional<std::string>> read_description(const rapidjson::Value& d, Fields& f) {
  const auto it = d.FindMember("description");
  if (it == d.MemberEnd()) return std::nullopt;
  if (it->value.IsNull()) return std::optional<std::string>{};
  if (!it->value.IsString()) {
    f.problem("description", "must be a string of at most 256 bytes");
    return std::nullopt;
  }
  std::string s(it->value.GetString(), it->value.GetStringLength());
  if (s.size() > kMaxWebhookDescription) {
    f.problem("description", "must be at most 256 bytes");
    return std::nullopt;
  }
  if (!is_storable_utf8(s)) {
    f.problem("description", "must be valid UTF-8 without NUL characters");
    return std::nullopt;
  }
  if (s.empty()) return std::optional<std::string>{};
  return std::optional<std::string>{std::move(s)};
}

std::optional<std::string> read_url(const rapidjson::Value& d, Fields& f, bool required, bool sandbox) {
  const auto it = d.FindMember("url");
  if (it == d.MemberEnd() || it->value.IsNull()) {
    if (required) f.problem("url", "is required");
    return std::nullopt;
  }
  if (!it->value.IsString()) {
    f.problem("url", sandbox ? "must be an https:// or http:// URL" : "must be an https:// URL");
    return std::nullopt;
  }
  std::string url(it->value.GetString(), it->value.GetStringLength());
  if (auto problem = webhook_url_problem(url, sandbox)) {
    f.problem("url", *problem);
    return std::nullopt;
  }
  return url;
}

std::optional<std::string> read_status(const rapidjson::Value& d, Fields& f) {
  const auto it = d.FindMember("status");
  if (it == d.MemberEnd() || it->value.IsNull()) return std::nullopt;
  const std::string_view s =
      it->value.IsString() ? std::string_view(it->value.GetString(), it->value.GetStringLength()) : "";
  if (s != "enabled" && s != "disabled") {
    f.problem("status", "must be enabled or disabled");
    return std::nullopt;
  }
  return std::string(s);
}

}  // namespace

bool is_event_type(std::string_view type) {
  return std::find(kEventTypes.begin(), kEventTypes.end(), type) != kEventTypes.end();
}

std::string event_type_list() {
  std::string out;
  for (const auto t : kEventTypes) {
    if (!out.empty()) out += ", ";
    out += t;
  }
  return out;
}

std::optional<std::string> webhook_url_problem(std::string_view url, bool sandbox) {
  const std::string scheme_rule = sandbox ? "must be an https:// or http:// URL"
                                          : "must be an https:// URL (http:// is allowed in sandbox only)";
  if (url.empty()) return scheme_rule;
  if (url.size() > kMaxWebhookUrl) return "must be at most 2048 bytes";
  if (!is_visible_ascii(url)) return "must be printable ASCII without spaces; percent-encode anything else";
  const auto colon = url.find("://");
  if (colon == std::string_view::npos) return scheme_rule;
  const std::string_view scheme = url.substr(0, colon);
  const bool https = ascii_iequals(scheme, "https");
  if (!https && !(sandbox && ascii_iequals(scheme, "http"))) return scheme_rule;
  const std::string_view rest = url.substr(colon + 3);
  const auto authority_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, authority_end);
  const std::string_view tail = authority_end == std::string_view::npos ? "" : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) {
    return "must not contain user information (user:password@); authenticate with the signature";
  }
  if (tail.find('#') != std::string_view::npos) return "must not contain a fragment (#)";
  std::string_view host, port;
  bool ipv6 = false;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return "must name a host: an IPv6 address needs its closing ]";
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return "must name a host, then an optional :port";
      port = after.substr(1);
      if (port.empty()) return "must have a port from 1 to 65535 after the colon";
    }
    ipv6 = true;
  } else {
    const auto port_colon = authority.find(':');
    host = authority.substr(0, port_colon);
    if (port_colon != std::string_view::npos) {
      port = authority.substr(port_colon + 1);
      if (port.empty()) return "must have a port from 1 to 65535 after the colon";
    }
  }
  if (host.empty()) return "must name a host";
  if (!port.empty()) {
    if (!valid_port(port)) return "must have a port from 1 to 65535";
  }
  // An IP literal is judged by the rule every delivery's connection is
  // (ledger/address_policy.hpp), in every spelling libcurl and the resolver
  // read as one; a name is judged at each connection.
  if (ipv6) {
    const HostVerdict v = classify_host(authority.substr(0, host.size() + 2));
    if (v.kind != HostKind::ip) return "must name a valid IPv6 address in [ ]";
    if (!sandbox && !is_public(v.cls)) return not_public(v.cls);
  } else {
    if (!std::all_of(host.begin(), host.end(), is_host_char) || host.front() == '.' || host.front() == '-' ||
        host.find("..") != std::string_view::npos) {
      return "must name a host of letters, digits, '-' and '.', or an IP address";
    }
    std::string lower(host);
    std::transform(lower.begin(), lower.end(), lower.begin(), ascii_lower);
    if (lower.ends_with('.')) lower.pop_back();
    if (!sandbox && (lower == "localhost" || lower.ends_with(".localhost"))) {
      return "must name a public host (loopback and private addresses are allowed in sandbox only)";
    }
    const HostVerdict v = classify_host(host);
    if (!sandbox && v.kind == HostKind::ip && !is_public(v.cls)) return not_public(v.cls);
  }
  if (!valid_path_and_query(tail)) return "must be a valid URL; percent-encode special characters in its path";
  return std::nullopt;
}

std::string_view webhook_op_name(WebhookOp op) {
  switch (op) {
    case WebhookOp::create: return "webhook_create";
    case WebhookOp::update: return "webhook_update";
    case WebhookOp::rotate: return "webhook_rotate";
    case WebhookOp::remove: return "webhook_delete";
    case WebhookOp::replay: return "webhook_replay";
  }
  return "webhook_unknown";
}

std::variant<Error, WebhookBody> parse_webhook_body(WebhookOp op, std::string_view body,
                                                    std::string_view environment) {
  JsonDocument doc;
  if (auto refused = parse_partner_body(body, doc)) return *std::move(refused);
  const bool sandbox = environment == "sandbox";
  std::vector<FieldProblem> problems;
  Fields f(problems);
  WebhookBody out;
  if (auto ref = f.identifier(doc, "", "partnerRef")) out.partner_ref = std::move(*ref);
  switch (op) {
    case WebhookOp::create:
    case WebhookOp::update:
      out.url = read_url(doc, f, op == WebhookOp::create, sandbox);
      out.event_types = read_event_types(doc, f);
      out.description = read_description(doc, f);
      if (op == WebhookOp::update) out.status = read_status(doc, f);
      break;
    case WebhookOp::replay:
      out.since = f.timestamp(doc, "", "since");
      break;
    case WebhookOp::rotate:
    case WebhookOp::remove:
      break;
  }
  if (!problems.empty()) {
    return Error{ErrorCode::invalid_request, "The body does not match the endpoint schema.", std::move(problems)};
  }
  return out;
}

WriteCommand webhook_command(WebhookOp op, const WebhookBody& body, std::string_view endpoint_id,
                             std::string_view secret_sealed) {
  JsonText w(256 + (body.url ? body.url->size() : 0) + secret_sealed.size());
  w.StartObject();
  put(w, "partnerRef", body.partner_ref);
  put(w, "endpointId", endpoint_id);
  if (body.url) put(w, "url", *body.url);
  if (op == WebhookOp::create || body.event_types) {
    w.Key("eventTypes");
    w.StartArray();
    if (body.event_types) {
      for (const auto& t : *body.event_types) w.String(t.data(), static_cast<rapidjson::SizeType>(t.size()));
    }
    w.EndArray();
  }
  if (body.description) {
    w.Key("description");
    if (*body.description) {
      w.String((*body.description)->data(), static_cast<rapidjson::SizeType>((*body.description)->size()));
    } else {
      w.Null();
    }
  }
  if (body.status) put(w, "status", *body.status);
  if (body.since) put(w, "since", *body.since);
  if (op == WebhookOp::create || op == WebhookOp::rotate) put(w, "secretSealed", secret_sealed);
  w.EndObject();
  return WriteCommand{std::string(webhook_op_name(op)), w.str()};
}

}  // namespace mr::ledger
