package com.memberrewards.partner;

import java.util.List;

/** {@code GET /club}: the calling key's club. A setting not made yet (or an environment the deployment does not name) is null. */
public record Club(String partnerRef, String name, String environment, Long earnRateBasisPoints,
    Long redemptionRateMinorPerPoint, String payoutCurrency, List<String> supportedCurrencies,
    Long minimumRedemptionPoints, Long availablePointsPool) {
  static Club from(JsonObject o) {
    return new Club(o.getString("partnerRef"), o.getString("name"), o.optString("environment"),
        o.optLong("earnRateBasisPoints"), o.optLong("redemptionRateMinorPerPoint"), o.optString("payoutCurrency"),
        o.optStrings("supportedCurrencies"), o.optLong("minimumRedemptionPoints"), o.optLong("availablePointsPool"));
  }
}
