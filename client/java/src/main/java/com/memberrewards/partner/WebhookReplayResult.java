package com.memberrewards.partner;

/** The answer to a replay: how many events were queued again. */
public record WebhookReplayResult(String endpointId, long replayed, boolean idempotentReplay) {
  static WebhookReplayResult from(JsonObject o) {
    return from(o, false);
  }

  static WebhookReplayResult from(JsonObject o, boolean replay) {
    return new WebhookReplayResult(o.getString("endpointId"), o.getLong("replayed"), replay);
  }
}
