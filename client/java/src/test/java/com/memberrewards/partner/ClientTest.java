package com.memberrewards.partner;

import static com.memberrewards.partner.StubServer.expectedSignature;
import static com.memberrewards.partner.StubServer.fail;
import static com.memberrewards.partner.StubServer.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The client against a local stub server: what it sends and how it retries. */
class ClientTest {
  static final String SECRET = "fJ3kq9V0s7bX2mN8pL4tR6wY1zC5dH0gA9eK3uQ7iOs";
  static final Member MEMBER = new Member("m-1", "Ada", "Lovelace", "ada@example.com");
  static final String MEMBER_DATA = "{\"externalMemberId\":\"m-1\",\"status\":\"created\",\"payoutReady\":false}";

  static MemberRewardsClient.Builder client(StubServer s) {
    return MemberRewardsClient.builder().baseUrl(s.baseUrl()).keyId("mrk_sbx_test").keySecret(SECRET)
        .partnerRef("sandbox-club").retryDelays(Duration.ofMillis(5), Duration.ofMillis(20));
  }

  /** Answers in turn; the last one for every later request. */
  static StubServer.Handler inTurn(StubServer.Handler... answers) {
    return (r, ex, i) -> answers[Math.min(i, answers.length - 1)].handle(r, ex, i);
  }

