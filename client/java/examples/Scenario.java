// The shared SDK scenario, in Java, against a real sandbox:
//
//   . .run/env && client/java/build.sh scenario
//
// Needs MR_BASE_URL, MR_KEY_ID, MR_KEY_SECRET and MR_PARTNER_REF. Onboards a
// member, settles enough for three history pages and pages them, redeems
// (and checks duplicate_request_id names the first redemption), drives the
// payout with the sandbox test helper, receives and verifies real webhooks on
// a loopback receiver (which answers 500 once to force a retry and sees the
// same webhook-id again), reads them back from the events API, replays them,
// closes the member. Exits 1 on the first mismatch.
import com.memberrewards.partner.BankAccount;
import com.memberrewards.partner.Balance;
import com.memberrewards.partner.Club;
import com.memberrewards.partner.CloseResult;
import com.memberrewards.partner.Event;
import com.memberrewards.partner.EventPage;
import com.memberrewards.partner.LedgerEntry;
import com.memberrewards.partner.ListParams;
import com.memberrewards.partner.Member;
import com.memberrewards.partner.MemberResult;
import com.memberrewards.partner.MemberRewardsClient;
import com.memberrewards.partner.MemberRewardsException;
import com.memberrewards.partner.Page;
import com.memberrewards.partner.Redemption;
import com.memberrewards.partner.RedemptionAccepted;
import com.memberrewards.partner.RedemptionRequest;
import com.memberrewards.partner.SettledRequest;
import com.memberrewards.partner.TransactionEntry;
import com.memberrewards.partner.Wallet;
import com.memberrewards.partner.Webhook;
import com.memberrewards.partner.WebhookDelivery;
import com.memberrewards.partner.WebhookEndpoint;
import com.memberrewards.partner.WebhookEndpointUpdate;
import com.memberrewards.partner.WebhookReplayResult;
import com.memberrewards.partner.WebhookVerificationException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.stream.Collectors;

public final class Scenario {
  private static final long POLL_MS = 200;

