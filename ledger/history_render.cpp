#include "ledger/history_render.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "ledger/errors.hpp"
#include "ledger/json_text.hpp"
#include "ledger/result_render.hpp"
#include "ledger/text_rules.hpp"

namespace mr::ledger {
namespace {

// The columns of mr_points_rows and mr_points_rows_filtered.
enum PointsCol {
  p_created_ms, p_entry_id, p_entry_type, p_description, p_available, p_reserved, p_cash, p_currency,
  p_merchant_name, p_merchant_id, p_external_tx_id, p_club_id, p_group_ref
};
// The columns of the transactions statement (ledger/statements.hpp).
enum TransactionsCol {
  t_created_ms, t_reversed, t_external_id, t_event_id, t_merchant_id, t_merchant_name, t_amount, t_currency,
  t_points_delta, t_occurred_epoch, t_settled_epoch
};

constexpr std::int64_t kMsPerDay = 86'400'000;
// The row reads (mr_points_rows, mr_transactions_rows) bound each source at 101 rows: a page of at most 100 (the
// API's cap, ledger/read_requests.cpp).
constexpr int kMaxLimit = 100;

// Howard Hinnant's civil_from_days: the proleptic Gregorian date (as
// PostgreSQL counts) of a day number since 1970-01-01.
void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

char* two(char* p, unsigned v) {
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
  return p + 2;
}

std::optional<std::int64_t> int_of(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

class Page {
 public:
  Page(const ResultView& rows, int limit) : rows_(rows), limit_(limit) {}

  // The rows to render, newest first, and nextBefore; false when the rows
  // are not what the statement returns.
  bool read() {
    const int n = rows_.rows();
    if (n == 1 && rows_.is_null(0, 0)) return true;  // the member's page is empty
    ms_.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      if (rows_.is_null(r, 0)) return false;
      const auto ms = int_of(rows_.value(r, 0));
      if (!ms) return false;
      ms_.push_back(*ms);
    }
    order_.resize(ms_.size());
    std::iota(order_.begin(), order_.end(), 0);
    // The statement reads newest first and sorts nothing after its reads:
    // a plan that ever delivered them otherwise is put in order here.
    const auto newer = [&](int a, int b) {
      return ms_[static_cast<std::size_t>(a)] > ms_[static_cast<std::size_t>(b)];
    };
    if (!std::is_sorted(order_.begin(), order_.end(), newer)) std::stable_sort(order_.begin(), order_.end(), newer);
    if (n > limit_) {
      next_before_ = ms_[static_cast<std::size_t>(order_[static_cast<std::size_t>(limit_ - 1)])];
      order_.resize(static_cast<std::size_t>(limit_));
    }
    return true;
  }
  const std::vector<int>& rows() const { return order_; }
  std::int64_t ms(int row) const { return ms_[static_cast<std::size_t>(row)]; }
  std::optional<std::int64_t> next_before() const { return next_before_; }
  std::size_t size_hint() const { return 64 + order_.size() * 400; }

 private:
  const ResultView& rows_;
  int limit_;
  std::vector<std::int64_t> ms_;
  std::vector<int> order_;
  std::optional<std::int64_t> next_before_;
};

// RapidJSON's writer with a shortcut for text that needs no escaping
// (is_json_plain: every member name, and most values): copied as it is
// between its quotes, where RapidJSON's String looks at a byte at a time.
// Under perf, member names and values written through String were over a
// third of a page's work in the worker. Anything else goes through String.
class PageWriter final : public JsonText {
 public:
  using JsonText::JsonText;
  // A member name of this file's own: plain by construction.
  void name(std::string_view key) { copy(key); }
  void text(std::string_view s) {
    if (is_json_plain(s)) {
      copy(s);
    } else {
      String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    }
  }
  // A bigint as PostgreSQL writes it ([-]digits, no leading zero): the
  // same text RapidJSON writes for that number, copied; false otherwise.
  bool integer(std::string_view t) {
    const std::string_view digits = !t.empty() && t.front() == '-' ? t.substr(1) : t;
    const bool is_digits =
        !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    // No leading zero, no "-0", at most 19 digits.
    if (!is_digits || digits.size() > 19 || (digits.front() == '0' && t.size() > 1)) return false;
    return RawValue(t.data(), t.size(), rapidjson::kNumberType);
  }

