// The books' gauges on /metrics (contract section 8), from every pod: each
// pod's database gives its samples (mr_metrics_samples) and
// this writes each family's HELP and TYPE once, then every pod's samples
// under it. With more than one pod each sample carries pod="<name>"; with
// one, no label: a single-pod node's text names no pod.
#pragma once

#include <string>
#include <vector>

#include "ledger/api.hpp"

namespace mr::ledger {

struct MetricSample {
  std::string family;
  std::string labels;  // inside the braces, already escaped by the database ("" for none)
  std::string value;
};

struct PodBooks {
  std::string pod;
  bool up = false;  // its database answered: the samples below are its
  std::vector<MetricSample> samples;
};

// The samples in mr_metrics_samples' columns (family, labels, value).
PodBooks books_of(std::string pod, const ResultView& rows);

// Prometheus text 0.0.4 for every family these modules know, in a fixed
// order (a family the database has and the modules do not is left out),
// mr_books_up first: 1 for each pod that answered, 0 for each that did not.
std::string render_books(const std::vector<PodBooks>& pods);

}  // namespace mr::ledger
