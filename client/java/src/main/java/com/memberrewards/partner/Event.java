package com.memberrewards.partner;

import java.time.Instant;

/**
 * An event, as {@code GET /events} lists it and a webhook delivers it. {@code data}
 * is typed by {@code type} ({@link EventData}); every data names the member and its
 * {@code memberSequence}.
 */
public record Event(String id, String type, Instant createdAt, String environment, EventData data) {
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
    return data.externalMemberId();
  }

  /** 1, 2, 3, ... per member in commit order, without gaps. */
  public long memberSequence() {
    return data.memberSequence();
  }

  /**
   * For redemption.* events: the redemption as {@code GET /redemptions/{id}} shows it.
   *
   * @throws IllegalStateException for any other type
   */
  public Redemption redemption() {
    if (data instanceof EventData.RedemptionChanged r) return r.redemption();
    throw new IllegalStateException(type + " carries no redemption");
  }

  static Event from(JsonObject o) {
    String type = o.getString("type");
    return new Event(o.getString("id"), type, o.getInstant("createdAt"), o.optString("environment"),
        data(type, o.getObject("data")));
  }

  private static EventData data(String type, JsonObject d) {
    String member = d.getString("externalMemberId");
    long sequence = d.getLong("memberSequence");
    switch (type) {
      case MEMBER_CREATED:
      case MEMBER_UPDATED:
        return new EventData.MemberChanged(member, sequence, d.getString("status"), d.getBoolean("payoutReady"));
      case MEMBER_CLOSED:
        return new EventData.MemberClosed(member, sequence, d.getInstant("closedAt"), d.getLong("pointsForfeited"),
            Balances.from(d.getObject("balances")));
      case TRANSACTION_SETTLED:
        return new EventData.TransactionSettled(member, sequence, d.getString("eventId"),
            d.getString("externalTransactionId"), d.getLong("pointsAwarded"), Balances.from(d.getObject("balances")),
            d.optString("ledgerGroupId"));
      case TRANSACTION_REVERSED:
        return new EventData.TransactionReversed(member, sequence, d.getString("eventId"),
            d.getString("externalTransactionId"), d.getLong("pointsReversed"), Balances.from(d.getObject("balances")),
            d.optString("ledgerGroupId"));
      case REDEMPTION_CREATED:
      case REDEMPTION_COMPLETED:
      case REDEMPTION_FAILED:
        return new EventData.RedemptionChanged(member, sequence, Redemption.from(d),
            Balances.from(d.getObject("balances")));
      case POINTS_ADJUSTED:
        return new EventData.PointsAdjusted(member, sequence, d.getLong("pointsDelta"), d.optString("reason"),
            Balances.from(d.getObject("balances")));
      default:
        return new EventData.Other(member, sequence, d);
    }
  }
}