 private:
  void copy(std::string_view s) {
    Prefix(rapidjson::kStringType);
    char* p = os_->Push(s.size() + 2);
    p[0] = '"';
    std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    EndValue(true);
  }
};

// Writes one row's columns as jsonb_build_object did: NULL is null.
class Fields {
 public:
  Fields(PageWriter& w, const ResultView& rows, int row) : w_(w), rows_(rows), row_(row) {}

  bool null(int col) const { return rows_.is_null(row_, col); }
  std::string_view text(int col) const { return rows_.value(row_, col); }

  void str(std::string_view key, int col) {
    w_.name(key);
    if (null(col)) {
      w_.Null();
    } else {
      w_.text(text(col));
    }
  }
  void str(std::string_view key, std::string_view v) {
    w_.name(key);
    w_.text(v);
  }
  void number(std::string_view key, int col) {
    w_.name(key);
    if (null(col)) {
      w_.Null();
    } else if (!w_.integer(text(col))) {
      ok_ = false;
      w_.Null();
    }
  }
  void number_value(std::string_view key, std::int64_t v) {
    w_.name(key);
    w_.Int64(v);
  }
  void null_value(std::string_view key) {
    w_.name(key);
    w_.Null();
  }
  // A time from its milliseconds.
  void ms_time(std::string_view key, std::int64_t ms) {
    char buf[40];
    const auto n = write_ms_text(ms, buf);
    w_.name(key);
    w_.name({buf, n});  // digits, '-', ':', '.', 'T', 'Z': plain
  }
  // occurredAt / settledAt, from extract(epoch FROM ...): mr_ts_text gave
  // null for NULL and for an infinite time.
  void epoch_time(std::string_view key, int col) {
    if (null(col) || text(col) == "Infinity" || text(col) == "-Infinity") return null_value(key);
    const auto us = epoch_text_us(text(col));
    if (!us) {
      ok_ = false;
      return null_value(key);
    }
    // Floor division: to_char's MS is the fraction of the second, which
    // counts up from the second before a time earlier than 1970.
    ms_time(key, *us / 1000 - (*us % 1000 < 0 ? 1 : 0));
  }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }

 private:
  PageWriter& w_;
  const ResultView& rows_;
  int row_;
  bool ok_ = true;
};

Response internal(std::string_view request_id) {
  return error_response(ErrorCode::internal_error, "", request_id);
}

template <class WriteEntry>
Response render_page(const ResultView& rows, int limit, std::string_view request_id, WriteEntry&& entry) {
  if (rows.rows() == 0) {
    const auto code = ErrorCode::cardholder_not_found;
    return error_response(code, "", request_id);
  }
  if (limit < 1 || limit > kMaxLimit) return internal(request_id);
  Page page(rows, limit);
  if (!page.read()) return internal(request_id);
  PageWriter w(page.size_hint());
  bool ok = true;
  w.StartObject();
  w.Key("ok");
  w.Bool(true);
  w.Key("data");
  w.StartObject();
  w.Key("entries");
  w.StartArray();
  for (const int r : page.rows()) {
    Fields f(w, rows, r);
    w.StartObject();
    entry(f, page.ms(r));
    w.EndObject();
    ok = ok && f.ok();
  }
  w.EndArray();
  w.Key("nextBefore");
  if (const auto next = page.next_before()) {
    w.Int64(*next);
  } else {
    w.Null();
  }
  w.EndObject();
  w.EndObject();
  if (!ok || !w.IsComplete()) return internal(request_id);
  return Response{200, w.str(), false};
}

}  // namespace

