package com.memberrewards.partner;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Request signing (contract section 2): the canonical string is the
 * {@code X-MR-Timestamp} as sent, the method in upper case, the path as on the
 * request line up to "?" (not decoded), and the lower-case hex SHA-256 of the
 * raw body, joined by "\n"; the signature is "v1=" + hex HMAC-SHA256 keyed
 * with the secret's ASCII bytes as issued.
 */
public final class Signing {
  /** Hex SHA-256 of the empty body (every GET). */
  public static final String EMPTY_BODY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

  private static final DateTimeFormatter MILLIS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

  private Signing() {}

  public static String sha256Hex(byte[] body) {
    try {
      return hex(MessageDigest.getInstance("SHA-256").digest(body));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /** Everything before the first "?". */
  public static String pathWithoutQuery(String pathAndQuery) {
    int q = pathAndQuery.indexOf('?');
    return q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
  }

  public static String canonicalString(String timestamp, String method, String path, byte[] body) {
    return timestamp + "\n" + method.toUpperCase(Locale.ROOT) + "\n" + pathWithoutQuery(path) + "\n" + sha256Hex(body);
  }

  /** The {@code X-MR-Signature} value: "v1=" + lower-case hex HMAC-SHA256. */
  public static String sign(String secret, String timestamp, String method, String path, byte[] body) {
    byte[] canonical = canonicalString(timestamp, method, path, body).getBytes(StandardCharsets.UTF_8);
    return "v1=" + hex(hmacSha256(secret.getBytes(StandardCharsets.UTF_8), canonical));
  }

  /** A String body is signed as its UTF-8 bytes, as it is sent. */
  public static String sign(String secret, String timestamp, String method, String path, String body) {
    return sign(secret, timestamp, method, path, body.getBytes(StandardCharsets.UTF_8));
  }

  /** RFC 3339 UTC with milliseconds, as {@code X-MR-Timestamp} wants it. */
  public static String timestamp(Instant t) {
    return MILLIS.format(t.truncatedTo(ChronoUnit.MILLIS));
  }

  static byte[] hmacSha256(byte[] key, byte[]... parts) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      for (byte[] p : parts) mac.update(p);
      return mac.doFinal();
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 is unusable in this JVM", e);
    }
  }

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  static String hex(byte[] bytes) {
    char[] out = new char[bytes.length * 2];
    for (int i = 0; i < bytes.length; i++) {
      out[2 * i] = HEX[(bytes[i] >> 4) & 0xF];
      out[2 * i + 1] = HEX[bytes[i] & 0xF];
    }
    return new String(out);
  }
}
