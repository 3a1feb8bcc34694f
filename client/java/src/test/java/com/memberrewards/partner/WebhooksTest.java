package com.memberrewards.partner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** verifyWebhook beyond the shared vectors: the real clock, header shapes, rotation, payloads. */
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
    return headersAt(ts, Webhooks.sign(secret, "evt_1", ts, body));
  }

  static WebhookVerificationException.Reason reasonOf(org.junit.jupiter.api.function.Executable run) {
    return assertThrows(WebhookVerificationException.class, run).reason();
  }

  @Test
  void validNowWithTheDefaults() throws Exception {
    Event e = Webhooks.verify(secret, headersAt(Instant.now().getEpochSecond()), body);
    assertEquals("member.created", e.type());
    assertEquals("m-1", e.externalMemberId());
    assertEquals(1, e.memberSequence());
    assertEquals("created", e.data().getString("status"));
  }

  @Test
  void expiredAfterFiveMinutesEitherWay() throws Exception {
    long now = Instant.now().getEpochSecond();
    assertEquals(WebhookVerificationException.Reason.TIMESTAMP_OUT_OF_TOLERANCE,
        reasonOf(() -> Webhooks.verify(secret, headersAt(now - 301), body)));
    assertEquals(WebhookVerificationException.Reason.TIMESTAMP_OUT_OF_TOLERANCE,
        reasonOf(() -> Webhooks.verify(secret, headersAt(now + 301), body)));
    Webhooks.verify(secret, headersAt(now - 299), body);
  }

  @Test
  void tamperedBodyFails() throws Exception {
    long now = Instant.now().getEpochSecond();
    byte[] tampered = new String(body, StandardCharsets.UTF_8).replace("m-1", "m-2").getBytes(StandardCharsets.UTF_8);
    assertEquals(WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE,
        reasonOf(() -> Webhooks.verify(secret, headersAt(now), tampered)));
  }

  @Test
  void twoSignaturesDuringARotation() throws Exception {
    String old = newSecret();
    long now = Instant.now().getEpochSecond();
    String both = Webhooks.sign(old, "evt_1", now, body) + " " + Webhooks.sign(secret, "evt_1", now, body);
    Webhooks.verify(secret, headersAt(now, both), body);
    Webhooks.verify(old, headersAt(now, both), body);
    Webhooks.verify(List.of(old, secret), headersAt(now, Webhooks.sign(old, "evt_1", now, body)), body);
    assertEquals(WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE,
        reasonOf(() -> Webhooks.verify(newSecret(), headersAt(now, both), body)));
  }

  @Test
  void headerValuesAsListsAreJoined() throws Exception {
    long now = Instant.now().getEpochSecond();
    Map<String, Object> h = Map.of("webhook-id", List.of("evt_1"), "webhook-timestamp", List.of(String.valueOf(now)),
        "webhook-signature", List.of("v1,AAAA", Webhooks.sign(secret, "evt_1", now, body)));
    Webhooks.verify(secret, h, body);
  }

  @Test
  void aSignedBodyThatIsNotAnEventIsRefused() throws Exception {
    long now = Instant.now().getEpochSecond();
    byte[] text = "not json".getBytes(StandardCharsets.UTF_8);
    assertEquals(WebhookVerificationException.Reason.INVALID_PAYLOAD, reasonOf(() -> Webhooks.verify(secret,
        headersAt(now, Webhooks.sign(secret, "evt_1", now, text)), text)));
  }

  @Test
  void aSecretThatIsNotBase64IsRefused() {
    long now = Instant.now().getEpochSecond();
    assertEquals(WebhookVerificationException.Reason.INVALID_SECRET,
        reasonOf(() -> Webhooks.verify("whsec_***", headersAt(now, "v1,AAAA"), body)));
  }

  @Test
  void customToleranceAndClock() throws Exception {
    Instant at = Instant.parse("2026-11-26T10:00:00Z");
    Map<String, Object> h = headersAt(at.getEpochSecond());
    Webhooks.verify(List.of(secret), Webhooks.lookup(h), body, Duration.ofSeconds(10), at.plusSeconds(10));
    assertEquals(WebhookVerificationException.Reason.TIMESTAMP_OUT_OF_TOLERANCE, reasonOf(() ->
        Webhooks.verify(List.of(secret), Webhooks.lookup(h), body, Duration.ofSeconds(10), at.plusSeconds(11))));
  }
}
