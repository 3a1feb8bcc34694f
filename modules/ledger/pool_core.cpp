#include "modules/ledger/pool_core.hpp"

namespace mr::pg {

std::uint64_t SettleArrivals::arriving() {
  const std::uint64_t ticket = next_++;
  arriving_.insert(ticket);
  return ticket;
}

bool SettleArrivals::arrived(std::uint64_t ticket) {
  arriving_.erase(ticket);
  return awaited_ != 0 && (arriving_.empty() || *arriving_.begin() > awaited_);
}

bool SettleArrivals::wait(std::size_t queued) {
  if (arriving_.empty()) return false;
  if (queued >= kBatchLimit) return false;
  if (awaited_ == 0) awaited_ = *arriving_.rbegin();
  return *arriving_.begin() <= awaited_;
}

bool lost_sqlstate(std::string_view sqlstate) {
  return sqlstate.empty() || sqlstate.starts_with("08") || sqlstate.starts_with("57P");
}

bool retryable(std::string_view sqlstate) { return sqlstate == "40001" || sqlstate == "40P01"; }

Next next_after(const Finished& f) {
  using What = Finished::What;
  using Status = Finished::Status;
  const bool ok = f.status == Status::ok;
  if (f.status == Status::aborted && f.what == What::read) return Next::rerun;
  if (f.what == What::naming) {
    if (ok || f.status == Status::aborted) return Next::done;
    return f.lost ? Next::broken : Next::warn;
  }
  if (f.what == What::prepare) return !ok && f.lost ? Next::broken : Next::done;
  if (!ok && f.lost) return Next::broken;
  if (f.what == What::batch) {
    if (!ok) return Next::one_by_one;
    return f.rows == f.jobs ? Next::answer : Next::rows_mismatch;
  }
  if (!ok && f.retryable && f.retries_left > 0) return Next::retry;
  return Next::answer;
}

}  // namespace mr::pg
