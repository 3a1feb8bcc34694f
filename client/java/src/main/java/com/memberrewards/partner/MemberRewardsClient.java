package com.memberrewards.partner;

import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Member Rewards Partner API client: one method per endpoint, grouped by
 * resource. Every call is signed; every POST carries an idempotency key made
 * per call and kept across its retries. Thread-safe; share one instance.
 *
 * <pre>{@code
 * MemberRewardsClient mr = MemberRewardsClient.builder()
 *     .baseUrl(url).keyId(keyId).keySecret(secret).partnerRef("sandbox-club").build();
 * Balance b = mr.members().balance("member-1");
 * }</pre>
 */
public final class MemberRewardsClient {
  private static final String API = "/api/v1";

  private final Transport transport;
  private final Members members = new Members();
  private final Transactions transactions = new Transactions();
  private final Redemptions redemptions = new Redemptions();
  private final ClubApi club = new ClubApi();
  private final Events events = new Events();
  private final WebhookEndpoints webhookEndpoints = new WebhookEndpoints();
  private final TestHelpers testHelpers = new TestHelpers();

  private MemberRewardsClient(Builder b) {
    this.transport = new Transport(b);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A client from MR_BASE_URL, MR_KEY_ID, MR_KEY_SECRET and MR_PARTNER_REF. */
  public static MemberRewardsClient fromEnvironment() {
    return builder().baseUrl(System.getenv("MR_BASE_URL")).keyId(System.getenv("MR_KEY_ID"))
        .keySecret(System.getenv("MR_KEY_SECRET")).partnerRef(System.getenv("MR_PARTNER_REF")).build();
  }

  public Members members() { return members; }
  public Transactions transactions() { return transactions; }
  public Redemptions redemptions() { return redemptions; }
  public ClubApi club() { return club; }
  public Events events() { return events; }
  public WebhookEndpoints webhookEndpoints() { return webhookEndpoints; }
  /** Sandbox only. */
  public TestHelpers testHelpers() { return testHelpers; }

  /**
   * Any call, for endpoints newer than this SDK: {@code path} from the root
   * ("/api/v1/..."), segments percent-encoded; a POST body gets partnerRef added.
   * Returns the data as a JsonObject with the answer's status and request id.
   */
  public ApiResponse<JsonObject> request(String method, String path, Map<String, Object> query,
      Map<String, Object> body, RequestOptions options) {
    return transport.call(method, path, query, "POST".equals(method) ? transport.body(body) : null, options, o -> o);
  }

  private <T> T get(String path, Map<String, Object> query, RequestOptions o, Function<JsonObject, T> convert) {
    return transport.call("GET", path, query, null, o, convert).data();
  }

  /** A POST's typed answer, told whether the service replayed it (X-MR-Idempotent-Replay). */
  private <T> T post(String path, Map<String, Object> fields, RequestOptions o,
      BiFunction<JsonObject, Boolean, T> convert) {
    return transport.call("POST", path, null, transport.body(fields), o, convert).data();
  }

  private static String seg(String id) {
    return Transport.segment(id);
  }

  private static Map<String, Object> query(Object... pairs) {
    Map<String, Object> q = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) q.put((String) pairs[i], pairs[i + 1]);
    return q;
  }

  private static ListParams orDefault(ListParams p) {
    return p == null ? ListParams.DEFAULT : p;
  }

  /** Lazily pages a newest-first list along nextBefore until it is null. */
  static <T> Iterable<T> followBefore(Function<Long, Page<T>> fetch, Long start) {
    return () -> new Iterator<T>() {
      private Iterator<T> current = List.<T>of().iterator();
      private Long before = start;
      private boolean last = false;

      @Override
      public boolean hasNext() {
        while (!current.hasNext()) {
          if (last) return false;
          Page<T> page = fetch.apply(before);
          current = page.entries().iterator();
          if (page.nextBefore() == null || page.entries().isEmpty()) last = true;
          else before = page.nextBefore();
        }
        return true;
      }

      @Override
      public T next() {
        if (!hasNext()) throw new NoSuchElementException();
        return current.next();
      }
    };
  }

  /** {@code /members}. */
  public final class Members {
    private Members() {}

    /** POST /members: creates (status "created", HTTP 201) or updates ("updated") a member. */
    public MemberResult upsert(Member member) { return upsert(member, null); }

    public MemberResult upsert(Member member, RequestOptions o) {
      return post(API + "/members", Map.of("member", member.toJson()), o, MemberResult::from);
    }

    /** POST /members/{id}/close; reason may be null. */
    public CloseResult close(String externalMemberId, String reason) { return close(externalMemberId, reason, null); }

