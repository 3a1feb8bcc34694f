package com.memberrewards.partner;

import static com.memberrewards.partner.StubServer.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The iterators page for the caller: nextBefore until null, nextAfter until an empty page. */
class PaginationTest {
  static Map<String, String> query(String rawUri) {
    Map<String, String> q = new HashMap<>();
    String raw = URI.create("http://x" + rawUri).getRawQuery();
    if (raw != null) {
      for (String p : raw.split("&")) q.put(p.substring(0, p.indexOf('=')), p.substring(p.indexOf('=') + 1));
    }
    return q;
  }

  /** Seven entries, createdAt ms 1007 (newest) .. 1001; nextBefore null when nothing older is left. */
  static String historyPage(String rawUri, String entryTemplate) {
    Map<String, String> q = query(rawUri);
    int limit = Integer.parseInt(q.getOrDefault("limit", "50"));
    long before = Long.parseLong(q.getOrDefault("before", String.valueOf(Long.MAX_VALUE)));
    List<Long> older = new ArrayList<>();
    for (long ms = 1007; ms >= 1001; ms--) if (ms < before) older.add(ms);
    List<Long> page = older.subList(0, Math.min(limit, older.size()));
    String next = older.size() > page.size() ? String.valueOf(page.get(page.size() - 1)) : "null";
    String entries = page.stream().map(ms -> entryTemplate.replace("MS", String.valueOf(ms))).collect(Collectors.joining(","));
    return "{\"entries\":[" + entries + "],\"nextBefore\":" + next + "}";
  }

  static final String LEDGER = "{\"id\":\"le_MS\",\"entryType\":\"earn_award\",\"description\":\"d\",\"pointsDelta\":1,"
      + "\"pointsDeltaAvailable\":1,\"pointsDeltaReserved\":0,\"cashValueMinor\":null,\"currency\":\"GBP\","
      + "\"createdAt\":\"2026-11-22T13:22:37.172Z\",\"merchantName\":\"M\",\"merchantId\":\"m\",\"externalTransactionId\":\"t\","
      + "\"ledgerGroupId\":\"1:t\"}";

  static MemberRewardsClient client(StubServer s) {
    return MemberRewardsClient.builder().baseUrl(s.baseUrl()).keyId("k").keySecret("s").partnerRef("p").build();
  }

