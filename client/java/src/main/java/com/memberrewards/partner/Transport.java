package com.memberrewards.partner;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * One logical call: sign, send, retry what may be retried (same idempotency
 * key and body, signed afresh each attempt), and turn the answer into data or
 * a MemberRewardsException.
 */
final class Transport {
  static final String VERSION = "1.0.0";

  private final String origin;
  private final String basePath;
  private final String keyId;
  private final String keySecret;
  final String partnerRef;
  private final Duration timeout;
  private final int maxRetries;
  private final Duration initialRetryDelay;
  private final Duration maxRetryDelay;
  private final long maxRetryAfterSeconds;
  private final HttpClient http;
  private final String userAgent;

  Transport(MemberRewardsClient.Builder b) {
    URI base = URI.create(require(b.baseUrl, "baseUrl"));
    if (!"http".equals(base.getScheme()) && !"https".equals(base.getScheme())) {
      throw new IllegalArgumentException("baseUrl must be http(s)");
    }
    if (base.getRawQuery() != null || base.getRawFragment() != null) {
      throw new IllegalArgumentException("baseUrl must not have a query or fragment");
    }
    this.origin = base.getScheme() + "://" + base.getRawAuthority();
    String path = base.getRawPath() == null ? "" : base.getRawPath();
    this.basePath = path.replaceAll("/+$", "");
    this.keyId = require(b.keyId, "keyId");
    this.keySecret = require(b.keySecret, "keySecret");
    this.partnerRef = require(b.partnerRef, "partnerRef");
    this.timeout = b.timeout;
    this.maxRetries = b.maxRetries;
    this.initialRetryDelay = b.initialRetryDelay;
    this.maxRetryDelay = b.maxRetryDelay;
    this.maxRetryAfterSeconds = b.maxRetryAfterSeconds;
    this.http = b.httpClient != null ? b.httpClient
        : HttpClient.newBuilder()
            // h2c upgrade on plain http is of no use to the API; ALPN picks HTTP/2 on https.
            .version("https".equals(base.getScheme()) ? HttpClient.Version.HTTP_2 : HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout.compareTo(Duration.ofSeconds(10)) < 0 ? timeout : Duration.ofSeconds(10))
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
    this.userAgent = "member-rewards-java/" + VERSION + " java/" + System.getProperty("java.version")
        + (b.userAgent == null ? "" : " " + b.userAgent);
  }

  private static String require(String v, String name) {
    if (v == null || v.isEmpty()) throw new IllegalArgumentException(name + " is required");
    return v;
  }

  /** Percent-encodes one path segment: every byte but ALPHA / DIGIT / "-" / "." / "_" / "~". */
  /**
   * One id of a path, percent-encoded. An id the API cannot take (not 1-128
   * printable ASCII characters) or one URL parsers resolve ("." and "..",
   * also encoded) is refused before anything is sent, so an empty id never
   * turns a call into a request for another path.
   */
  static String segment(String value) {
    boolean valid = value != null && !value.isEmpty() && value.length() <= 128 && !value.equals(".")
        && !value.equals("..") && value.chars().allMatch(c -> c >= ' ' && c <= '~');
    if (!valid) {
      throw new IllegalArgumentException("\"" + value + "\" is no id: 1-128 printable ASCII characters, not . or ..");
    }
    return encode(value);
  }

