package com.memberrewards.partner;

import java.time.Instant;

/** The answer to {@code POST /members/{id}/close}. */
public record CloseResult(String externalMemberId, String status, Instant closedAt, long pointsForfeited,
    boolean idempotentReplay) {
  static CloseResult from(JsonObject o) {
    return from(o, false);
  }

  static CloseResult from(JsonObject o, boolean replay) {
    return new CloseResult(o.getString("externalMemberId"), o.getString("status"), o.getInstant("closedAt"),
        o.getLong("pointsForfeited"), replay);
  }
}
