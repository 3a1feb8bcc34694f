package com.memberrewards.partner;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A reversal for {@code POST /transactions/reversed}; amountMinor null reverses
 * everything not yet reversed; reason may be null.
 */
public record ReversedRequest(String eventId, Instant occurredAt, String externalMemberId,
    String externalTransactionId, Long amountMinor, String currency, String reason) {
  public ReversedRequest {
    Objects.requireNonNull(eventId, "eventId");
    Objects.requireNonNull(occurredAt, "occurredAt");
    Objects.requireNonNull(externalMemberId, "externalMemberId");
    Objects.requireNonNull(externalTransactionId, "externalTransactionId");
    Objects.requireNonNull(currency, "currency");
  }

  Map<String, Object> toJson() {
    Map<String, Object> tx = new LinkedHashMap<>();
    tx.put("externalTransactionId", externalTransactionId);
    if (amountMinor != null) tx.put("amountMinor", amountMinor);
    tx.put("currency", currency);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("eventId", eventId);
    m.put("occurredAt", Signing.timestamp(occurredAt));
    m.put("member", Map.of("externalMemberId", externalMemberId));
    m.put("transaction", tx);
    if (reason != null) m.put("reason", reason);
    return m;
  }
}