    public CloseResult close(String externalMemberId, String reason, RequestOptions o) {
      Map<String, Object> fields = new LinkedHashMap<>();
      if (reason != null) fields.put("reason", reason);
      return post(API + "/members/" + seg(externalMemberId) + "/close", fields, o, CloseResult::from);
    }

    /** GET /members/{id}/balance. */
    public Balance balance(String externalMemberId) { return balance(externalMemberId, null); }

    public Balance balance(String externalMemberId, RequestOptions o) {
      return get(API + "/members/" + seg(externalMemberId) + "/balance", null, o, Balance::from);
    }

    /** GET /members/{id}/points: one page, newest first (limit, before, filter). */
    public Page<LedgerEntry> listPoints(String externalMemberId, ListParams p) { return listPoints(externalMemberId, p, null); }

    public Page<LedgerEntry> listPoints(String externalMemberId, ListParams p, RequestOptions o) {
      ListParams q = orDefault(p);
      return get(API + "/members/" + seg(externalMemberId) + "/points",
          query("filter", q.filter(), "limit", q.limit(), "before", q.before()), o, d -> Page.from(d, LedgerEntry::from));
    }

    /** Every ledger entry of the member, newest first, fetched page by page as you iterate. */
    public Iterable<LedgerEntry> iteratePoints(String externalMemberId, ListParams p) {
      ListParams q = orDefault(p);
      return followBefore(before -> listPoints(externalMemberId, q.withBefore(before)), q.before());
    }

    /** GET /members/{id}/transactions: one page, newest first (limit, before). */
    public Page<TransactionEntry> listTransactions(String externalMemberId, ListParams p) {
      return listTransactions(externalMemberId, p, null);
    }

    public Page<TransactionEntry> listTransactions(String externalMemberId, ListParams p, RequestOptions o) {
      ListParams q = orDefault(p);
      return get(API + "/members/" + seg(externalMemberId) + "/transactions", query("limit", q.limit(), "before", q.before()),
          o, d -> Page.from(d, TransactionEntry::from));
    }

    /** Every settled and reversed transaction of the member, newest first. */
    public Iterable<TransactionEntry> iterateTransactions(String externalMemberId, ListParams p) {
      ListParams q = orDefault(p);
      return followBefore(before -> listTransactions(externalMemberId, q.withBefore(before)), q.before());
    }
  }

  /** {@code /transactions}. */
  public final class Transactions {
    private Transactions() {}

    /** POST /transactions/settled: the service computes the award. */
    public SettledResult settled(SettledRequest r) { return settled(r, null); }

    public SettledResult settled(SettledRequest r, RequestOptions o) {
      return post(API + "/transactions/settled", r.toJson(), o, SettledResult::from);
    }

    /** POST /transactions/reversed. */
    public ReversedResult reversed(ReversedRequest r) { return reversed(r, null); }

    public ReversedResult reversed(ReversedRequest r, RequestOptions o) {
      return post(API + "/transactions/reversed", r.toJson(), o, ReversedResult::from);
    }
  }

  /** {@code /redemptions}. */
  public final class Redemptions {
    private Redemptions() {}

    /** POST /redemptions: 202, the payout has not happened yet. */
    public RedemptionAccepted create(RedemptionRequest r) { return create(r, null); }

    public RedemptionAccepted create(RedemptionRequest r, RequestOptions o) {
      return post(API + "/redemptions", r.toJson(), o, RedemptionAccepted::from);
    }

    /** GET /redemptions/{id}. */
    public Redemption get(String redemptionId) { return get(redemptionId, null); }

    public Redemption get(String redemptionId, RequestOptions o) {
      return MemberRewardsClient.this.get(API + "/redemptions/" + seg(redemptionId), null, o, Redemption::from);
    }

    /** GET /redemptions: one page, newest first (limit, before, requestId, externalMemberId, status). */
    public Page<Redemption> list(ListParams p) { return list(p, null); }

    public Page<Redemption> list(ListParams p, RequestOptions o) {
      ListParams q = orDefault(p);
      return MemberRewardsClient.this.get(API + "/redemptions",
          query("limit", q.limit(), "before", q.before(), "requestId", q.requestId(), "externalMemberId",
              q.externalMemberId(), "status", q.status()),
          o, d -> Page.from(d, Redemption::from));
    }

    /** Every matching redemption, newest first. */
    public Iterable<Redemption> iterate(ListParams p) {
      ListParams q = orDefault(p);
      return followBefore(before -> list(q.withBefore(before)), q.before());
    }
  }

  /** {@code /club}. */
  public final class ClubApi {
    private ClubApi() {}

    /** GET /club: the calling key's club (rates, minimum redemption, currencies, pool). */
    public Club get() { return get(null); }

    public Club get(RequestOptions o) {
      return MemberRewardsClient.this.get(API + "/club", null, o, Club::from);
    }
  }

