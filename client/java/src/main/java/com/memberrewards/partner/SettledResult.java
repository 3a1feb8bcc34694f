package com.memberrewards.partner;

/** The answer to {@code POST /transactions/settled}; availablePointsPool and ledgerGroupId may be null. */
public record SettledResult(String eventId, String status, String externalTransactionId, long pointsAwarded,
    Balances balances, Long availablePointsPool, String ledgerGroupId, boolean idempotentReplay) {
  static SettledResult from(JsonObject o) {
    return from(o, false);
  }

  static SettledResult from(JsonObject o, boolean replay) {
    JsonObject partner = o.optObject("partner");
    return new SettledResult(o.getString("eventId"), o.getString("status"), o.getString("externalTransactionId"),
        o.getLong("pointsAwarded"), Balances.from(o.getObject("balances")),
        partner == null ? null : partner.optLong("availablePointsPool"), o.optString("ledgerGroupId"), replay);
  }
}
