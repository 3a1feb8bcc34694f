package com.memberrewards.partner;

/** The answer to {@code POST /transactions/reversed}. */
public record ReversedResult(String eventId, String status, String externalTransactionId, long pointsReversed,
    Balances balances, Long availablePointsPool, String ledgerGroupId) {
  static ReversedResult from(JsonObject o) {
    JsonObject partner = o.optObject("partner");
    return new ReversedResult(o.getString("eventId"), o.getString("status"), o.getString("externalTransactionId"),
        o.getLong("pointsReversed"), Balances.from(o.getObject("balances")),
        partner == null ? null : partner.optLong("availablePointsPool"), o.optString("ledgerGroupId"));
  }
}
