package com.memberrewards.partner;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A settled card transaction for {@code POST /transactions/settled}. Build it:
 * {@code SettledRequest.builder().eventId("evt-1").externalMemberId("member-1")
 * .externalTransactionId("tx-1").merchant("m-42", "Corner Shop").amountMinor(12345)
 * .currency("GBP").occurredAt(t).settledAt(t).build()}.
 */
public record SettledRequest(String eventId, Instant occurredAt, String externalMemberId, String externalTransactionId,
    String merchantId, String merchantName, long amountMinor, String currency, Instant settledAt) {
  public SettledRequest {
    Objects.requireNonNull(eventId, "eventId");
    Objects.requireNonNull(occurredAt, "occurredAt");
    Objects.requireNonNull(externalMemberId, "externalMemberId");
    Objects.requireNonNull(externalTransactionId, "externalTransactionId");
    Objects.requireNonNull(merchantId, "merchantId");
    Objects.requireNonNull(merchantName, "merchantName");
    Objects.requireNonNull(currency, "currency");
    Objects.requireNonNull(settledAt, "settledAt");
  }

  public static Builder builder() {
    return new Builder();
  }

  Map<String, Object> toJson() {
    Map<String, Object> tx = new LinkedHashMap<>();
    tx.put("externalTransactionId", externalTransactionId);
    tx.put("merchantId", merchantId);
    tx.put("merchantName", merchantName);
    tx.put("amountMinor", amountMinor);
    tx.put("currency", currency);
    tx.put("settledAt", Signing.timestamp(settledAt));
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("eventId", eventId);
    m.put("occurredAt", Signing.timestamp(occurredAt));
    m.put("member", Map.of("externalMemberId", externalMemberId));
    m.put("transaction", tx);
    return m;
  }

  /** Fluent construction; {@link #build()} checks every field is set. */
  public static final class Builder {
    private String eventId, externalMemberId, externalTransactionId, merchantId, merchantName, currency;
    private Instant occurredAt, settledAt;
    private long amountMinor;

    public Builder eventId(String v) { eventId = v; return this; }
    public Builder occurredAt(Instant v) { occurredAt = v; return this; }
    public Builder externalMemberId(String v) { externalMemberId = v; return this; }
    public Builder externalTransactionId(String v) { externalTransactionId = v; return this; }
    public Builder merchant(String id, String name) { merchantId = id; merchantName = name; return this; }
    public Builder amountMinor(long v) { amountMinor = v; return this; }
    public Builder currency(String v) { currency = v; return this; }
    public Builder settledAt(Instant v) { settledAt = v; return this; }

    public SettledRequest build() {
      return new SettledRequest(eventId, occurredAt, externalMemberId, externalTransactionId, merchantId, merchantName,
          amountMinor, currency, settledAt);
    }
  }
}