std::size_t write_ms_text(std::int64_t ms, char (&out)[40]) {
  std::int64_t days = ms / kMsPerDay, rem = ms % kMsPerDay;
  if (rem < 0) {
    days -= 1;
    rem += kMsPerDay;
  }
  std::int64_t y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(days, y, m, d);
  // to_char's YYYY: at least four digits; a year before 1 is written as
  // its number BC (year 0 is 1 BC), without a sign.
  const std::int64_t year = y <= 0 ? 1 - y : y;
  char* p = out;
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, year);
  for (auto len = end - digits; len < 4; ++len) *p++ = '0';
  p = std::copy(digits, end, p);
  const auto day_ms = static_cast<unsigned>(rem);
  *p++ = '-';
  p = two(p, m);
  *p++ = '-';
  p = two(p, d);
  *p++ = 'T';
  p = two(p, day_ms / 3'600'000);
  *p++ = ':';
  p = two(p, day_ms / 60'000 % 60);
  *p++ = ':';
  p = two(p, day_ms / 1000 % 60);
  *p++ = '.';
  const unsigned frac = day_ms % 1000;
  *p++ = static_cast<char>('0' + frac / 100);
  p = two(p, frac % 100);
  *p++ = 'Z';
  return static_cast<std::size_t>(p - out);
}

std::optional<std::int64_t> epoch_text_us(std::string_view t) {
  const bool negative = !t.empty() && t.front() == '-';
  if (negative) t.remove_prefix(1);
  const auto dot = t.find('.');
  const std::string_view whole = t.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view{} : t.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && (frac.empty() || frac.size() > 6))) return std::nullopt;
  std::int64_t secs = 0;
  const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), secs);
  if (ec != std::errc() || end != whole.data() + whole.size() || secs < 0) return std::nullopt;
  std::int64_t us = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    const char c = i < frac.size() ? frac[i] : '0';
    if (c < '0' || c > '9') return std::nullopt;
    us = us * 10 + (c - '0');
  }
  std::int64_t total = 0;
  if (__builtin_mul_overflow(secs, std::int64_t{1'000'000}, &total) || __builtin_add_overflow(total, us, &total)) {
    return std::nullopt;
  }
  return negative ? -total : total;
}

Response render_points_page(const ResultView& rows, int limit, std::string_view request_id) {
  std::string group;  // ledgerGroupId, reused from row to row
  return render_page(rows, limit, request_id, [&](Fields& f, std::int64_t ms) {
    f.str("id", p_entry_id);
    f.str("currency", p_currency);
    f.ms_time("createdAt", ms);
    f.str("entryType", p_entry_type);
    f.str("merchantId", p_merchant_id);
    f.str("description", p_description);
    // delta_available + delta_reserved; SQL's NULL + x is NULL, and an
    // overflow raised there.
    if (f.null(p_available) || f.null(p_reserved)) {
      f.null_value("pointsDelta");
    } else {
      const auto a = int_of(f.text(p_available)), r = int_of(f.text(p_reserved));
      std::int64_t sum = 0;
      if (!a || !r || __builtin_add_overflow(*a, *r, &sum)) f.fail();
      f.number_value("pointsDelta", sum);
    }
    f.str("merchantName", p_merchant_name);
    if (f.null(p_club_id) || f.null(p_group_ref)) {
      f.null_value("ledgerGroupId");  // club_id || ':' || NULL
    } else {
      group.assign(f.text(p_club_id)).append(1, ':').append(f.text(p_group_ref));
      f.str("ledgerGroupId", group);
    }
    f.number("cashValueMinor", p_cash);
    f.number("pointsDeltaReserved", p_reserved);
    f.number("pointsDeltaAvailable", p_available);
    f.str("externalTransactionId", p_external_tx_id);
  });
}

Response render_transactions_page(const ResultView& rows, int limit, std::string_view request_id) {
  return render_page(rows, limit, request_id, [&](Fields& f, std::int64_t ms) {
    if (f.null(t_reversed) || (f.text(t_reversed) != "t" && f.text(t_reversed) != "f")) f.fail();
    const bool reversed = f.text(t_reversed) == "t";
    f.str("type", reversed ? std::string_view("reversed") : std::string_view("settled"));
    f.str("eventId", t_event_id);
    f.str("currency", t_currency);
    f.ms_time("createdAt", ms);
    if (!reversed) f.epoch_time("settledAt", t_settled_epoch);
    f.str("merchantId", t_merchant_id);
    f.epoch_time("occurredAt", t_occurred_epoch);
    f.number("amountMinor", t_amount);
    f.number("pointsDelta", t_points_delta);
    f.str("merchantName", t_merchant_name);
    f.str("externalTransactionId", t_external_id);
  });
}

}  // namespace mr::ledger
