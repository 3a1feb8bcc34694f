package com.memberrewards.partner;

/** The 202 answer to {@code POST /redemptions}: status "payout_pending", the payout not done yet. */
public record RedemptionAccepted(String redemptionId, String status, String externalMemberId, long pointsRedeemed,
    long cashValueMinor, String currency, Payout payout, Balances balances, boolean idempotentReplay) {
  static RedemptionAccepted from(JsonObject o) {
    return from(o, false);
  }

  static RedemptionAccepted from(JsonObject o, boolean replay) {
    JsonObject p = o.getObject("payout");
    return new RedemptionAccepted(o.getString("redemptionId"), o.getString("status"), o.getString("externalMemberId"),
        o.getLong("pointsRedeemed"), o.getLong("cashValueMinor"), o.getString("currency"),
        new Payout(p.getString("payoutId"), p.getString("status"), p.optString("failureReason")),
        Balances.from(o.getObject("balances")), replay);
  }
}
