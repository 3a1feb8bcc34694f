package com.memberrewards.partner;

/** The answer to {@code POST /transactions/reversed}. */
public record ReversedResult(String eventId, String status, String externalTransactionId, long pointsReversed,
    Balances balances, Long availablePointsPool, String ledgerGroupId, boolean idempotentReplay) {
  static ReversedResult from(JsonObject o) {
    return from(o, false);
  }

  static ReversedResult from(JsonObject o, boolean replay) {
    JsonObject partner = o.optObject("partner");
    return new ReversedResult(o.getString("eventId"), o.getString("status"), o.getString("externalTransactionId"),
        o.getLong("pointsReversed"), Balances.from(o.getObject("balances")),
        partner == null ? null : partner.optLong("availablePointsPool"), o.optString("ledgerGroupId"), replay);
  }
}
