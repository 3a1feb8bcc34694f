package com.memberrewards.partner;

/** {@code GET /members/{id}/balance}. memberStatus is "active" or "closed"; currency may be null. */
public record Balance(String externalMemberId, String memberStatus, long pointsBalance, long reservedPointsBalance,
    long lifetimePointsEarned, long lifetimePointsRedeemed, String currency, long cashValueMinor) {
  static Balance from(JsonObject o) {
    return new Balance(o.getString("externalMemberId"), o.getString("memberStatus"), o.getLong("pointsBalance"),
        o.getLong("reservedPointsBalance"), o.getLong("lifetimePointsEarned"), o.getLong("lifetimePointsRedeemed"),
        o.optString("currency"), o.getLong("cashValueMinor"));
  }
}
