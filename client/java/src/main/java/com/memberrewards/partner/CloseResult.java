package com.memberrewards.partner;

import java.time.Instant;

/** The answer to {@code POST /members/{id}/close}. */
public record CloseResult(String externalMemberId, String status, Instant closedAt, long pointsForfeited) {
  static CloseResult from(JsonObject o) {
    return new CloseResult(o.getString("externalMemberId"), o.getString("status"), o.getInstant("closedAt"),
        o.getLong("pointsForfeited"));
  }
}
