package com.memberrewards.partner;

/** A member's available and reserved points after a change. */
public record Balances(long pointsBalance, long reservedPointsBalance) {
  static Balances from(JsonObject o) {
    return new Balances(o.getLong("pointsBalance"), o.getLong("reservedPointsBalance"));
  }
}
