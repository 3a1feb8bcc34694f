package com.memberrewards.partner;

import java.time.Instant;

/** One delivery attempt; status is the receiver's HTTP status, null when no answer came. */
public record WebhookDelivery(String eventId, int attempt, Integer status, String error, long durationMs,
    Instant attemptedAt) {
  static WebhookDelivery from(JsonObject o) {
    return new WebhookDelivery(o.getString("eventId"), o.getInt("attempt"), o.optInt("status"), o.optString("error"),
        o.getLong("durationMs"), o.getInstant("attemptedAt"));
  }
}
