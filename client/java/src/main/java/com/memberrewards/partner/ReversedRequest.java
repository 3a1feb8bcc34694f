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

  /**
   * Named steps: {@code ReversedRequest.builder().eventId("ev-2").occurredAt(t).externalMemberId("member-1")
   * .externalTransactionId("tx-1").amountMinor(500).currency("GBP").reason("partial refund").build()};
   * without {@code amountMinor} all that is left is reversed, {@code reason} is optional.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Fluent construction; {@link #build()} checks every required field is set. */
  public static final class Builder {
    private String eventId, externalMemberId, externalTransactionId, currency, reason;
    private Instant occurredAt;
    private Long amountMinor;

    public Builder eventId(String v) { eventId = v; return this; }
    public Builder occurredAt(Instant v) { occurredAt = v; return this; }
    public Builder externalMemberId(String v) { externalMemberId = v; return this; }
    public Builder externalTransactionId(String v) { externalTransactionId = v; return this; }
    public Builder amountMinor(long v) { amountMinor = v; return this; }
    public Builder currency(String v) { currency = v; return this; }
    public Builder reason(String v) { reason = v; return this; }

    public ReversedRequest build() {
      return new ReversedRequest(eventId, occurredAt, externalMemberId, externalTransactionId, amountMinor, currency,
          reason);
    }
  }
}
