package com.memberrewards.partner;

import java.time.Instant;
import java.util.List;

/**
 * A webhook endpoint. {@code secret} is set only in the answers to create and
 * rotate-secret; status is "enabled" or "disabled", disabledReason "gone",
 * "failing", "manual" or null.
 */
public record WebhookEndpoint(String endpointId, String url, List<String> eventTypes, String description,
    String status, String disabledReason, String secret, Instant createdAt, Instant updatedAt, boolean idempotentReplay) {
  static WebhookEndpoint from(JsonObject o) {
    return from(o, false);
  }

  static WebhookEndpoint from(JsonObject o, boolean replay) {
    return new WebhookEndpoint(o.getString("endpointId"), o.getString("url"),
        o.has("eventTypes") && !o.isNull("eventTypes") ? o.getStrings("eventTypes") : List.of(),
        o.optString("description"), o.getString("status"), o.optString("disabledReason"), o.optString("secret"),
        o.optInstant("createdAt"), o.optInstant("updatedAt"), replay);
  }
}