  /** {@code /events}. */
  public final class Events {
    private Events() {}

    /** GET /events: one page, oldest first (after, limit, types). */
    public EventPage list(ListParams p) { return list(p, null); }

    public EventPage list(ListParams p, RequestOptions o) {
      ListParams q = orDefault(p);
      return MemberRewardsClient.this.get(API + "/events",
          query("after", q.after(), "limit", q.limit(), "types", q.types()), o, EventPage::from);
    }

    /**
     * Pages from {@code after} until a page comes back empty (caught up).
     * Store each page's nextAfter once you handled it and start from it next
     * time: you see every event exactly once.
     */
    public Iterable<EventPage> iteratePages(ListParams p) {
      ListParams q = orDefault(p);
      return () -> new Iterator<EventPage>() {
        private String after = q.after();
        private EventPage next;
        private boolean done;

        @Override
        public boolean hasNext() {
          if (next != null) return true;
          if (done) return false;
          EventPage page = list(q.after(after));
          if (page.entries().isEmpty()) {
            done = true;
            return false;
          }
          if (page.nextAfter() == null) done = true;
          else after = page.nextAfter();
          next = page;
          return true;
        }

        @Override
        public EventPage next() {
          if (!hasNext()) throw new NoSuchElementException();
          EventPage page = next;
          next = null;
          return page;
        }
      };
    }

    /** Every event after {@code after}, oldest first, until caught up. */
    public Iterable<Event> iterate(ListParams p) {
      Iterable<EventPage> pages = iteratePages(p);
      return () -> new Iterator<Event>() {
        private final Iterator<EventPage> pageIt = pages.iterator();
        private Iterator<Event> current = List.<Event>of().iterator();

        @Override
        public boolean hasNext() {
          while (!current.hasNext()) {
            if (!pageIt.hasNext()) return false;
            current = pageIt.next().entries().iterator();
          }
          return true;
        }

        @Override
        public Event next() {
          if (!hasNext()) throw new NoSuchElementException();
          return current.next();
        }
      };
    }
  }

  /** {@code /webhook-endpoints}. */
  public final class WebhookEndpoints {
    private WebhookEndpoints() {}

    /** POST /webhook-endpoints: 201; the answer carries the signing secret (keep it). eventTypes null or empty: all. */
    public WebhookEndpoint create(String url, List<String> eventTypes, String description) {
      return create(url, eventTypes, description, null);
    }

    public WebhookEndpoint create(String url, List<String> eventTypes, String description, RequestOptions o) {
      Map<String, Object> fields = new LinkedHashMap<>();
      fields.put("url", url);
      if (eventTypes != null) fields.put("eventTypes", eventTypes);
      if (description != null) fields.put("description", description);
      return post(API + "/webhook-endpoints", fields, o, WebhookEndpoint::from);
    }

    /** GET /webhook-endpoints: all of the club's endpoints, without secrets. */
    public List<WebhookEndpoint> list() { return list(null); }

    public List<WebhookEndpoint> list(RequestOptions o) {
      return MemberRewardsClient.this.get(API + "/webhook-endpoints", null, o, d -> d.getList("entries", WebhookEndpoint::from));
    }

    /** GET /webhook-endpoints/{id}. */
    public WebhookEndpoint get(String endpointId) { return get(endpointId, null); }

    public WebhookEndpoint get(String endpointId, RequestOptions o) {
      return MemberRewardsClient.this.get(API + "/webhook-endpoints/" + seg(endpointId), null, o, WebhookEndpoint::from);
    }

    /** POST /webhook-endpoints/{id}. */
    public WebhookEndpoint update(String endpointId, WebhookEndpointUpdate changes) { return update(endpointId, changes, null); }

    public WebhookEndpoint update(String endpointId, WebhookEndpointUpdate changes, RequestOptions o) {
      return post(API + "/webhook-endpoints/" + seg(endpointId), changes.toJson(), o, WebhookEndpoint::from);
    }

    /** POST /webhook-endpoints/{id}/rotate-secret: the old secret keeps signing beside the new one for 24 h. */
    public WebhookEndpoint rotateSecret(String endpointId) { return rotateSecret(endpointId, null); }

    public WebhookEndpoint rotateSecret(String endpointId, RequestOptions o) {
      return post(API + "/webhook-endpoints/" + seg(endpointId) + "/rotate-secret", Map.of(), o, WebhookEndpoint::from);
    }

    /** POST /webhook-endpoints/{id}/delete; returns the answer's data. */
    public JsonObject delete(String endpointId) { return delete(endpointId, null); }

    public JsonObject delete(String endpointId, RequestOptions o) {
      return post(API + "/webhook-endpoints/" + seg(endpointId) + "/delete", Map.of(), o, (d, replayed) -> d);
    }