  @Test
  void aPostIsSignedOverTheBytesSentWithPartnerRefContentTypeAndAKey() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 201, MEMBER_DATA))) {
      MemberResult result = client(s).build().members().upsert(MEMBER.withWallet(
          new Wallet("bank", null, "active", new BankAccount("12345678", "112233", "Ada Lovelace"))));
      assertEquals(new MemberResult("m-1", "created", false, false), result);
      assertTrue(result.created());
      StubServer.Recorded r = s.requests.get(0);
      assertEquals("POST", r.method());
      assertEquals("/api/v1/members", r.rawUri());
      assertEquals("{\"partnerRef\":\"sandbox-club\",\"member\":{\"externalMemberId\":\"m-1\",\"firstName\":\"Ada\","
          + "\"lastName\":\"Lovelace\",\"email\":\"ada@example.com\",\"wallet\":{\"provider\":\"bank\",\"status\":\"active\","
          + "\"bankAccount\":{\"accountNumber\":\"12345678\",\"sortCode\":\"112233\",\"name\":\"Ada Lovelace\"}}}}", r.body());
      assertEquals("mrk_sbx_test", r.header("X-MR-Key-Id"));
      assertEquals(expectedSignature(SECRET, r), r.header("X-MR-Signature"));
      assertTrue(r.header("X-MR-Timestamp").matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"));
      assertEquals("application/json", r.header("Content-Type"));
      assertTrue(r.header("X-MR-Idempotency-Key").matches("[!-~]{1,255}"));
    }
  }

  @Test
  void everyCallGetsItsOwnKeyAndAGivenOneIsUsedAsIs() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 200, MEMBER_DATA))) {
      MemberRewardsClient c = client(s).build();
      c.members().upsert(MEMBER);
      c.members().upsert(MEMBER);
      c.members().upsert(MEMBER, RequestOptions.idempotencyKey("my-key-1"));
      assertNotEquals(s.requests.get(0).header("X-MR-Idempotency-Key"), s.requests.get(1).header("X-MR-Idempotency-Key"));
      assertEquals("my-key-1", s.requests.get(2).header("X-MR-Idempotency-Key"));
    }
  }

  @Test
  void aGetSignsThePathWithoutTheQueryAndIdsArePercentEncoded() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 200, "{\"entries\":[],\"nextBefore\":null}"))) {
      client(s).build().members().listPoints("a/b c", ListParams.limit(10).filter("earned").withBefore(1795353757172L));
      StubServer.Recorded r = s.requests.get(0);
      assertEquals("GET", r.method());
      assertEquals("/api/v1/members/a%2Fb%20c/points?filter=earned&limit=10&before=1795353757172", r.rawUri());
      assertEquals(expectedSignature(SECRET, r), r.header("X-MR-Signature"));
      assertNull(r.header("X-MR-Idempotency-Key"));
      assertEquals("", r.body());
    }
  }

  @Test
  void aReplayedAnswerSaysSo() throws Exception {
    try (StubServer s = new StubServer(inTurn((r, ex, i) -> ok(ex, 201, MEMBER_DATA), (r, ex, i) -> {
      ex.getResponseHeaders().set("X-MR-Idempotent-Replay", "true");
      ok(ex, 201, MEMBER_DATA);
    }))) {
      MemberRewardsClient c = client(s).build();
      RequestOptions key = RequestOptions.idempotencyKey("k-1");
      assertFalse(c.members().upsert(MEMBER, key).idempotentReplay());
      MemberResult again = c.members().upsert(MEMBER, key);
      assertTrue(again.idempotentReplay());
      assertEquals("created", again.status());
    }
  }

  @Test
  void idsTheApiCannotTakeAreRefusedBeforeSending() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 200, "{}"))) {
      MemberRewardsClient c = client(s).build();
      assertThrows(IllegalArgumentException.class, () -> c.members().balance(".."));
      assertThrows(IllegalArgumentException.class, () -> c.members().balance(""));
      for (String bad : List.of("x".repeat(129), "tab\there", "caf\u00e9")) {
        assertThrows(IllegalArgumentException.class, () -> c.members().balance(bad));
        assertThrows(IllegalArgumentException.class,
            () -> c.testHelpers().payout(bad, MemberRewardsClient.PayoutOutcome.SUCCEEDED, null));
      }
      assertEquals(0, s.requests.size());
    }
  }

  @Test
  void retriesServiceUnavailableRateLimitedAndInProgressWithTheSameKeyAndBody() throws Exception {
    try (StubServer s = new StubServer(inTurn(
        (r, ex, i) -> fail(ex, 503, "service_unavailable", "", "Retry-After", "0"),
        (r, ex, i) -> fail(ex, 429, "rate_limited", "", "Retry-After", "0"),
        (r, ex, i) -> fail(ex, 409, "idempotency_in_progress", ""),
        (r, ex, i) -> ok(ex, 202, "{\"redemptionId\":\"rdm_1\",\"status\":\"payout_pending\",\"externalMemberId\":\"m-1\","
            + "\"pointsRedeemed\":100,\"cashValueMinor\":100,\"currency\":\"GBP\",\"payout\":{\"payoutId\":\"po_1\","
            + "\"status\":\"created\"},\"balances\":{\"pointsBalance\":0,\"reservedPointsBalance\":100}}")))) {
      RedemptionAccepted a = client(s).build().redemptions().create(new RedemptionRequest("rq-1", "m-1", 100, "GBP"));
      assertEquals("rdm_1", a.redemptionId());
      assertEquals(new Payout("po_1", "created", null), a.payout());
      assertEquals(4, s.requests.size());
      Set<String> keys = s.requests.stream().map(r -> r.header("X-MR-Idempotency-Key")).collect(Collectors.toSet());
      assertEquals(1, keys.size());
      assertEquals(1, s.requests.stream().map(StubServer.Recorded::body).collect(Collectors.toSet()).size());
      for (StubServer.Recorded r : s.requests) assertEquals(expectedSignature(SECRET, r), r.header("X-MR-Signature"));
    }
  }

  @Test
  void retryAfterIsHonoured() throws Exception {
    try (StubServer s = new StubServer(inTurn(
        (r, ex, i) -> fail(ex, 409, "idempotency_in_progress", "", "Retry-After", "1"),
        (r, ex, i) -> ok(ex, 201, MEMBER_DATA)))) {
      client(s).build().members().upsert(MEMBER);
      long waited = s.requests.get(1).receivedAtMillis() - s.requests.get(0).receivedAtMillis();
      assertTrue(waited >= 990, "waited " + waited + " ms, Retry-After said 1 s");
    }
  }

  @Test
  void aRetryAfterBeyondTheLimitIsNotWaitedFor() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> fail(ex, 503, "service_unavailable", "", "Retry-After", "120"))) {
      MemberRewardsException e = assertThrows(MemberRewardsException.class, () -> client(s).build().members().balance("m-1"));
      assertEquals("service_unavailable", e.code());
      assertEquals(120L, e.retryAfterSeconds());
      assertEquals(1, s.requests.size());
    }
  }

  @Test
  void retriesStopAfterMaxRetries() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> fail(ex, 503, "service_unavailable", "", "Retry-After", "0"))) {
      MemberRewardsException e = assertThrows(MemberRewardsException.class,
          () -> client(s).maxRetries(2).build().members().balance("m-1"));
      assertEquals(503, e.status());
      assertEquals(3, s.requests.size());
    }
  }

  @Test
  void backoffGrowsExponentiallyWithJitter() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> fail(ex, 503, "service_unavailable", ""))) {
      assertThrows(MemberRewardsException.class, () -> client(s).maxRetries(3)
          .retryDelays(Duration.ofMillis(40), Duration.ofSeconds(1)).build().members().balance("m-1"));
      assertEquals(4, s.requests.size());
      long[] gaps = new long[3];
      for (int i = 0; i < 3; i++) gaps[i] = s.requests.get(i + 1).receivedAtMillis() - s.requests.get(i).receivedAtMillis();
      // Steps of 40, 80 and 160 ms, each jittered into [half, full]: the
      // floors double (a busy machine only makes gaps longer), and the third
      // is above the first step's ceiling.
      String all = gaps[0] + ", " + gaps[1] + ", " + gaps[2];
      assertTrue(gaps[0] >= 19 && gaps[1] >= 39 && gaps[2] >= 79, "gaps " + all);
    }
  }

  @Test
  void businessErrorsAreNotRetriedAndCarryTheirFields() throws Exception {
    try (StubServer s = new StubServer(inTurn(
        (r, ex, i) -> fail(ex, 400, "invalid_request", "\"details\":[{\"field\":\"member.email\",\"problem\":\"must contain one @\"}]"),
        (r, ex, i) -> fail(ex, 409, "duplicate_request_id", "\"redemptionId\":\"rdm_first\""),
        (r, ex, i) -> fail(ex, 422, "insufficient_points_balance", "")))) {
      MemberRewardsClient c = client(s).build();
      MemberRewardsException e1 = assertThrows(MemberRewardsException.class, () -> c.members().upsert(MEMBER));
      assertEquals("invalid_request", e1.code());
      assertEquals(400, e1.status());
      assertEquals("rid-invalid_request", e1.requestId());
      assertEquals(List.of(new MemberRewardsException.ErrorDetail("member.email", "must contain one @")), e1.details());
      assertEquals(s.requests.get(0).header("X-MR-Idempotency-Key"), e1.idempotencyKey());
      RedemptionRequest rq = new RedemptionRequest("rq-1", "m-1", 100, "GBP");
      MemberRewardsException e2 = assertThrows(MemberRewardsException.class, () -> c.redemptions().create(rq));
      assertEquals("duplicate_request_id", e2.code());
      assertTrue(e2.is(ErrorCode.DUPLICATE_REQUEST_ID));
      assertEquals(ErrorCode.DUPLICATE_REQUEST_ID, e2.errorCode());
      assertNull(ErrorCode.of("a_code_newer_than_this_sdk"));
      assertEquals("rdm_first", e2.redemptionId());
      assertEquals(409, e2.status());
      MemberRewardsException e3 = assertThrows(MemberRewardsException.class, () -> c.redemptions().create(rq));
      assertEquals("insufficient_points_balance", e3.code());
      assertEquals(422, e3.status());
      assertEquals(3, s.requests.size());
    }
  }

  @Test
  void aDroppedConnectionIsRetriedWithTheSameKey() throws Exception {
    try (StubServer s = new StubServer(inTurn(
        (r, ex, i) -> {
          ex.sendResponseHeaders(200, 1000); // promise 1000 bytes, send none, close: a broken answer
        },
        (r, ex, i) -> ok(ex, 201, MEMBER_DATA)))) {
      client(s).build().members().upsert(MEMBER);
      assertEquals(2, s.requests.size());
      assertEquals(s.requests.get(0).header("X-MR-Idempotency-Key"), s.requests.get(1).header("X-MR-Idempotency-Key"));
    }
  }

  @Test
  void aTimeoutIsRetriedAndWithoutRetriesIsATimeoutError() throws Exception {
    StubServer.Handler slow = (r, ex, i) -> {
      try {
        Thread.sleep(600);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      try {
        ok(ex, 200, "{}");
      } catch (IOException ignored) {
        // the client has gone
      }
    };
    String balance = "{\"externalMemberId\":\"m-1\",\"memberStatus\":\"active\",\"pointsBalance\":1,\"reservedPointsBalance\":0,"
        + "\"lifetimePointsEarned\":1,\"lifetimePointsRedeemed\":0,\"currency\":\"GBP\",\"cashValueMinor\":1}";
    try (StubServer s = new StubServer(inTurn(slow, (r, ex, i) -> ok(ex, 200, balance)))) {
      Balance b = client(s).timeout(Duration.ofMillis(150)).build().members().balance("m-1");
      assertEquals("active", b.memberStatus());
      assertEquals(2, s.requests.size());
    }
    try (StubServer s = new StubServer(slow)) {
      MemberRewardsException e = assertThrows(MemberRewardsException.class,
          () -> client(s).timeout(Duration.ofMillis(150)).maxRetries(0).build().members().balance("m-1"));
      assertInstanceOf(MemberRewardsConnectionException.class, e);
      assertEquals("timeout", e.code());
      assertEquals(0, e.status());
    }
  }

  @Test
  void aRefusedConnectionEndsInConnectionError() throws Exception {
    String base;
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 200, "{}"))) {
      base = s.baseUrl();
    }
    MemberRewardsClient c = MemberRewardsClient.builder().baseUrl(base).keyId("k").keySecret("s").partnerRef("p")
        .maxRetries(2).retryDelays(Duration.ofMillis(1), Duration.ofMillis(2)).build();
    MemberRewardsException e = assertThrows(MemberRewardsException.class, () -> c.members().balance("m-1"));
    assertEquals("connection_error", e.code());
    assertEquals(0, e.status());
  }

  @Test
  void anAnswerThatIsNotTheApisJsonIsInvalidResponse() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> {
      byte[] html = "<html>bad gateway</html>".getBytes();
      ex.getResponseHeaders().set("Content-Type", "text/html");
      ex.sendResponseHeaders(502, html.length);
      ex.getResponseBody().write(html);
    })) {
      MemberRewardsException e = assertThrows(MemberRewardsException.class, () -> client(s).build().members().balance("m-1"));
      assertEquals("invalid_response", e.code());
      assertEquals(502, e.status());
      assertEquals(1, s.requests.size());
    }
  }

  @Test
  void anInterruptedWaitStopsTheCall() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> fail(ex, 503, "service_unavailable", "", "Retry-After", "30"))) {
      MemberRewardsClient c = client(s).build();
      Thread caller = Thread.currentThread();
      Thread interrupter = new Thread(() -> {
        try {
          Thread.sleep(100);
        } catch (InterruptedException ignored) {
          return;
        }
        caller.interrupt();
      });
      interrupter.start();
      long started = System.currentTimeMillis();
      MemberRewardsException e = assertThrows(MemberRewardsException.class, () -> c.members().balance("m-1"));
      assertEquals("interrupted", e.code());
      assertTrue(Thread.interrupted()); // the flag is kept for the caller (and cleared here)
      assertTrue(System.currentTimeMillis() - started < 5000);
      interrupter.join();
    }
  }

  @Test
  void everyEndpointGoesToItsDocumentedMethodAndPath() throws Exception {
    String redemption = "{\"redemptionId\":\"rdm_1\",\"requestId\":\"r\",\"status\":\"completed\",\"externalMemberId\":\"m-1\","
        + "\"pointsRedeemed\":1,\"cashValueMinor\":1,\"currency\":\"GBP\",\"payout\":{\"payoutId\":\"po_1\",\"status\":\"succeeded\","
        + "\"failureReason\":null},\"createdAt\":\"2026-11-22T13:22:42.177Z\",\"updatedAt\":\"2026-11-22T13:22:46.686Z\"}";
    String endpoint = "{\"endpointId\":\"we_1\",\"url\":\"http://127.0.0.1:1/h\",\"eventTypes\":[],\"description\":null,"
        + "\"status\":\"enabled\",\"disabledReason\":null,\"secret\":\"whsec_AAAA\",\"createdAt\":\"2026-11-22T13:22:42.177Z\"}";
    Map<String, String> data = Map.ofEntries(
        Map.entry("POST /api/v1/members", MEMBER_DATA),
        Map.entry("POST /api/v1/members/m-1/close", "{\"externalMemberId\":\"m-1\",\"status\":\"closed\",\"closedAt\":\"2026-11-22T13:23:02.653Z\",\"pointsForfeited\":3}"),
        Map.entry("POST /api/v1/transactions/settled", "{\"eventId\":\"e\",\"status\":\"processed\",\"externalTransactionId\":\"t\",\"pointsAwarded\":1,\"balances\":{\"pointsBalance\":1,\"reservedPointsBalance\":0},\"partner\":{\"availablePointsPool\":9},\"ledgerGroupId\":\"settled:1:t\"}"),
        Map.entry("POST /api/v1/transactions/reversed", "{\"eventId\":\"e2\",\"status\":\"processed\",\"externalTransactionId\":\"t\",\"pointsReversed\":1,\"balances\":{\"pointsBalance\":0,\"reservedPointsBalance\":0}}"),
        Map.entry("GET /api/v1/members/m-1/balance", "{\"externalMemberId\":\"m-1\",\"memberStatus\":\"active\",\"pointsBalance\":1,\"reservedPointsBalance\":0,\"lifetimePointsEarned\":1,\"lifetimePointsRedeemed\":0,\"currency\":null,\"cashValueMinor\":1}"),
        Map.entry("GET /api/v1/members/m-1/points", "{\"entries\":[],\"nextBefore\":null}"),
        Map.entry("GET /api/v1/members/m-1/transactions?limit=5", "{\"entries\":[],\"nextBefore\":null}"),
        Map.entry("POST /api/v1/redemptions", "{\"redemptionId\":\"rdm_1\",\"status\":\"payout_pending\",\"externalMemberId\":\"m-1\",\"pointsRedeemed\":1,\"cashValueMinor\":1,\"currency\":\"GBP\",\"payout\":{\"payoutId\":\"po_1\",\"status\":\"created\"},\"balances\":{\"pointsBalance\":0,\"reservedPointsBalance\":1}}"),
        Map.entry("GET /api/v1/redemptions/rdm_1", redemption),
        Map.entry("GET /api/v1/redemptions?requestId=r%201&status=completed", "{\"entries\":[" + redemption + "],\"nextBefore\":null}"),
        Map.entry("GET /api/v1/club", "{\"partnerRef\":\"sandbox-club\",\"name\":\"Sandbox Club\",\"environment\":\"sandbox\",\"earnRateBasisPoints\":100,\"redemptionRateMinorPerPoint\":1,\"payoutCurrency\":\"GBP\",\"supportedCurrencies\":[\"GBP\",\"EUR\"],\"minimumRedemptionPoints\":null,\"availablePointsPool\":5}"),
        Map.entry("GET /api/v1/events?limit=100&types=member.created,transaction.settled", "{\"entries\":[],\"nextAfter\":\"cur_1\"}"),
        Map.entry("POST /api/v1/webhook-endpoints", endpoint),
        Map.entry("GET /api/v1/webhook-endpoints", "{\"entries\":[" + endpoint.replace(",\"secret\":\"whsec_AAAA\"", "") + "]}"),
        Map.entry("GET /api/v1/webhook-endpoints/we_1", endpoint.replace(",\"secret\":\"whsec_AAAA\"", "")),
        Map.entry("POST /api/v1/webhook-endpoints/we_1", endpoint.replace(",\"secret\":\"whsec_AAAA\"", "")),
        Map.entry("POST /api/v1/webhook-endpoints/we_1/rotate-secret", endpoint),
        Map.entry("POST /api/v1/webhook-endpoints/we_1/delete", "{\"endpointId\":\"we_1\",\"deleted\":true}"),
        Map.entry("GET /api/v1/webhook-endpoints/we_1/deliveries?limit=3", "{\"entries\":[{\"eventId\":\"evt_1\",\"attempt\":1,\"status\":null,\"error\":\"connection refused\",\"durationMs\":3,\"attemptedAt\":\"2026-11-22T13:22:42.177Z\"}],\"nextBefore\":null}"),
        Map.entry("POST /api/v1/webhook-endpoints/we_1/replay", "{\"endpointId\":\"we_1\",\"replayed\":4}"),
        Map.entry("POST /api/v1/test-helpers/redemptions/rdm_1/payout", redemption));
    try (StubServer s = new StubServer((r, ex, i) -> {
      String d = data.get(r.method() + " " + r.rawUri());
      if (d == null) fail(ex, 404, "not_found", "");
      else ok(ex, 200, d);
    })) {
      MemberRewardsClient c = client(s).maxRetries(0).build();
      Instant t = Instant.parse("2026-11-20T10:00:00Z");
      c.members().upsert(MEMBER);
      assertEquals(3, c.members().close("m-1", "asked").pointsForfeited());
      SettledResult settled = c.transactions().settled(SettledRequest.builder().eventId("e").occurredAt(t).externalMemberId("m-1")
          .externalTransactionId("t").merchant("x", "X").amountMinor(1).currency("GBP").settledAt(t).build());
      assertEquals(9L, settled.availablePointsPool());
      ReversedResult reversed = c.transactions().reversed(new ReversedRequest("e2", t, "m-1", "t", null, "GBP", null));
      assertNull(reversed.availablePointsPool());
      assertNull(c.members().balance("m-1").currency());
      c.members().listPoints("m-1", null);
      c.members().listTransactions("m-1", ListParams.limit(5));
      c.redemptions().create(new RedemptionRequest("r", "m-1", 1, "GBP"));
      assertEquals("po_1", c.redemptions().get("rdm_1").payout().payoutId());
      assertEquals(1, c.redemptions().list(ListParams.DEFAULT.status("completed").requestId("r 1")).entries().size());
      Club club = c.club().get();
      assertEquals(List.of("GBP", "EUR"), club.supportedCurrencies());
      assertNull(club.minimumRedemptionPoints());
      assertEquals("cur_1", c.events().list(ListParams.limit(100).types(List.of("member.created", "transaction.settled"))).nextAfter());
      assertEquals("whsec_AAAA", c.webhookEndpoints().create("http://127.0.0.1:1/h", null, null).secret());
      assertNull(c.webhookEndpoints().list().get(0).secret());
      c.webhookEndpoints().get("we_1");
      c.webhookEndpoints().update("we_1", WebhookEndpointUpdate.none().withStatus("disabled"));
      c.webhookEndpoints().rotateSecret("we_1");
      assertTrue(c.webhookEndpoints().delete("we_1").getBoolean("deleted"));
      WebhookDelivery d = c.webhookEndpoints().listDeliveries("we_1", ListParams.limit(3)).entries().get(0);
      assertNull(d.status());
      assertEquals(4, c.webhookEndpoints().replay("we_1", Instant.parse("2026-11-26T00:00:00Z")).replayed());
      assertEquals("completed", c.testHelpers().payout("rdm_1", MemberRewardsClient.PayoutOutcome.FAILED, "closed").status());

      List<String> sent = s.requests.stream().map(r -> r.method() + " " + r.rawUri()).collect(Collectors.toList());
      assertEquals(new HashSet<>(data.keySet()), new HashSet<>(sent));
      assertEquals(data.size(), sent.size());
      for (StubServer.Recorded r : s.requests) {
        assertEquals(expectedSignature(SECRET, r), r.header("X-MR-Signature"), r.rawUri());
        if (r.method().equals("POST")) assertEquals("sandbox-club", Json.parseObject(r.body()).getString("partnerRef"));
      }
      assertEquals("{\"partnerRef\":\"sandbox-club\",\"reason\":\"asked\"}", s.requests.get(1).body());
      assertEquals("{\"partnerRef\":\"sandbox-club\",\"eventId\":\"e\",\"occurredAt\":\"2026-11-20T10:00:00.000Z\","
          + "\"member\":{\"externalMemberId\":\"m-1\"},\"transaction\":{\"externalTransactionId\":\"t\",\"merchantId\":\"x\","
          + "\"merchantName\":\"X\",\"amountMinor\":1,\"currency\":\"GBP\",\"settledAt\":\"2026-11-20T10:00:00.000Z\"}}",
          s.requests.get(2).body());
      assertEquals("{\"partnerRef\":\"sandbox-club\",\"since\":\"2026-11-26T00:00:00.000Z\"}", s.requests.get(19).body());
      assertEquals("{\"partnerRef\":\"sandbox-club\",\"outcome\":\"failed\",\"failureReason\":\"closed\"}", s.requests.get(20).body());
    }
  }

  @Test
  void unexpectedDataShapeIsInvalidResponse() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 200, "{\"externalMemberId\":\"m-1\"}"))) {
      MemberRewardsException e = assertThrows(MemberRewardsException.class, () -> client(s).build().members().balance("m-1"));
      assertEquals("invalid_response", e.code());
      assertEquals(200, e.status());
    }
  }
}
