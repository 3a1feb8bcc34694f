// What a statement's SQLSTATE is answered with when its route has none of
// its own (mr::code_for_sqlstate, ledger/errors.hpp): a moving club's write
// is unavailable for now, anything else failed.
#include <criterion/criterion.h>

#include <string_view>

#include "ledger/errors.hpp"
#include "ledger/pods.hpp"

Test(sqlstate_answer, a_moving_clubs_write_is_service_unavailable) {
  cr_expect(mr::code_for_sqlstate(mr::kClubMovingSqlstate) == mr::ErrorCode::service_unavailable);
  cr_expect(mr::code_for_sqlstate("MR503") == mr::ErrorCode::service_unavailable,
            "mr_refuse_moving raises MR503");
  // 503: the status answers.cpp sends with Retry-After, which clients retry.
  cr_expect_eq(mr::http_status(mr::code_for_sqlstate(mr::kClubMovingSqlstate)), 503);
}

Test(sqlstate_answer, every_other_failure_is_internal_error) {
  for (const std::string_view sqlstate : {"23505", "40001", "40P01", "57014", "P0001", "P0002", "42P01", "XX000",
                                          "", "MR50", "MR5030", "mr503", "MR504"}) {
    cr_expect(mr::code_for_sqlstate(sqlstate) == mr::ErrorCode::internal_error, "%.*s",
              static_cast<int>(sqlstate.size()), sqlstate.data());
  }
  cr_expect_eq(mr::http_status(mr::code_for_sqlstate("23505")), 500);
}