    /** GET /webhook-endpoints/{id}/deliveries: one page of attempts, newest first (limit, before). */
    public Page<WebhookDelivery> listDeliveries(String endpointId, ListParams p) { return listDeliveries(endpointId, p, null); }

    public Page<WebhookDelivery> listDeliveries(String endpointId, ListParams p, RequestOptions o) {
      ListParams q = orDefault(p);
      return MemberRewardsClient.this.get(API + "/webhook-endpoints/" + seg(endpointId) + "/deliveries",
          query("limit", q.limit(), "before", q.before()), o, d -> Page.from(d, WebhookDelivery::from));
    }

    /** Every kept delivery attempt of the endpoint, newest first. */
    public Iterable<WebhookDelivery> iterateDeliveries(String endpointId, ListParams p) {
      ListParams q = orDefault(p);
      return followBefore(before -> listDeliveries(endpointId, q.withBefore(before)), q.before());
    }

    /** POST /webhook-endpoints/{id}/replay: sends again every matching event since {@code since}. */
    public WebhookReplayResult replay(String endpointId, Instant since) { return replay(endpointId, since, null); }

    public WebhookReplayResult replay(String endpointId, Instant since, RequestOptions o) {
      return post(API + "/webhook-endpoints/" + seg(endpointId) + "/replay", Map.of("since", Signing.timestamp(since)), o,
          WebhookReplayResult::from);
    }
  }

  /** {@code /test-helpers}, sandbox only. */
  public final class TestHelpers {
    private TestHelpers() {}

    /** POST /test-helpers/redemptions/{id}/payout: moves the payout as the operator's report would. */
    public Redemption payout(String redemptionId, PayoutOutcome outcome, String failureReason) {
      return payout(redemptionId, outcome, failureReason, null);
    }

    public Redemption payout(String redemptionId, PayoutOutcome outcome, String failureReason, RequestOptions o) {
      Map<String, Object> fields = new LinkedHashMap<>();
      fields.put("outcome", outcome.wire());
      if (failureReason != null) fields.put("failureReason", failureReason);
      return post(API + "/test-helpers/redemptions/" + seg(redemptionId) + "/payout", fields, o, Redemption::from);
    }
  }

  /** The sandbox test helper's payout outcomes. */
  public enum PayoutOutcome {
    SUCCEEDED("succeeded"),
    FAILED("failed");

    private final String wire;

    PayoutOutcome(String wire) {
      this.wire = wire;
    }

    public String wire() {
      return wire;
    }
  }

  /** Settings of a client; only baseUrl, keyId, keySecret and partnerRef are required. */
  public static final class Builder {
    String baseUrl, keyId, keySecret, partnerRef, userAgent;
    Duration timeout = Duration.ofSeconds(30);
    int maxRetries = 3;
    Duration initialRetryDelay = Duration.ofMillis(500);
    Duration maxRetryDelay = Duration.ofSeconds(8);
    long maxRetryAfterSeconds = 60;
    HttpClient httpClient;

    private Builder() {}

    /** e.g. "https://sandbox.example.com" or "http://127.0.0.1:8080"; paths start at /api/v1. */
    public Builder baseUrl(String v) { baseUrl = v; return this; }
    /** mrk_sbx_... or mrk_prd_... */
    public Builder keyId(String v) { keyId = v; return this; }
    /** The key's secret as issued (used as ASCII bytes, not decoded). */
    public Builder keySecret(String v) { keySecret = v; return this; }
    /** Your club's reference; the client puts it in every body. */
    public Builder partnerRef(String v) { partnerRef = v; return this; }
    /** Per attempt, the whole answer included. Default 30 s. */
    public Builder timeout(Duration v) { timeout = v; return this; }
    /** Retries after the first attempt. Default 3; 0 turns retrying off. */
    public Builder maxRetries(int v) { maxRetries = v; return this; }
    /** First backoff step (default 500 ms), doubled per retry up to maxRetryDelay (8 s), with jitter. */
    public Builder retryDelays(Duration initial, Duration max) { initialRetryDelay = initial; maxRetryDelay = max; return this; }
    /** A Retry-After longer than this is not waited for: the error is thrown. Default 60 s. */
    public Builder maxRetryAfterSeconds(long v) { maxRetryAfterSeconds = v; return this; }
    /** Your own HttpClient (proxy, TLS settings); it should not follow redirects. */
    public Builder httpClient(HttpClient v) { httpClient = v; return this; }
    /** Appended to the User-Agent. */
    public Builder userAgent(String v) { userAgent = v; return this; }

    public MemberRewardsClient build() {
      return new MemberRewardsClient(this);
    }
  }
}
