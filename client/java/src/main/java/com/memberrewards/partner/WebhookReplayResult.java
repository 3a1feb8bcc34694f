package com.memberrewards.partner;

/** The answer to a replay: how many events were queued again. */
public record WebhookReplayResult(String endpointId, long replayed) {
  static WebhookReplayResult from(JsonObject o) {
    return new WebhookReplayResult(o.getString("endpointId"), o.getLong("replayed"));
  }
}
