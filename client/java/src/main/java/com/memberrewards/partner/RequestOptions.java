package com.memberrewards.partner;

import java.time.Duration;

/**
 * Per-call options; null fields take the client's settings.
 * {@code RequestOptions.idempotencyKey("order-42-redeem")} chooses the key of
 * a POST (e.g. to retry it after your process restarted).
 */
public record RequestOptions(String idempotencyKey, Duration timeout, Integer maxRetries) {
  public static final RequestOptions DEFAULT = new RequestOptions(null, null, null);

  public static RequestOptions idempotencyKey(String key) {
    return new RequestOptions(key, null, null);
  }

  public RequestOptions withTimeout(Duration t) {
    return new RequestOptions(idempotencyKey, t, maxRetries);
  }

  public RequestOptions withMaxRetries(int n) {
    return new RequestOptions(idempotencyKey, timeout, n);
  }
}
