package com.memberrewards.partner;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Standard Webhooks v1 (contract section 10, "Delivery"): {@code webhook-signature}
 * holds one or more "v1,&lt;base64 HMAC-SHA256&gt;" separated by spaces (two
 * during a secret rotation), keyed with the base64-decoded part of the secret
 * after "whsec_", over "{webhook-id}.{webhook-timestamp}.{body}".
 */
public final class Webhooks {
  /** Default largest distance between webhook-timestamp and now, either way. */
  public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);

  private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/]+={0,2}");
  private static final Pattern UNIX_SECONDS = Pattern.compile("[0-9]{1,15}");

  private Webhooks() {}

  /**
   * Verifies a delivery and returns its event, with the default tolerance and
   * the system clock. {@code headers} is any map of header names (any case) to
   * a String or a List of Strings, e.g. com.sun.net.httpserver.Headers or a
   * servlet's headers copied into a map; {@code body} the raw bytes received.
   */
  public static Event verify(String secret, Map<String, ?> headers, byte[] body) throws WebhookVerificationException {
    return verify(List.of(secret), lookup(headers), body, DEFAULT_TOLERANCE, Instant.now());
  }

  /** As {@link #verify(String, Map, byte[])}, any of several secrets (a rotation rolled out on your side). */
  public static Event verify(Collection<String> secrets, Map<String, ?> headers, byte[] body)
      throws WebhookVerificationException {
    return verify(secrets, lookup(headers), body, DEFAULT_TOLERANCE, Instant.now());
  }

  /**
   * The full form: {@code header} returns a header's value by its lower-case
   * name (null if absent); {@code tolerance} and {@code now} for other windows
   * and for tests.
   */
  public static Event verify(Collection<String> secrets, Function<String, String> header, byte[] body,
      Duration tolerance, Instant now) throws WebhookVerificationException {
    verifySignature(secrets, header, body, tolerance, now);
    try {
      return Event.from(JsonObject.of(Json.parse(body)));
    } catch (JsonException e) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.INVALID_PAYLOAD,
          "the signed body is not an event: " + e.getMessage());
    }
  }

  /**
   * Only the Standard Webhooks checks (headers, timestamp window, a matching
   * v1 signature), whatever the body holds; throws when the message is not
   * authentic.
   */
  public static void verifySignature(Collection<String> secrets, Function<String, String> header, byte[] body,
      Duration tolerance, Instant now) throws WebhookVerificationException {
    String id = header.apply("webhook-id");
    String timestamp = header.apply("webhook-timestamp");
    String signatures = header.apply("webhook-signature");
    if (id == null || id.isEmpty() || timestamp == null || timestamp.isEmpty() || signatures == null
        || signatures.isEmpty()) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.MISSING_HEADER,
          "webhook-id, webhook-timestamp and webhook-signature are all required");
    }
    if (!UNIX_SECONDS.matcher(timestamp).matches()) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.INVALID_TIMESTAMP,
          "webhook-timestamp is not Unix seconds");
    }
    long sent = Long.parseLong(timestamp);
    long distance = Math.abs(now.getEpochSecond() - sent);
    if (distance > tolerance.getSeconds()) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.TIMESTAMP_OUT_OF_TOLERANCE,
          "webhook-timestamp is " + distance + " s from now, beyond the tolerance");
    }
    if (secrets.isEmpty()) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.INVALID_SECRET, "no secret given");
    }
    byte[] prefix = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
    byte[][] expected = new byte[secrets.size()][];
    int n = 0;
    for (String secret : secrets) expected[n++] = Signing.hmacSha256(secretKey(secret), prefix, body);

    boolean matched = false;
    for (String part : signatures.split(" ")) {
      int comma = part.indexOf(',');
      if (comma < 0 || !part.substring(0, comma).equals("v1")) continue; // other schemes are not ours
      byte[] given;
      try {
        given = Base64.getDecoder().decode(part.substring(comma + 1));
      } catch (IllegalArgumentException e) {
        continue;
      }
      for (byte[] want : expected) {
        if (MessageDigest.isEqual(given, want)) matched = true; // constant time for equal lengths
      }
    }
    if (!matched) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE,
          "no v1 signature matches this message");
    }
  }

  /** The webhook-signature value the service sends for this message: "v1," + base64 HMAC. */
  public static String sign(String secret, String id, long timestamp, byte[] body) throws WebhookVerificationException {
    byte[] prefix = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
    return "v1," + Base64.getEncoder().encodeToString(Signing.hmacSha256(secretKey(secret), prefix, body));
  }

  private static byte[] secretKey(String secret) throws WebhookVerificationException {
    String encoded = secret.startsWith("whsec_") ? secret.substring("whsec_".length()) : secret;
    if (!BASE64.matcher(encoded).matches()) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.INVALID_SECRET,
          "the webhook secret is not whsec_ followed by base64");
    }
    try {
      byte[] key = Base64.getDecoder().decode(encoded);
      if (key.length == 0) throw new IllegalArgumentException("empty");
      return key;
    } catch (IllegalArgumentException e) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.INVALID_SECRET,
          "the webhook secret is not valid base64");
    }
  }

  /** Case-insensitive lookup in a map of String or List values (lists joined by a space). */
  static Function<String, String> lookup(Map<String, ?> headers) {
    return name -> {
      for (Map.Entry<String, ?> e : headers.entrySet()) {
        if (e.getKey() == null || !e.getKey().toLowerCase(Locale.ROOT).equals(name)) continue;
        Object v = e.getValue();
        if (v instanceof Collection) {
          StringBuilder joined = new StringBuilder();
          for (Object item : (Collection<?>) v) {
            if (joined.length() > 0) joined.append(' ');
            joined.append(item);
          }
          return joined.toString();
        }
        return v == null ? null : v.toString();
      }
      return null;
    };
  }
}
