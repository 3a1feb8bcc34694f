package com.memberrewards.partner;

import java.time.Instant;

/** One entry of {@code GET /members/{id}/transactions}: type "settled" or "reversed"; settledAt null on reversals. */
public record TransactionEntry(String externalTransactionId, String type, String eventId, String merchantId,
    String merchantName, long amountMinor, String currency, long pointsDelta, Instant occurredAt, Instant settledAt,
    Instant createdAt) {
  static TransactionEntry from(JsonObject o) {
    return new TransactionEntry(o.getString("externalTransactionId"), o.getString("type"), o.getString("eventId"),
        o.optString("merchantId"), o.optString("merchantName"), o.getLong("amountMinor"), o.getString("currency"),
        o.getLong("pointsDelta"), o.getInstant("occurredAt"), o.optInstant("settledAt"), o.getInstant("createdAt"));
  }
}
