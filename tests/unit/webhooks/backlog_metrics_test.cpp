// The ops listener's /metrics statement carries the webhook backlog beside
// the books' text (ledger/statements.hpp, metrics); the rendering appends
// its two gauges after the books'.
#include <criterion/criterion.h>

#include <optional>
#include <string>
#include <vector>

#include "ledger/api.hpp"

namespace {

using namespace mr::ledger;

class Columns final : public ResultView {
 public:
  explicit Columns(std::vector<std::optional<std::string>> row) : row_(std::move(row)) {}
  int rows() const override { return 1; }
  bool is_null(int, int col) const override { return !row_.at(static_cast<std::size_t>(col)); }
  std::string_view value(int, int col) const override { return *row_.at(static_cast<std::size_t>(col)); }

 private:
  std::vector<std::optional<std::string>> row_;
};

Response metrics_of(std::vector<std::optional<std::string>> row) {
  Request r;
  r.method = "GET";
  r.path = "/metrics";
  r.request_id = "rid";
  Prepared p = prepare_ops(r);
  auto* pending = std::get_if<std::unique_ptr<Pending>>(&p);
  cr_assert(pending != nullptr);
  cr_assert((*pending)->query().sql.find("mr_webhook_backlog()") != std::string::npos, "%s",
            (*pending)->query().sql.c_str());
  return (*pending)->render(Columns(std::move(row)), "rid");
}

}  // namespace

Test(backlog_metrics, after_the_books_gauges) {
  const Response r = metrics_of({"mr_books_up 1\n", "12", "61234"});
  cr_assert_eq(r.status, 200);
  cr_expect_eq(r.body, std::string("mr_books_up 1\n"
                                   "# HELP mr_webhook_backlog Webhook deliveries due and not yet sent, every endpoint.\n"
                                   "# TYPE mr_webhook_backlog gauge\n"
                                   "mr_webhook_backlog 12\n"
                                   "# HELP mr_webhook_backlog_oldest_seconds How long the longest-waiting due "
                                   "delivery is past its time (0: none).\n"
                                   "# TYPE mr_webhook_backlog_oldest_seconds gauge\n"
                                   "mr_webhook_backlog_oldest_seconds 61.234\n"));
}

Test(backlog_metrics, none_due_and_odd_values) {
  std::string body = metrics_of({"x\n", "0", "0"}).body;
  cr_expect(body.find("\nmr_webhook_backlog 0\n") != std::string::npos, "%s", body.c_str());
  cr_expect(body.find("\nmr_webhook_backlog_oldest_seconds 0.000\n") != std::string::npos, "%s", body.c_str());
  // A clock step can make the age negative for a moment: shown as 0.
  body = metrics_of({"x\n", std::nullopt, "-5"}).body;
  cr_expect(body.find("\nmr_webhook_backlog 0\n") != std::string::npos, "%s", body.c_str());
  cr_expect(body.find("\nmr_webhook_backlog_oldest_seconds 0.000\n") != std::string::npos, "%s", body.c_str());
  body = metrics_of({"x\n", "3", "7"}).body;
  cr_expect(body.find("\nmr_webhook_backlog_oldest_seconds 0.007\n") != std::string::npos, "%s", body.c_str());
}