  static String encode(String value) {
    StringBuilder out = new StringBuilder();
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xFF;
      if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
          || c == '_' || c == '~') {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
      }
    }
    return out.toString();
  }

  static String queryString(Map<String, Object> query) {
    if (query == null) return "";
    List<String> parts = new ArrayList<>();
    for (Map.Entry<String, Object> e : query.entrySet()) {
      Object v = e.getValue();
      if (v == null) continue;
      String text;
      if (v instanceof List) {
        List<String> items = new ArrayList<>();
        for (Object item : (List<?>) v) items.add(encode(String.valueOf(item)));
        if (items.isEmpty()) continue;
        text = String.join(",", items);
      } else {
        text = encode(String.valueOf(v));
      }
      parts.add(encode(e.getKey()) + "=" + text);
    }
    return parts.isEmpty() ? "" : "?" + String.join("&", parts);
  }

  /** Seconds from a Retry-After value: delta-seconds or an HTTP date; null if neither. */
  static Long parseRetryAfter(String value, long nowMillis) {
    if (value == null) return null;
    String v = value.trim();
    if (v.matches("[0-9]{1,9}")) return Long.parseLong(v);
    try {
      long at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
      return Math.max(0, (at - nowMillis + 999) / 1000);
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  /** Backoff before retry number {@code retry} (0-based): exponential, half of it jittered, never below Retry-After. */
  long backoffMillis(int retry, Long retryAfterSeconds) {
    double step = Math.min(maxRetryDelay.toMillis(), initialRetryDelay.toMillis() * Math.pow(2, retry));
    long jittered = (long) (step / 2 + ThreadLocalRandom.current().nextDouble() * (step / 2));
    return retryAfterSeconds == null ? jittered : Math.max(retryAfterSeconds * 1000, jittered);
  }

  private static boolean retryable(int status, String code) {
    return status == 429 || status == 503 || (status == 409 && "idempotency_in_progress".equals(code));
  }

  /** A POST body with the client's partnerRef first. */
  Map<String, Object> body(Map<String, Object> fields) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partnerRef", partnerRef);
    if (fields != null) m.putAll(fields);
    return m;
  }

  <T> ApiResponse<T> call(String method, String path, Map<String, Object> query, Map<String, Object> body,
      RequestOptions options, Function<JsonObject, T> convert) {
    return call(method, path, query, body, options, (data, replayed) -> convert.apply(data));
  }

  /** As above; {@code convert} is also told whether the answer was an idempotent replay. */
  <T> ApiResponse<T> call(String method, String path, Map<String, Object> query, Map<String, Object> body,
      RequestOptions options, BiFunction<JsonObject, Boolean, T> convert) {
    RequestOptions opts = options == null ? RequestOptions.DEFAULT : options;
    String signedPath = basePath + path;
    URI uri = URI.create(origin + signedPath + queryString(query));
    if (!signedPath.equals(uri.getRawPath())) throw new IllegalArgumentException("path " + path + " would not be sent as written");
    boolean post = "POST".equals(method);
    byte[] bytes = post ? Json.write(body == null ? Map.of() : body).getBytes(StandardCharsets.UTF_8) : new byte[0];
    String idempotencyKey = post ? (opts.idempotencyKey() != null ? opts.idempotencyKey() : UUID.randomUUID().toString()) : null;
    int retries = opts.maxRetries() != null ? opts.maxRetries() : maxRetries;
    Duration attemptTimeout = opts.timeout() != null ? opts.timeout() : timeout;

    for (int attempt = 0; ; attempt++) {
      boolean mayRetry = attempt < retries;
      String ts = Signing.timestamp(java.time.Instant.now());
      HttpRequest.Builder rb = HttpRequest.newBuilder(uri)
          .timeout(attemptTimeout)
          .header("Accept", "application/json")
          .header("User-Agent", userAgent)
          .header("X-MR-Key-Id", keyId)
          .header("X-MR-Timestamp", ts)
          .header("X-MR-Signature", Signing.sign(keySecret, ts, method, signedPath, bytes));
      if (post) {
        rb.header("Content-Type", "application/json").header("X-MR-Idempotency-Key", idempotencyKey)
            .POST(HttpRequest.BodyPublishers.ofByteArray(bytes));
      } else {
        rb.GET();
      }

      HttpResponse<byte[]> response;
      CompletableFuture<HttpResponse<byte[]>> future = http.sendAsync(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
      try {
        // The whole answer, body included, within the timeout.
        response = future.get(attemptTimeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        future.cancel(true);
        Thread.currentThread().interrupt();
        throw new MemberRewardsConnectionException("interrupted", "the call was interrupted", idempotencyKey, e);
      } catch (TimeoutException | ExecutionException e) {
        future.cancel(true);
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        boolean timedOut = e instanceof TimeoutException || cause instanceof HttpTimeoutException;
        if (!timedOut && !(cause instanceof IOException)) {
          throw new MemberRewardsConnectionException("connection_error", "the request failed: " + cause, idempotencyKey, cause);
        }
        MemberRewardsConnectionException error = timedOut
            ? new MemberRewardsConnectionException("timeout", "no complete answer within " + attemptTimeout.toMillis() + " ms", idempotencyKey, cause)
            : new MemberRewardsConnectionException("connection_error", "could not reach " + origin + ": " + cause, idempotencyKey, cause);
        if (!mayRetry) throw error;
        pause(backoffMillis(attempt, null), idempotencyKey);
        continue;
      }

      int status = response.statusCode();
      String headerRequestId = response.headers().firstValue("x-request-id").orElse(null);
      JsonObject envelope = null;
      try {
        Object parsed = Json.parse(response.body());
        if (parsed instanceof Map) envelope = JsonObject.of(parsed);
      } catch (JsonException e) {
        envelope = null;
      }
      if (envelope != null && status >= 200 && status < 300 && Boolean.TRUE.equals(envelope.get("ok"))
          && envelope.get("data") instanceof Map) {
        boolean replay = response.headers().firstValue("x-mr-idempotent-replay").map("true"::equals).orElse(false);
        T data;
        try {
          data = convert.apply(envelope.getObject("data"), replay);
        } catch (JsonException e) {
          throw new MemberRewardsException("invalid_response", "unexpected data: " + e.getMessage(), status,
              headerRequestId, null, null, null, idempotencyKey, e);
        }
        return new ApiResponse<>(data, status, headerRequestId, replay, idempotencyKey, attempt + 1);
      }

      Long retryAfter = parseRetryAfter(response.headers().firstValue("retry-after").orElse(null), System.currentTimeMillis());
      MemberRewardsException error = toError(envelope, status, headerRequestId, retryAfter, idempotencyKey);
      if (!mayRetry || !retryable(status, error.code())) throw error;
      if (retryAfter != null && retryAfter > maxRetryAfterSeconds) throw error;
      pause(backoffMillis(attempt, retryAfter), idempotencyKey);
    }
  }

  private static MemberRewardsException toError(JsonObject envelope, int status, String headerRequestId, Long retryAfter,
      String idempotencyKey) {
    Object err = envelope == null ? null : envelope.get("error");
    if (envelope != null && Boolean.FALSE.equals(envelope.get("ok")) && err instanceof Map) {
      JsonObject e = JsonObject.of(err);
      Object code = e.get("code");
      if (code instanceof String) {
        List<MemberRewardsException.ErrorDetail> details = new ArrayList<>();
        if (e.get("details") instanceof List) {
          for (Object d : e.getList("details")) {
            if (d instanceof Map) {
              JsonObject dd = JsonObject.of(d);
              details.add(new MemberRewardsException.ErrorDetail(
                  dd.get("field") instanceof String ? (String) dd.get("field") : null,
                  dd.get("problem") instanceof String ? (String) dd.get("problem") : null));
            }
          }
        }
        return new MemberRewardsException((String) code,
            e.get("message") instanceof String ? (String) e.get("message") : (String) code, status,
            e.get("requestId") instanceof String ? (String) e.get("requestId") : headerRequestId, details,
            e.get("redemptionId") instanceof String ? (String) e.get("redemptionId") : null, retryAfter,
            idempotencyKey, null);
      }
    }
    return new MemberRewardsException("invalid_response", "HTTP " + status + " without the API's JSON envelope", status,
        headerRequestId, null, null, retryAfter, idempotencyKey, null);
  }

  private static void pause(long millis, String idempotencyKey) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new MemberRewardsConnectionException("interrupted", "interrupted while waiting to retry", idempotencyKey, e);
    }
  }
}
