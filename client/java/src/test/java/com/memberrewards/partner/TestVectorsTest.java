package com.memberrewards.partner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Signing and Standard Webhooks against client/test-vectors.json, computed with openssl, shared by every SDK. */
class TestVectorsTest {
  static JsonObject vectors() throws IOException {
    Path path = Path.of(System.getProperty("mr.testVectors", "../test-vectors.json"));
    return Json.parseObject(Files.readString(path, StandardCharsets.UTF_8));
  }

  static List<JsonObject> list(String section) throws IOException {
    return vectors().getObject(section).getList("vectors", o -> o);
  }

  @Test
  void theFileHasVectorsOfEveryKind() throws IOException {
    assertTrue(list("requestSigning").size() >= 2);
    assertTrue(list("webhookSigning").size() >= 1);
    assertTrue(list("webhookVerify").size() >= 10);
    assertEquals(300, vectors().getObject("webhookVerify").getLong("defaultToleranceSeconds"));
    assertEquals(Duration.ofSeconds(300), Webhook.DEFAULT_TOLERANCE);
  }

  @TestFactory
  Stream<DynamicTest> requestSigning() throws IOException {
    return list("requestSigning").stream().map(v -> dynamicTest(v.getString("name"), () -> {
      byte[] body = v.getString("body").getBytes(StandardCharsets.UTF_8);
      assertEquals(v.getString("bodySha256"), Signing.sha256Hex(body));
      assertEquals(v.getString("canonical"),
          Signing.canonicalString(v.getString("timestamp"), v.getString("method"), v.getString("pathAndQuery"), body));
      assertEquals(v.getString("signature"),
          Signing.sign(v.getString("secret"), v.getString("timestamp"), v.getString("method"), v.getString("pathAndQuery"), body));
      assertEquals(v.getString("signature"),
          Signing.sign(v.getString("secret"), v.getString("timestamp"), v.getString("method"), v.getString("pathAndQuery"),
              v.getString("body")));
    }));
  }

  @Test
  void emptyBodyHashIsTheDocumentedConstant() {
    assertEquals(Signing.EMPTY_BODY_SHA256, Signing.sha256Hex(new byte[0]));
  }

  @TestFactory
  Stream<DynamicTest> webhookSigning() throws IOException {
    return list("webhookSigning").stream().map(v -> dynamicTest(v.getString("name"), () -> assertEquals(
        v.getString("signature"),
        new Webhook(v.getString("secret")).sign(v.getString("msgId"), v.getLong("timestamp"),
            v.getString("body").getBytes(StandardCharsets.UTF_8)))));
  }

  @TestFactory
  Stream<DynamicTest> webhookVerify() throws IOException {
    long defaultTolerance = vectors().getObject("webhookVerify").getLong("defaultToleranceSeconds");
    return list("webhookVerify").stream().map(v -> dynamicTest(v.getString("name") + " -> " + v.getString("expect"), () -> {
      List<String> secrets = v.getStrings("secrets");
      Map<String, Object> headers = v.getObject("headers").asMap();
      byte[] body = v.getString("body").getBytes(StandardCharsets.UTF_8);
      Duration tolerance = Duration.ofSeconds(v.has("toleranceSeconds") ? v.getLong("toleranceSeconds") : defaultTolerance);
      Instant now = Instant.ofEpochSecond(v.getLong("now"));
      Webhook webhook = new Webhook(secrets, tolerance);
      if (v.getString("expect").equals("valid")) {
        webhook.verifySignature(body, Webhook.lookup(headers), now);
        if (v.has("eventId")) { // an event body: the full verify parses it too
          Event e = webhook.verify(body, Webhook.lookup(headers), now);
          assertEquals(v.getString("eventId"), e.id());
          assertEquals(v.getString("eventType"), e.type());
        }
      } else {
        WebhookVerificationException s = assertThrows(WebhookVerificationException.class,
            () -> webhook.verifySignature(body, Webhook.lookup(headers), now));
        assertEquals(v.getString("expect"), s.reason().code());
        WebhookVerificationException e = assertThrows(WebhookVerificationException.class,
            () -> webhook.verify(body, Webhook.lookup(headers), now));
        assertEquals(v.getString("expect"), e.reason().code());
      }
    }));
  }

  @Test
  void specExampleWithARealClockIsExpired() throws Exception {
    List<JsonObject> all = new ArrayList<>(list("webhookVerify"));
    JsonObject v = all.get(0);
    WebhookVerificationException e = assertThrows(WebhookVerificationException.class, () -> new Webhook(
        v.getStrings("secrets")).verify(v.getString("body").getBytes(StandardCharsets.UTF_8), v.getObject("headers").asMap()));
    assertEquals(WebhookVerificationException.Reason.TIMESTAMP_OUT_OF_TOLERANCE, e.reason());
  }
}
