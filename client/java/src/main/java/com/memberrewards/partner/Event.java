package com.memberrewards.partner;

import java.time.Instant;

/**
 * An event, as {@code GET /events} lists it and a webhook delivers it. {@code data}
 * depends on {@code type} (see the API reference); every data names the member
 * and its {@code memberSequence}.
 */
public record Event(String id, String type, Instant createdAt, String environment, JsonObject data) {
  public static final String MEMBER_CREATED = "member.created";
  public static final String MEMBER_UPDATED = "member.updated";
  public static final String MEMBER_CLOSED = "member.closed";
  public static final String TRANSACTION_SETTLED = "transaction.settled";
  public static final String TRANSACTION_REVERSED = "transaction.reversed";
  public static final String REDEMPTION_CREATED = "redemption.created";
  public static final String REDEMPTION_COMPLETED = "redemption.completed";
  public static final String REDEMPTION_FAILED = "redemption.failed";
  public static final String POINTS_ADJUSTED = "points.adjusted";

  public String externalMemberId() {
    return data.optString("externalMemberId");
  }

  /** 1, 2, 3, ... per member in commit order, without gaps. */
  public long memberSequence() {
    return data.getLong("memberSequence");
  }

  /** For redemption.* events: the redemption as {@code GET /redemptions/{id}} shows it. */
  public Redemption redemption() {
    return Redemption.from(data);
  }

  static Event from(JsonObject o) {
    return new Event(o.getString("id"), o.getString("type"), o.getInstant("createdAt"), o.optString("environment"),
        o.getObject("data"));
  }
}