  @Test
  void iteratePointsWalksEveryPageAndStopsAtNull() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 200, historyPage(r.rawUri(), LEDGER)))) {
      List<String> ids = new ArrayList<>();
      for (LedgerEntry e : client(s).members().iteratePoints("m-1", ListParams.limit(3).filter("earned"))) ids.add(e.id());
      assertEquals(List.of("le_1007", "le_1006", "le_1005", "le_1004", "le_1003", "le_1002", "le_1001"), ids);
      assertEquals(List.of(
          "/api/v1/members/m-1/points?filter=earned&limit=3",
          "/api/v1/members/m-1/points?filter=earned&limit=3&before=1005",
          "/api/v1/members/m-1/points?filter=earned&limit=3&before=1002"),
          s.requests.stream().map(StubServer.Recorded::rawUri).collect(Collectors.toList()));
    }
  }

  @Test
  void aPageWithTheLastEntriesEndsWithoutAnEmptyPage() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 200, historyPage(r.rawUri(), LEDGER)))) {
      int n = 0;
      for (LedgerEntry ignored : client(s).members().iteratePoints("m-1", ListParams.limit(7))) n++;
      assertEquals(7, n);
      assertEquals(1, s.requests.size());
    }
  }

  @Test
  void stoppingEarlyFetchesNoMore() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> ok(ex, 200, historyPage(r.rawUri(), LEDGER)))) {
      for (LedgerEntry e : client(s).members().iteratePoints("m-1", ListParams.limit(2))) {
        if (e.id().equals("le_1006")) break;
      }
      assertEquals(1, s.requests.size());
    }
  }

  @Test
  void redemptionsTransactionsAndDeliveriesIterateTheSameWay() throws Exception {
    String redemption = "{\"redemptionId\":\"rdm_MS\",\"requestId\":\"r\",\"status\":\"completed\",\"externalMemberId\":\"m-1\","
        + "\"pointsRedeemed\":1,\"cashValueMinor\":1,\"currency\":\"GBP\",\"payout\":{\"payoutId\":\"po\",\"status\":\"succeeded\","
        + "\"failureReason\":null},\"createdAt\":\"2026-11-22T13:22:42.177Z\",\"updatedAt\":\"2026-11-22T13:22:46.686Z\"}";
    String tx = "{\"externalTransactionId\":\"t-MS\",\"type\":\"settled\",\"eventId\":\"e\",\"merchantId\":\"m\",\"merchantName\":\"M\","
        + "\"amountMinor\":100,\"currency\":\"GBP\",\"pointsDelta\":1,\"occurredAt\":\"2026-11-20T10:00:00.000Z\","
        + "\"settledAt\":\"2026-11-20T10:00:01.000Z\",\"createdAt\":\"2026-11-22T13:22:36.859Z\"}";
    String delivery = "{\"eventId\":\"evt_MS\",\"attempt\":1,\"status\":200,\"error\":null,\"durationMs\":3,"
        + "\"attemptedAt\":\"2026-11-22T13:22:42.177Z\"}";
    try (StubServer s = new StubServer((r, ex, i) -> {
      String template = r.path().startsWith("/api/v1/redemptions") ? redemption
          : r.path().endsWith("/transactions") ? tx : delivery;
      ok(ex, 200, historyPage(r.rawUri(), template));
    })) {
      MemberRewardsClient c = client(s);
      int n = 0;
      for (Redemption ignored : c.redemptions().iterate(ListParams.limit(4).externalMemberId("m-1").status("completed"))) n++;
      assertEquals(7, n);
      assertEquals("/api/v1/redemptions?limit=4&before=1004&externalMemberId=m-1&status=completed", s.requests.get(1).rawUri());
      n = 0;
      for (TransactionEntry ignored : c.members().iterateTransactions("m-1", ListParams.limit(5))) n++;
      assertEquals(7, n);
      n = 0;
      for (WebhookDelivery ignored : c.webhookEndpoints().iterateDeliveries("we_1", ListParams.limit(6))) n++;
      assertEquals(7, n);
    }
  }

  @Test
  void eventsIterateAlongNextAfterUntilAnEmptyPage() throws Exception {
    try (StubServer s = new StubServer((r, ex, i) -> {
      Map<String, String> q = query(r.rawUri());
      int after = q.containsKey("after") ? Integer.parseInt(q.get("after").substring(4)) : 0;
      int limit = Integer.parseInt(q.getOrDefault("limit", "50"));
      List<String> page = new ArrayList<>();
      for (int n = after + 1; n <= Math.min(5, after + limit); n++) {
        page.add("{\"id\":\"evt_" + n + "\",\"type\":\"member.created\",\"createdAt\":\"2026-11-22T13:22:42.177Z\","
            + "\"environment\":\"sandbox\",\"data\":{\"externalMemberId\":\"m-1\",\"memberSequence\":" + n
            + ",\"status\":\"active\",\"payoutReady\":false}}");
      }
      ok(ex, 200, "{\"entries\":[" + String.join(",", page) + "],\"nextAfter\":\"cur_" + (after + page.size()) + "\"}");
    })) {
      MemberRewardsClient c = client(s);
      List<String> ids = new ArrayList<>();
      for (Event e : c.events().iterate(ListParams.limit(2).types(List.of("member.created")))) ids.add(e.id());
      assertEquals(List.of("evt_1", "evt_2", "evt_3", "evt_4", "evt_5"), ids);
      assertEquals(List.of(
          "/api/v1/events?limit=2&types=member.created",
          "/api/v1/events?after=cur_2&limit=2&types=member.created",
          "/api/v1/events?after=cur_4&limit=2&types=member.created",
          "/api/v1/events?after=cur_5&limit=2&types=member.created"),
          s.requests.stream().map(StubServer.Recorded::rawUri).collect(Collectors.toList()));
      List<EventPage> pages = new ArrayList<>();
      for (EventPage p : c.events().iteratePages(ListParams.limit(10).after("cur_3"))) pages.add(p);
      assertEquals(1, pages.size());
      assertEquals(List.of("evt_4", "evt_5"), pages.get(0).entries().stream().map(Event::id).collect(Collectors.toList()));
      assertEquals("cur_5", pages.get(0).nextAfter());
      assertEquals(5, pages.get(0).entries().get(1).memberSequence());
    }
  }
}