  /** A check that did not hold. */
  static final class Mismatch extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Mismatch(String what) {
      super(what);
    }
  }

  static void check(boolean condition, String what) {
    if (!condition) throw new Mismatch(what);
    System.out.println("ok - " + what);
  }

  /** Polls until {@code probe} returns non-null, or fails after {@code seconds}. */
  static <T> T until(String what, int seconds, Supplier<T> probe) throws InterruptedException {
    long deadline = System.currentTimeMillis() + seconds * 1000L;
    for (;;) {
      T got = probe.get();
      if (got != null) return got;
      if (System.currentTimeMillis() > deadline) throw new Mismatch(what + ": not within " + seconds + " s");
      Thread.sleep(POLL_MS);
    }
  }

  static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      System.err.println("scenario: " + name + " is not set (source .run/env)");
      System.exit(2);
    }
    return v;
  }

  record Delivery(String webhookId, Event event, int answered) {}

  /** A loopback webhook receiver: verifies every delivery, answers 500 to the first one of a chosen event type. */
  static final class Receiver implements AutoCloseable {
    final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
    final List<String> rejected = new CopyOnWriteArrayList<>();
    volatile List<String> secrets = List.of();
    private final String memberId;
    private final String failOnceFor;
    private boolean failedOnce;
    private final HttpServer server;
    // Its threads are not daemons: left running, an idle one keeps the JVM
    // alive for a minute after main returns (the cached pool's keep-alive).
    private final ExecutorService executor = Executors.newCachedThreadPool();

    Receiver(String memberId, String failOnceFor) throws IOException {
      this.memberId = memberId;
      this.failOnceFor = failOnceFor;
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      server.setExecutor(executor);
      server.createContext("/hooks", this::handle);
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/hooks";
    }

    private void handle(HttpExchange ex) throws IOException {
      try (ex) {
        byte[] body = ex.getRequestBody().readAllBytes();
        Event event;
        try {
          event = new Webhook(secrets).verify(body, ex.getRequestHeaders());
        } catch (WebhookVerificationException e) {
          // Only this run's member counts: other clients of the club may share the sandbox.
          if (new String(body, StandardCharsets.UTF_8).contains("\"" + memberId + "\"")) {
            rejected.add(ex.getRequestHeaders().getFirst("webhook-id") + ": " + e.getMessage());
          }
          ex.sendResponseHeaders(400, -1);
          return;
        }
        String webhookId = ex.getRequestHeaders().getFirst("webhook-id");
        int status = 200;
        boolean mine = memberId.equals(event.externalMemberId());
        synchronized (this) {
          if (mine && event.type().equals(failOnceFor) && !failedOnce) {
            failedOnce = true;
            status = 500;
          }
        }
        if (mine) deliveries.add(new Delivery(webhookId, event, status));
        byte[] answer = "{}".getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, answer.length);
        ex.getResponseBody().write(answer);
      }
    }

    List<String> idsOf(String type) {
      return deliveries.stream().filter(d -> type == null || d.event().type().equals(type)).map(Delivery::webhookId)
          .collect(Collectors.toList());
    }

    Set<String> distinctIds() {
      return new TreeSet<>(idsOf(null));
    }

    @Override
    public void close() {
      server.stop(0);
      executor.shutdownNow();
    }
  }

  public static void main(String[] args) {
    try {
      run();
      System.out.println("scenario passed");
    } catch (Mismatch e) {
      System.err.println("FAIL - " + e.getMessage());
      System.exit(1);
    } catch (MemberRewardsException e) {
      System.err.println("FAIL - " + e);
      System.exit(1);
    } catch (Exception e) {
      System.err.println("FAIL - " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  static void run() throws Exception {
    String partnerRef = env("MR_PARTNER_REF");
    MemberRewardsClient client = MemberRewardsClient.builder().baseUrl(env("MR_BASE_URL")).keyId(env("MR_KEY_ID"))
        .keySecret(env("MR_KEY_SECRET")).partnerRef(partnerRef).build();
    byte[] random = new byte[6];
    new SecureRandom().nextBytes(random);
    String run = HexFormat.of().formatHex(random);
    String memberId = "sdk-java-" + run;
    Instant startedAt = Instant.now().minusSeconds(1);

    // The club's own settings decide amounts and the minimum redemption.
    Club club = client.club().get();
    check(partnerRef.equals(club.partnerRef()), "GET /club names the key's club");
    check("sandbox".equals(club.environment()), "the club is in the sandbox");
    check(club.earnRateBasisPoints() != null && club.earnRateBasisPoints() > 0, "the club earns points");
    String currency = club.payoutCurrency() != null ? club.payoutCurrency() : "GBP";
    long minimum = club.minimumRedemptionPoints() != null ? club.minimumRedemptionPoints() : 1;

    // Where the events API stands now, so we read back only this run's events.
    String cursor = null;
    for (;;) {
      EventPage page = client.events().list(ListParams.limit(100).after(cursor));
      if (page.nextAfter() != null) cursor = page.nextAfter();
      if (page.entries().isEmpty()) break;
    }

    try (Receiver receiver = new Receiver(memberId, Event.MEMBER_CREATED)) {
      WebhookEndpoint endpoint = client.webhookEndpoints().create(receiver.url(), null, "sdk scenario " + run);
      receiver.secrets = List.of(endpoint.secret());
      check(endpoint.endpointId().startsWith("we_") && "enabled".equals(endpoint.status()), "webhook endpoint created, enabled");
      check(endpoint.secret() != null && endpoint.secret().startsWith("whsec_"), "the create answer carries the signing secret");
      try {
        flow(client, receiver, endpoint, memberId, run, currency, minimum, club.earnRateBasisPoints(), cursor, startedAt);
      } finally {
        client.webhookEndpoints().delete(endpoint.endpointId());
      }
      try {
        client.webhookEndpoints().get(endpoint.endpointId());
        check(false, "a deleted endpoint is gone");
      } catch (MemberRewardsException e) {
        check("webhook_endpoint_not_found".equals(e.code()) && e.status() == 404,
            "a deleted endpoint is webhook_endpoint_not_found");
      }
    }
  }

  static void flow(MemberRewardsClient client, Receiver receiver, WebhookEndpoint endpoint, String memberId, String run,
      String currency, long minimum, long earnRate, String cursor, Instant startedAt) throws Exception {
    // Onboard.
    MemberResult created = client.members().upsert(new Member(memberId, "Ada", "Lovelace", memberId + "@example.com",
        new Wallet("bank", "w-" + run, "active", new BankAccount("12345678", "112233", "Ada Lovelace"))));
    check(created.created() && created.payoutReady(), "member onboarded, payout-ready");

    // Five settles, each worth enough that together they pass the minimum.
    long perSettle = Math.max((minimum + 4) / 5 + 1, 20);
    long amountMinor = (perSettle * 10000 + earnRate - 1) / earnRate;
    long awarded = 0;
    for (int i = 1; i <= 5; i++) {
      Instant now = Instant.now();
      awarded += client.transactions().settled(SettledRequest.builder().eventId("evt-" + run + "-" + i).occurredAt(now)
          .externalMemberId(memberId).externalTransactionId("tx-" + run + "-" + i).merchant("m-42", "Corner Shop")
          .amountMinor(amountMinor).currency(currency).settledAt(now).build()).pointsAwarded();
    }
    check(awarded >= minimum, "five settles awarded " + awarded + " points");

    // Three pages of two, read by hand, then by the iterator.
    List<List<String>> pages = new ArrayList<>();
    Long before = null;
    for (;;) {
      Page<LedgerEntry> page = client.members().listPoints(memberId, ListParams.limit(2).filter("earned").withBefore(before));
      pages.add(page.entries().stream().map(LedgerEntry::id).collect(Collectors.toList()));
      if (page.nextBefore() == null) break;
      before = page.nextBefore();
    }
    List<String> byHand = pages.stream().flatMap(List::stream).collect(Collectors.toList());
    check(pages.size() == 3 && byHand.size() == 5, "points history: 5 awards on 3 pages of 2");
    List<String> iterated = new ArrayList<>();
    for (LedgerEntry e : client.members().iteratePoints(memberId, ListParams.limit(2).filter("earned"))) iterated.add(e.id());
    check(iterated.equals(byHand), "iteratePoints yields the same entries in the same order");
    int settledCount = 0;
    for (TransactionEntry t : client.members().iterateTransactions(memberId, ListParams.limit(2))) {
      if ("settled".equals(t.type())) settledCount++;
    }
    check(settledCount == 5, "iterateTransactions yields the 5 settled transactions");

    Balance balance = client.members().balance(memberId);
    check(balance.pointsBalance() == awarded && balance.reservedPointsBalance() == 0, "balance equals the awards");

    // Redeem; the same requestId again names the first redemption.
    String requestId = "rq-" + run;
    long points = Math.max(minimum, 1);
    RedemptionRequest redeem = new RedemptionRequest(requestId, memberId, points, currency);
    RedemptionAccepted accepted = client.redemptions().create(redeem);
    check("payout_pending".equals(accepted.status()) && accepted.balances().reservedPointsBalance() == points,
        "redemption accepted, points reserved");
    try {
      client.redemptions().create(redeem);
      check(false, "a second redemption with the same requestId is refused");
    } catch (MemberRewardsException e) {
      check("duplicate_request_id".equals(e.code()) && e.status() == 409 && accepted.redemptionId().equals(e.redemptionId()),
          "duplicate_request_id names the first redemption");
    }
    Page<Redemption> listed = client.redemptions().list(ListParams.DEFAULT.requestId(requestId));
    check(listed.entries().size() == 1 && listed.entries().get(0).redemptionId().equals(accepted.redemptionId()),
        "GET /redemptions?requestId finds it");

    // The sandbox test helper pays it out.
    Redemption paid = client.testHelpers().payout(accepted.redemptionId(), MemberRewardsClient.PayoutOutcome.SUCCEEDED, null);
    check("completed".equals(paid.status()) && "succeeded".equals(paid.payout().status()),
        "test helper: payout succeeded, redemption completed");
    Balance after = client.members().balance(memberId);
    check(after.reservedPointsBalance() == 0 && after.lifetimePointsRedeemed() == points, "the reserved points are burned");
    check("completed".equals(client.redemptions().get(accepted.redemptionId()).status()), "GET /redemptions/{id} shows it completed");

    // Webhooks: every event of this member arrives verified; the one answered
    // 500 comes again with the same webhook-id.
    List<String> expected = new ArrayList<>(List.of(Event.MEMBER_CREATED, Event.TRANSACTION_SETTLED, Event.TRANSACTION_SETTLED,
        Event.TRANSACTION_SETTLED, Event.TRANSACTION_SETTLED, Event.TRANSACTION_SETTLED, Event.REDEMPTION_CREATED,
        Event.REDEMPTION_COMPLETED));
    until("webhooks for every event of the member", 60, () -> receiver.distinctIds().size() >= expected.size() ? true : null);
    check(receiver.rejected.isEmpty(), "every delivery verified " + receiver.rejected);
    Map<String, Event> byId = new LinkedHashMap<>();
    for (Delivery d : receiver.deliveries) byId.putIfAbsent(d.webhookId(), d.event());
    List<String> types = byId.values().stream().map(Event::type).sorted().collect(Collectors.toList());
    check(types.equals(expected.stream().sorted().collect(Collectors.toList())), "one webhook per event, of the expected types");
    List<Long> seqs = byId.values().stream().map(Event::memberSequence).sorted().collect(Collectors.toList());
    boolean noGap = true;
    for (int i = 1; i < seqs.size(); i++) noGap &= seqs.get(i) == seqs.get(0) + i;
    check(noGap, "memberSequence has no gap");

    List<String> retried = until("the 500-answered webhook delivered again", 90, () -> {
      List<String> ids = receiver.idsOf(Event.MEMBER_CREATED);
      return ids.size() >= 2 ? ids : null;
    });
    check(retried.get(0).equals(retried.get(1)), "the retry carries the same webhook-id");
    List<Delivery> forced = receiver.deliveries.stream().filter(d -> d.webhookId().equals(retried.get(0)))
        .collect(Collectors.toList());
    check(forced.get(0).answered() == 500 && forced.get(1).answered() == 200, "first attempt answered 500, the retry 200");
    List<Integer> attempts = until("both attempts in the deliveries log", 30, () -> {
      List<Integer> seen = new ArrayList<>();
      for (WebhookDelivery d : client.webhookEndpoints().iterateDeliveries(endpoint.endpointId(), ListParams.limit(50))) {
        if (d.eventId().equals(retried.get(0))) seen.add(d.status());
      }
      return seen.contains(500) && seen.contains(200) ? seen : null;
    });
    check(attempts.size() >= 2, "GET deliveries lists the failed attempt and the retry");

    // The events API has the same events.
    String from = cursor;
    List<Event> fromApi = until("events listed by the API", 30, () -> {
      List<Event> mine = new ArrayList<>();
      for (Event e : client.events().iterate(ListParams.limit(100).after(from))) {
        if (memberId.equals(e.externalMemberId())) mine.add(e);
      }
      return mine.size() >= expected.size() ? mine : null;
    });
    check(fromApi.stream().map(Event::id).collect(Collectors.toCollection(TreeSet::new)).equals(receiver.distinctIds()),
        "GET /events lists exactly the events the webhooks brought");

    // Endpoint management.
    WebhookEndpoint got = client.webhookEndpoints().get(endpoint.endpointId());
    check(got.url().equals(endpoint.url()) && got.secret() == null, "GET endpoint has no secret");
    check(client.webhookEndpoints().list().stream().anyMatch(e -> e.endpointId().equals(endpoint.endpointId())),
        "the list has the endpoint");
    WebhookEndpoint updated = client.webhookEndpoints().update(endpoint.endpointId(),
        WebhookEndpointUpdate.none().withDescription("renamed " + run));
    check(("renamed " + run).equals(updated.description()), "update changes the description");
    WebhookEndpoint rotated = client.webhookEndpoints().rotateSecret(endpoint.endpointId());
    check(rotated.secret() != null && rotated.secret().startsWith("whsec_") && !rotated.secret().equals(endpoint.secret()),
        "rotate-secret gives a new secret");
    receiver.secrets = List.of(rotated.secret()); // the old one signs beside it: the new one alone must verify

    // Replay since the start: every event comes again, signed with both secrets.
    int seenBefore = receiver.deliveries.size();
    WebhookReplayResult replay = client.webhookEndpoints().replay(endpoint.endpointId(), startedAt);
    check(replay.replayed() >= expected.size(), "replay queued " + replay.replayed() + " events");
    until("the replayed events", 60, () -> receiver.deliveries.size() - seenBefore >= expected.size() ? true : null);
    check(receiver.rejected.isEmpty(), "replayed deliveries verify with the new secret alone");

    // Close the member: the rest of the balance is forfeited.
    CloseResult closed = client.members().close(memberId, "sdk scenario");
    check("closed".equals(closed.status()) && closed.pointsForfeited() == awarded - points, "member closed, the rest forfeited");
  }
}
