package com.memberrewards.partner;

import java.time.Instant;

/** One entry of {@code GET /members/{id}/points}; the merchant fields and cashValueMinor may be null. */
public record LedgerEntry(String id, String entryType, String description, long pointsDelta,
    long pointsDeltaAvailable, long pointsDeltaReserved, Long cashValueMinor, String currency, Instant createdAt,
    String merchantName, String merchantId, String externalTransactionId, String ledgerGroupId) {
  static LedgerEntry from(JsonObject o) {
    return new LedgerEntry(o.getString("id"), o.getString("entryType"), o.getString("description"),
        o.getLong("pointsDelta"), o.getLong("pointsDeltaAvailable"), o.getLong("pointsDeltaReserved"),
        o.optLong("cashValueMinor"), o.optString("currency"), o.getInstant("createdAt"), o.optString("merchantName"),
        o.optString("merchantId"), o.optString("externalTransactionId"), o.optString("ledgerGroupId"));
  }
}
