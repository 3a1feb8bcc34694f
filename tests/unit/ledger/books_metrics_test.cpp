// The books' gauges on /metrics (ledger/books_metrics): every family's HELP
// and TYPE once, every pod's samples under it; one pod's text has no pod
// label, several pods' samples each name their pod; a pod whose database
// did not answer is mr_books_up 0 and nothing else. The /metrics statement
// is mr_metrics_samples() (its figures: tests/sql/metrics_samples.sql).
#include <criterion/criterion.h>

#include <optional>
#include <string>
#include <vector>

#include "ledger/api.hpp"
#include "ledger/books_metrics.hpp"

namespace {

using namespace mr::ledger;

class Rows final : public ResultView {
 public:
  explicit Rows(std::vector<std::vector<std::optional<std::string>>> rows) : rows_(std::move(rows)) {}
  int rows() const override { return static_cast<int>(rows_.size()); }
  bool is_null(int row, int col) const override { return !rows_.at(row).at(static_cast<std::size_t>(col)); }
  std::string_view value(int row, int col) const override { return *rows_.at(row).at(static_cast<std::size_t>(col)); }

 private:
  std::vector<std::vector<std::optional<std::string>>> rows_;
};

const Rows kSome({{"mr_payouts_open", "status=\"created\"", "3"},
                  {"mr_club_points_pool", "partner_ref=\"club-a\"", "1000"},
                  {"mr_webhook_backlog", "", "12"},
                  {"mr_webhook_backlog_oldest_seconds", "", "61.234"},
                  {"mr_from_a_newer_schema", "", "1"},
                  {"mr_ledger_entries_estimated", std::nullopt, "40"},
                  {"mr_members_estimated", "status=\"active\"", std::nullopt}});

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

Test(books_metrics, the_statement_is_the_samples_and_one_pod_has_no_pod_label) {
  Request r;
  r.method = "GET";
  r.path = "/metrics";
  r.request_id = "rid";
  Prepared p = prepare_ops(r);
  auto* pending = std::get_if<std::unique_ptr<Pending>>(&p);
  cr_assert(pending != nullptr);
  cr_expect((*pending)->query().sql.find("mr_metrics_samples()") != std::string::npos, "%s",
            (*pending)->query().sql.c_str());
  const Response response = (*pending)->render(kSome, "rid");
  cr_assert_eq(response.status, 200);
  const std::string& t = response.body;
  cr_expect(t.starts_with("# HELP mr_books_up Whether the books' gauges below could be read.\n"
                          "# TYPE mr_books_up gauge\nmr_books_up 1\n"), "%s", t.c_str());
  cr_expect(t.find("# TYPE mr_payouts_open gauge\nmr_payouts_open{status=\"created\"} 3\n") != std::string::npos);
  cr_expect(t.find("\nmr_club_points_pool{partner_ref=\"club-a\"} 1000\n") != std::string::npos, "%s", t.c_str());
  cr_expect(t.find("# HELP mr_webhook_backlog Webhook deliveries due and not yet sent, every endpoint.\n"
                   "# TYPE mr_webhook_backlog gauge\nmr_webhook_backlog 12\n") != std::string::npos, "%s", t.c_str());
  cr_expect(t.find("\nmr_webhook_backlog_oldest_seconds 61.234\n") != std::string::npos);
  cr_expect(t.find("\nmr_ledger_entries_estimated 40\n") != std::string::npos, "a NULL label is none");
  // A sample without a figure, and a family the modules do not know, are left out.
  cr_expect(t.find("mr_members_estimated{") == std::string::npos, "%s", t.c_str());
  cr_expect(t.find("mr_from_a_newer_schema") == std::string::npos);
  cr_expect(t.find("pod=") == std::string::npos);
  cr_expect_eq(count(t, "# TYPE "), count(t, "# HELP "));
  cr_expect_eq(count(t, "# TYPE mr_club_points_pool "), 1u);
}

Test(books_metrics, every_pods_samples_under_one_family_each_with_its_pod) {
  std::vector<PodBooks> pods{books_of("home", kSome), books_of("b", Rows({{"mr_payouts_open", "status=\"created\"", "5"},
                                                                            {"mr_webhook_backlog", "", "0"}})),
                             PodBooks{"c", false, {}}};
  const std::string t = render_books(pods);
  cr_expect(t.find("# TYPE mr_books_up gauge\nmr_books_up{pod=\"home\"} 1\nmr_books_up{pod=\"b\"} 1\n"
                   "mr_books_up{pod=\"c\"} 0\n") != std::string::npos, "%s", t.c_str());
  cr_expect(t.find("# TYPE mr_payouts_open gauge\nmr_payouts_open{status=\"created\",pod=\"home\"} 3\n"
                   "mr_payouts_open{status=\"created\",pod=\"b\"} 5\n") != std::string::npos, "%s", t.c_str());
  cr_expect(t.find("mr_webhook_backlog{pod=\"home\"} 12\nmr_webhook_backlog{pod=\"b\"} 0\n") != std::string::npos,
            "%s", t.c_str());
  cr_expect(t.find("pod=\"c\"} 0\n") != std::string::npos);
  cr_expect_eq(count(t, "pod=\"c\""), 1u, "a pod that did not answer has only mr_books_up: %s", t.c_str());
  cr_expect_eq(count(t, "# TYPE mr_payouts_open "), 1u);
  cr_expect_eq(count(t, "# HELP "), 10u);
  // No pod answered (none configured, or every database down): still the
  // families, and mr_books_up 0.
  const std::string none = render_books({PodBooks{"home", false, {}}});
  cr_expect(none.find("\nmr_books_up 0\n") != std::string::npos, "%s", none.c_str());
}
