package com.memberrewards.partner;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** A redemption for {@code POST /redemptions}; requestId is yours, unique per club. */
public record RedemptionRequest(String requestId, String externalMemberId, long points, String currency) {
  public RedemptionRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(externalMemberId, "externalMemberId");
    Objects.requireNonNull(currency, "currency");
  }

  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("requestId", requestId);
    m.put("member", Map.of("externalMemberId", externalMemberId));
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("points", points);
    r.put("currency", currency);
    m.put("redemption", r);
    return m;
  }

  /**
   * Named steps: {@code RedemptionRequest.builder().requestId("rq-1").externalMemberId("member-1")
   * .points(100).currency("GBP").build()}; {@code points} are points, not money.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Fluent construction; {@link #build()} checks every field is set. */
  public static final class Builder {
    private String requestId, externalMemberId, currency;
    private Long points;

    public Builder requestId(String v) { requestId = v; return this; }
    public Builder externalMemberId(String v) { externalMemberId = v; return this; }
    public Builder points(long v) { points = v; return this; }
    public Builder currency(String v) { currency = v; return this; }

    public RedemptionRequest build() {
      return new RedemptionRequest(requestId, externalMemberId, Objects.requireNonNull(points, "points"), currency);
    }
  }
}
