package com.memberrewards.partner;

import java.time.Instant;

/** {@code GET /redemptions/{id}}: status "payout_pending", "completed" or "failed". */
public record Redemption(String redemptionId, String requestId, String status, String externalMemberId,
    long pointsRedeemed, long cashValueMinor, String currency, Payout payout, Instant createdAt, Instant updatedAt,
    boolean idempotentReplay) {
  static Redemption from(JsonObject o) {
    return from(o, false);
  }

  static Redemption from(JsonObject o, boolean replay) {
    return new Redemption(o.getString("redemptionId"), o.getString("requestId"), o.getString("status"),
        o.getString("externalMemberId"), o.getLong("pointsRedeemed"), o.getLong("cashValueMinor"),
        o.getString("currency"), Payout.from(o.getObject("payout")), o.getInstant("createdAt"),
        o.getInstant("updatedAt"), replay);
  }
}
