// W3C traceparent validation: what is kept, what is ignored.
#include <criterion/criterion.h>

#include <initializer_list>
#include <string>

#include "modules/common/traceparent.hpp"

using mr::valid_traceparent;

namespace {
const std::string kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
}

Test(traceparent, version_00_kept_as_is) {
  auto v = valid_traceparent(kValid);
  cr_assert(v.has_value());
  cr_expect_eq(std::string(*v), kValid);
  cr_expect(valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").has_value());
}

Test(traceparent, malformed_ignored) {
  for (const std::string& bad : std::initializer_list<std::string>{
           std::string(""),
           kValid.substr(0, 54),                                        // short
           kValid + "-",                                                // version 00 is exactly 55
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   // upper case
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",   // not hex
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // separators
           "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // version ff
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   // zero parent id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",  // trailing space
       }) {
    cr_expect(!valid_traceparent(bad).has_value(), "accepted [%s]", bad.c_str());
  }
}

Test(traceparent, later_versions_keep_the_known_fields) {
  const std::string later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  cr_expect_eq(std::string(*valid_traceparent(later)), later);
  const std::string longer = later + "-what-comes-next";
  auto v = valid_traceparent(longer);
  cr_assert(v.has_value());
  cr_expect_eq(std::string(*v), later);
  cr_expect(!valid_traceparent(later + "x").has_value(), "after the flags: a dash or the end");
}
