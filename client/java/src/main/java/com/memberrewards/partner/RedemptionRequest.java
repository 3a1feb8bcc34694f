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
}
