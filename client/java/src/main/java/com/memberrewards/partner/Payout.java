package com.memberrewards.partner;

/** A redemption's payout: status "created", "submitted", "succeeded" or "failed"; failureReason may be null. */
public record Payout(String payoutId, String status, String failureReason) {
  static Payout from(JsonObject o) {
    return new Payout(o.getString("payoutId"), o.getString("status"), o.optString("failureReason"));
  }
}
