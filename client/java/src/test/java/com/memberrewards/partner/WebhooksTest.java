package com.memberrewards.partner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Webhook beyond the shared vectors: the real clock, header shapes, rotation, payloads. */
class WebhooksTest {
  static String newSecret() {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    return "whsec_" + Base64.getEncoder().encodeToString(key);
  }

  final String secret = newSecret();
  final byte[] body = ("{\"id\":\"evt_1\",\"type\":\"member.created\",\"createdAt\":\"2026-11-26T10:00:00.000Z\","
      + "\"environment\":\"sandbox\",\"data\":{\"externalMemberId\":\"m-1\",\"memberSequence\":1,\"status\":\"created\","
      + "\"payoutReady\":false}}").getBytes(StandardCharsets.UTF_8);

  Map<String, Object> headersAt(long ts, String signature) {
    return Map.of("Webhook-Id", "evt_1", "Webhook-Timestamp", String.valueOf(ts), "Webhook-Signature", signature);
  }

  Map<String, Object> headersAt(long ts) throws Exception {
    return headersAt(ts, new Webhook(secret).sign("evt_1", ts, body));
  }

  static WebhookVerificationException.Reason reasonOf(org.junit.jupiter.api.function.Executable run) {
    return assertThrows(WebhookVerificationException.class, run).reason();
  }

  @Test
  void validNowWithTheDefaults() throws Exception {
    Event e = new Webhook(secret).verify(body, headersAt(Instant.now().getEpochSecond()));
    assertEquals("member.created", e.type());
    assertEquals("m-1", e.externalMemberId());
    assertEquals(1, e.memberSequence());
    assertEquals("created", assertInstanceOf(EventData.MemberChanged.class, e.data()).status());
  }

  @Test
  void expiredAfterFiveMinutesEitherWay() throws Exception {
    long now = Instant.now().getEpochSecond();
    assertEquals(WebhookVerificationException.Reason.TIMESTAMP_OUT_OF_TOLERANCE,
        reasonOf(() -> new Webhook(secret).verify(body, headersAt(now - 301))));
    assertEquals(WebhookVerificationException.Reason.TIMESTAMP_OUT_OF_TOLERANCE,
        reasonOf(() -> new Webhook(secret).verify(body, headersAt(now + 301))));
    new Webhook(secret).verify(body, headersAt(now - 299));
  }

  @Test
  void tamperedBodyFails() throws Exception {
    long now = Instant.now().getEpochSecond();
    byte[] tampered = new String(body, StandardCharsets.UTF_8).replace("m-1", "m-2").getBytes(StandardCharsets.UTF_8);
    assertEquals(WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE,
        reasonOf(() -> new Webhook(secret).verify(tampered, headersAt(now))));
  }

  @Test
  void twoSignaturesDuringARotation() throws Exception {
    String old = newSecret();
    long now = Instant.now().getEpochSecond();
    String both = new Webhook(old).sign("evt_1", now, body) + " " + new Webhook(secret).sign("evt_1", now, body);
    new Webhook(secret).verify(body, headersAt(now, both));
    new Webhook(old).verify(body, headersAt(now, both));
    new Webhook(List.of(old, secret)).verify(body, headersAt(now, new Webhook(old).sign("evt_1", now, body)));
    assertEquals(WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE,
        reasonOf(() -> new Webhook(newSecret()).verify(body, headersAt(now, both))));
  }

  @Test
  void headerValuesAsListsAreJoined() throws Exception {
    long now = Instant.now().getEpochSecond();
    Map<String, Object> h = Map.of("webhook-id", List.of("evt_1"), "webhook-timestamp", List.of(String.valueOf(now)),
        "webhook-signature", List.of("v1,AAAA", new Webhook(secret).sign("evt_1", now, body)));
    new Webhook(secret).verify(body, h);
  }

  @Test
  void aSignedBodyThatIsNotAnEventIsRefused() throws Exception {
    long now = Instant.now().getEpochSecond();
    byte[] text = "not json".getBytes(StandardCharsets.UTF_8);
    assertEquals(WebhookVerificationException.Reason.INVALID_PAYLOAD, reasonOf(() -> new Webhook(secret).verify(text, headersAt(now, new Webhook(secret).sign("evt_1", now, text)))));
  }

  @Test
  void aSecretThatIsNotBase64IsRefused() {
    long now = Instant.now().getEpochSecond();
    assertEquals(WebhookVerificationException.Reason.INVALID_SECRET,
        reasonOf(() -> new Webhook("whsec_***")));
    assertEquals(WebhookVerificationException.Reason.INVALID_SECRET, reasonOf(() -> new Webhook(List.of())));
  }

  @Test
  void customToleranceAndClock() throws Exception {
    Instant at = Instant.parse("2026-11-26T10:00:00Z");
    Map<String, Object> h = headersAt(at.getEpochSecond());
    new Webhook(List.of(secret), Duration.ofSeconds(10)).verify(body, Webhook.lookup(h), at.plusSeconds(10));
    assertEquals(WebhookVerificationException.Reason.TIMESTAMP_OUT_OF_TOLERANCE, reasonOf(() ->
        new Webhook(List.of(secret), Duration.ofSeconds(10)).verify(body, Webhook.lookup(h), at.plusSeconds(11))));
  }
}
