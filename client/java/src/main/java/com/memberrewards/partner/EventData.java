package com.memberrewards.partner;

import java.time.Instant;

/**
 * The typed {@code data} of an {@link Event}: one record per event type (the API
 * reference, "Events"). Every one names the member and its {@code memberSequence};
 * take the rest with a type pattern:
 * {@code if (event.data() instanceof EventData.RedemptionChanged r) r.redemption().payout()}.
 * A type newer than this SDK comes as {@link Other}, its fields as sent.
 */
public sealed interface EventData {
  String externalMemberId();

  /** 1, 2, 3, ... per member in commit order, without gaps. */
  long memberSequence();

  /** {@code member.created}, {@code member.updated}: the member's status and whether it is payout-ready. */
  record MemberChanged(String externalMemberId, long memberSequence, String status, boolean payoutReady)
      implements EventData {}

  /** {@code member.closed}: when, the points forfeited, the balances after. */
  record MemberClosed(String externalMemberId, long memberSequence, Instant closedAt, long pointsForfeited,
      Balances balances) implements EventData {}

  /** {@code transaction.settled}: the award (also 0 points) and the balances after. */
  record TransactionSettled(String externalMemberId, long memberSequence, String eventId,
      String externalTransactionId, long pointsAwarded, Balances balances, String ledgerGroupId)
      implements EventData {}

  /** {@code transaction.reversed}: the points taken back and the balances after. */
  record TransactionReversed(String externalMemberId, long memberSequence, String eventId,
      String externalTransactionId, long pointsReversed, Balances balances, String ledgerGroupId)
      implements EventData {}

  /**
   * {@code redemption.created}, {@code redemption.completed}, {@code redemption.failed}: the
   * redemption as {@code GET /redemptions/{id}} shows it ({@code payout().failureReason()} on a
   * failure) and the balances after.
   */
  record RedemptionChanged(String externalMemberId, long memberSequence, Redemption redemption, Balances balances)
      implements EventData {}

  /** {@code points.adjusted}: an operator's adjustment, its reason and the balances after. */
  record PointsAdjusted(String externalMemberId, long memberSequence, long pointsDelta, String reason,
      Balances balances) implements EventData {}

  /** An event type this SDK does not know yet: its data as sent. */
  record Other(String externalMemberId, long memberSequence, JsonObject json) implements EventData {}
}
