#include "ledger/books_metrics.hpp"

#include <array>
#include <string_view>

namespace mr::ledger {
namespace {

struct Family {
  std::string_view name, help;
};

// The books' families, in the order they are written; every one a gauge.
constexpr std::array<Family, 10> kFamilies = {{
    {"mr_books_up", "Whether the books' gauges below could be read."},
    {"mr_payouts_open", "Payouts not finished, by status (exact; an index bounds it by the backlog)."},
    {"mr_payouts_oldest_open_age_seconds", "Age of the oldest payout in each open status (0: none)."},
    {"mr_payouts_estimated", "Payouts by status, estimated from planner statistics (last ANALYZE)."},
    {"mr_members_estimated", "Members by status, estimated from planner statistics (last ANALYZE)."},
    {"mr_ledger_entries_estimated", "Ledger entries, as PostgreSQL's statistics count live rows."},
    {"mr_club_points_pool", "Points left in each club's pool."},
    {"mr_club_cash_capacity_minor", "Cash capacity left per club."},
    {"mr_webhook_backlog", "Webhook deliveries due and not yet sent, every endpoint."},
    {"mr_webhook_backlog_oldest_seconds", "How long the longest-waiting due delivery is past its time (0: none)."},
}};

void sample(std::string& out, std::string_view family, std::string_view labels, const PodBooks& pod, bool label_pod,
            std::string_view value) {
  out.append(family);
  if (!labels.empty() || label_pod) {
    out += '{';
    out.append(labels);
    if (label_pod) {
      if (!labels.empty()) out += ',';
      out.append("pod=\"").append(pod.pod).append("\"");
    }
    out += '}';
  }
  out += ' ';
  out.append(value).append("\n");
}

}  // namespace

PodBooks books_of(std::string pod, const ResultView& rows) {
  PodBooks books{std::move(pod), true, {}};
  books.samples.reserve(static_cast<std::size_t>(rows.rows()));
  for (int i = 0; i < rows.rows(); ++i) {
    if (rows.is_null(i, 0) || rows.is_null(i, 2)) continue;  // no figure: no sample
    books.samples.push_back({std::string(rows.value(i, 0)), rows.is_null(i, 1) ? std::string() : std::string(rows.value(i, 1)),
                             std::string(rows.value(i, 2))});
  }
  return books;
}

std::string render_books(const std::vector<PodBooks>& pods) {
  const bool label_pod = pods.size() > 1;
  std::string out;
  out.reserve(1024 + 64 * pods.size());
  for (const Family& f : kFamilies) {
    out.append("# HELP ").append(f.name).append(" ").append(f.help).append("\n");
    out.append("# TYPE ").append(f.name).append(" gauge\n");
    for (const PodBooks& pod : pods) {
      if (f.name == "mr_books_up") {
        sample(out, f.name, "", pod, label_pod, pod.up ? "1" : "0");
        continue;
      }
      for (const MetricSample& s : pod.samples) {
        if (s.family == f.name) sample(out, f.name, s.labels, pod, label_pod, s.value);
      }
    }
  }
  return out;
}

}  // namespace mr::ledger
