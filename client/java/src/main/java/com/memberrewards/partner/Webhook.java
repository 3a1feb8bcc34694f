package com.memberrewards.partner;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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
public final class Webhook {
  /** Default largest distance between webhook-timestamp and now, either way. */
  public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);

  private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/]+={0,2}");
  private static final Pattern UNIX_SECONDS = Pattern.compile("[0-9]{1,15}");

  private final List<byte[]> keys;
  private final Duration tolerance;

  /**
   * The verifier of one endpoint's deliveries, in the Standard Webhooks
   * libraries' shape: made from its secret ("whsec_...", shown once in the
   * answers of create and rotate-secret).
   *
   * <pre>{@code
   * Webhook webhook = new Webhook(secret);
   * Event event = webhook.verify(rawBody, headers); // throws WebhookVerificationException
   * }</pre>
   *
   * @throws WebhookVerificationException INVALID_SECRET when it is not "whsec_" followed by base64
   */
  public Webhook(String secret) {
    this(List.of(secret), DEFAULT_TOLERANCE);
  }

  /** Any of several secrets passes (while you roll a rotation out on your side). */
  public Webhook(Collection<String> secrets) {
    this(secrets, DEFAULT_TOLERANCE);
  }

  /** With another largest distance between webhook-timestamp and now. */
  public Webhook(Collection<String> secrets, Duration tolerance) {
    if (secrets.isEmpty()) {
      throw new WebhookVerificationException(WebhookVerificationException.Reason.INVALID_SECRET, "no secret given");
    }
    List<byte[]> decoded = new ArrayList<>();
    for (String secret : secrets) decoded.add(secretKey(secret));
    this.keys = List.copyOf(decoded);
    this.tolerance = tolerance;
  }

  /**
   * Verifies a delivery and returns its event, against the system clock.
   * {@code body} is the raw bytes received, before any parsing; {@code
   * headers} any map of header names (any case) to a String or a List of
   * Strings, e.g. com.sun.net.httpserver.Headers or a servlet's headers
   * copied into a map.
   */
  public Event verify(byte[] body, Map<String, ?> headers) {
    return verify(body, lookup(headers), Instant.now());
  }

  /** As {@link #verify(byte[], Map)}, for a body received as a String. */
  public Event verify(String body, Map<String, ?> headers) {
    return verify(body.getBytes(StandardCharsets.UTF_8), headers);
  }

  /**
   * The full form: {@code header} returns a header's value by its lower-case
   * name (null if absent); {@code now} is the clock (for tests).
   */
  public Event verify(byte[] body, Function<String, String> header, Instant now) {
    verifySignature(body, header, now);
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
  public void verifySignature(byte[] body, Function<String, String> header, Instant now) {
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
    byte[] prefix = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
    List<byte[]> expected = new ArrayList<>();
    for (byte[] key : keys) expected.add(Signing.hmacSha256(key, prefix, body));

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

  /**
   * The webhook-signature value the service sends for this message, signed
   * with the first secret: "v1," + base64 HMAC. Useful to test your receiver.
   */
  public String sign(String id, long timestamp, byte[] body) {
    byte[] prefix = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
    return "v1," + Base64.getEncoder().encodeToString(Signing.hmacSha256(keys.get(0), prefix, body));
  }

  private static byte[] secretKey(String secret) {
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
