package memberrewards

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const testSecret = "s3cr3t-as-issued"

type recorded struct {
	Method, Path, RawPath, RawQuery string
	Query                           map[string]string
	Header                          http.Header
	Body                            []byte
}

func (r recorded) signatureOK() bool {
	sum := sha256.Sum256(r.Body)
	canonical := r.Header.Get("X-MR-Timestamp") + "\n" + r.Method + "\n" + r.RawPath + "\n" + hex.EncodeToString(sum[:])
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write([]byte(canonical))
	return hmac.Equal([]byte("v1="+hex.EncodeToString(mac.Sum(nil))), []byte(r.Header.Get("X-MR-Signature")))
}

// answer is what the stub does with one request.
type answer func(w http.ResponseWriter, r recorded)

func okJSON(status int, data string) answer {
	return func(w http.ResponseWriter, _ recorded) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-ok")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"ok":true,"data":%s}`, data)
	}
}

func failJSON(status int, code string, headers map[string]string, extra string) answer {
	return func(w http.ResponseWriter, _ recorded) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-hdr")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"ok":false,"error":{"code":%q,"message":"m","requestId":"req-%d"%s}}`, code, status, extra)
	}
}

// drop closes the connection without an answer.
func drop(w http.ResponseWriter, _ recorded) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

type stub struct {
	*httptest.Server
	mu       sync.Mutex
	script   []answer
	fallback answer
	reqs     []recorded
}

func newStub(t *testing.T) *stub {
	s := &stub{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		q := map[string]string{}
		for k, v := range r.URL.Query() {
			q[k] = v[0]
		}
		rec := recorded{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
			Query: q, Header: r.Header.Clone(), Body: body}
		s.mu.Lock()
		s.reqs = append(s.reqs, rec)
		a := s.fallback
		if len(s.script) > 0 {
			a, s.script = s.script[0], s.script[1:]
		}
		s.mu.Unlock()
		if a == nil {
			a = failJSON(500, "internal_error", nil, "")
		}
		a(w, rec)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *stub) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

type sleepLog struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (l *sleepLog) sleep(_ context.Context, d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delays = append(l.delays, d)
	return nil
}

func newTestClient(t *testing.T, base string, cfg Config) (*Client, *sleepLog) {
	cfg.BaseURL, cfg.KeyID, cfg.KeySecret, cfg.PartnerRef = base, "mrk_sbx_test", testSecret, "club-1"
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := &sleepLog{}
	c.sleep = log.sleep
	return c, log
}

const settledData = `{"eventId":"e1","status":"processed","externalTransactionId":"tx-1","pointsAwarded":12,
  "balances":{"pointsBalance":12,"reservedPointsBalance":0},"partner":{"availablePointsPool":5},"ledgerGroupId":"settled:1:tx-1"}`

func settleReq() SettleRequest {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	return SettleRequest{EventID: "e1", OccurredAt: at, Member: MemberRef{"m-1"},
		Transaction: SettledTransaction{ExternalTransactionID: "tx-1", MerchantID: "m-42", MerchantName: "Corner Shop",
			AmountMinor: 1234, Currency: "GBP", SettledAt: at.Add(time.Second)}}
}

func assertSigned(t *testing.T, reqs []recorded) {
	t.Helper()
	for _, r := range reqs {
		if r.Header.Get("X-MR-Key-Id") != "mrk_sbx_test" || !r.signatureOK() {
			t.Errorf("%s %s not signed correctly: %v", r.Method, r.RawPath, r.Header)
		}
	}
}

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestPostBodyHeadersAndTypedAnswer(t *testing.T) {
	s := newStub(t)
	s.script = []answer{okJSON(200, settledData)}
	c, _ := newTestClient(t, s.URL, Config{})
	res, err := c.SettleTransaction(context.Background(), settleReq())
	if err != nil || res.PointsAwarded != 12 || res.Balances.PointsBalance != 12 || res.Partner.AvailablePointsPool != 5 {
		t.Fatalf("%+v %v", res, err)
	}
	r := s.requests()[0]
	var body map[string]interface{}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := `{"eventId":"e1","member":{"externalMemberId":"m-1"},"occurredAt":"2026-11-20T10:00:00Z","partnerRef":"club-1","transaction":{"amountMinor":1234,"currency":"GBP","externalTransactionId":"tx-1","merchantId":"m-42","merchantName":"Corner Shop","settledAt":"2026-11-20T10:00:01Z"}}`
	if string(r.Body) != want {
		t.Errorf("body %s", r.Body)
	}
	if r.Method != "POST" || r.Path != "/api/v1/transactions/settled" || r.Header.Get("Content-Type") != "application/json" ||
		!uuidRe.MatchString(r.Header.Get("X-MR-Idempotency-Key")) {
		t.Errorf("%+v", r)
	}
	assertSigned(t, s.requests())
}

func TestEachLogicalCallGetsItsOwnKeyUnlessGiven(t *testing.T) {
	s := newStub(t)
	s.fallback = okJSON(201, `{"externalMemberId":"m-1","status":"created","payoutReady":false}`)
	c, _ := newTestClient(t, s.URL, Config{})
	m := MemberInput{ExternalMemberID: "m-1", FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"}
	ctx := context.Background()
	for _, opts := range [][]CallOption{nil, nil, {WithIdempotencyKey("my-key-1")}} {
		if _, err := c.UpsertMember(ctx, m, opts...); err != nil {
			t.Fatal(err)
		}
	}
	reqs := s.requests()
	if reqs[0].Header.Get("X-MR-Idempotency-Key") == reqs[1].Header.Get("X-MR-Idempotency-Key") ||
		reqs[2].Header.Get("X-MR-Idempotency-Key") != "my-key-1" {
		t.Fatal("idempotency keys")
	}
	if string(reqs[0].Body) != `{"member":{"externalMemberId":"m-1","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com"},"partnerRef":"club-1"}` {
		t.Errorf("body %s", reqs[0].Body)
	}
}

func TestGetEscapesTheIDAndSignsTheEncodedPathNotTheQuery(t *testing.T) {
	s := newStub(t)
	s.script = []answer{okJSON(200, `{"entries":[],"nextBefore":null}`)}
	c, _ := newTestClient(t, s.URL, Config{})
	b := int64(1795353757172)
	if _, err := c.ListPoints(context.Background(), "a/b c", PointsParams{Filter: "earned", Limit: 10, Before: &b}); err != nil {
		t.Fatal(err)
	}
	r := s.requests()[0]
	if r.RawPath != "/api/v1/members/a%2Fb%20c/points" || r.RawQuery != "filter=earned&limit=10&before=1795353757172" ||
		r.Header.Get("X-MR-Idempotency-Key") != "" || len(r.Body) != 0 {
		t.Fatalf("%+v", r)
	}
	assertSigned(t, s.requests())
}

func TestBaseURLPathPrefixIsSigned(t *testing.T) {
	s := newStub(t)
	s.script = []answer{okJSON(200, `{"partnerRef":"club-1","name":"C","environment":"sandbox","earnRateBasisPoints":null,
	  "redemptionRateMinorPerPoint":1,"payoutCurrency":"GBP","supportedCurrencies":["GBP"],"minimumRedemptionPoints":null,"availablePointsPool":10}`)}
	c, _ := newTestClient(t, s.URL+"/partner/", Config{})
	club, err := c.GetClub(context.Background())
	if err != nil || club.EarnRateBasisPoints != nil || *club.RedemptionRateMinorPerPoint != 1 || club.SupportedCurrencies[0] != "GBP" {
		t.Fatalf("%+v %v", club, err)
	}
	if s.requests()[0].RawPath != "/partner/api/v1/club" {
		t.Fatal(s.requests()[0].RawPath)
	}
	assertSigned(t, s.requests())
}

func TestRetry503WithTheSameKeyAfterRetryAfter(t *testing.T) {
	s := newStub(t)
	s.script = []answer{failJSON(503, "service_unavailable", map[string]string{"Retry-After": "2"}, ""), okJSON(200, settledData)}
	c, log := newTestClient(t, s.URL, Config{})
	if _, err := c.SettleTransaction(context.Background(), settleReq()); err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 2 || reqs[0].Header.Get("X-MR-Idempotency-Key") != reqs[1].Header.Get("X-MR-Idempotency-Key") ||
		string(reqs[0].Body) != string(reqs[1].Body) {
		t.Fatalf("%d requests", len(reqs))
	}
	if len(log.delays) != 1 || log.delays[0] < 2*time.Second || log.delays[0] > 2250*time.Millisecond {
		t.Fatalf("delays %v", log.delays)
	}
	assertSigned(t, reqs)
}

func TestRetry409InProgressAnd429(t *testing.T) {
	s := newStub(t)
	s.script = []answer{failJSON(409, "idempotency_in_progress", map[string]string{"Retry-After": "1"}, ""),
		failJSON(429, "rate_limited", map[string]string{"Retry-After": "1"}, ""), okJSON(200, settledData)}
	c, _ := newTestClient(t, s.URL, Config{})
	if _, err := c.SettleTransaction(context.Background(), settleReq()); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, r := range s.requests() {
		keys[r.Header.Get("X-MR-Idempotency-Key")] = true
	}
	if len(s.requests()) != 3 || len(keys) != 1 {
		t.Fatal("not three attempts under one key")
	}
}

func TestOther409IsNotRetriedAndNamesTheRedemption(t *testing.T) {
	s := newStub(t)
	s.script = []answer{failJSON(409, "duplicate_request_id", nil, `,"redemptionId":"rdm_1"`)}
	c, log := newTestClient(t, s.URL, Config{})
	_, err := c.CreateRedemption(context.Background(), RedemptionRequest{RequestID: "rq-1", Member: MemberRef{"m-1"},
		Redemption: RedemptionAmount{Points: 400, Currency: "GBP"}})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "duplicate_request_id" || apiErr.Status != 409 ||
		apiErr.RedemptionID != "rdm_1" || apiErr.RequestID != "req-409" {
		t.Fatalf("%#v", err)
	}
	if len(s.requests()) != 1 || len(log.delays) != 0 {
		t.Fatal("retried")
	}
}

func TestBackoffIsExponentialWithJitterThenGivesUp(t *testing.T) {
	s := newStub(t)
	s.fallback = failJSON(503, "service_unavailable", nil, "")
	c, log := newTestClient(t, s.URL, Config{})
	_, err := c.GetBalance(context.Background(), "m-1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "service_unavailable" || apiErr.Status != 503 {
		t.Fatalf("%v", err)
	}
	if len(s.requests()) != 4 || len(log.delays) != 3 {
		t.Fatalf("%d requests, delays %v", len(s.requests()), log.delays)
	}
	for n, d := range log.delays {
		limit := (500 * time.Millisecond) << uint(n)
		if d < limit/2 || d > limit {
			t.Errorf("delay %d = %v outside [%v, %v]", n, d, limit/2, limit)
		}
	}
}

func TestRetryAfterBeyondTheLimitIsNotWaited(t *testing.T) {
	s := newStub(t)
	s.script = []answer{failJSON(429, "rate_limited", map[string]string{"Retry-After": "3600"}, "")}
	c, _ := newTestClient(t, s.URL, Config{})
	_, err := c.GetBalance(context.Background(), "m-1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.RetryAfter != time.Hour || len(s.requests()) != 1 {
		t.Fatalf("%v", err)
	}
}

func TestConnectionDropIsRetriedWithTheSameKey(t *testing.T) {
	s := newStub(t)
	s.script = []answer{drop, okJSON(200, settledData)}
	c, log := newTestClient(t, s.URL, Config{})
	if _, err := c.SettleTransaction(context.Background(), settleReq()); err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 2 || reqs[0].Header.Get("X-MR-Idempotency-Key") != reqs[1].Header.Get("X-MR-Idempotency-Key") || len(log.delays) != 1 {
		t.Fatalf("%d requests, %v", len(reqs), log.delays)
	}
}

func TestTimeoutIsRetriedThenReported(t *testing.T) {
	release := make(chan struct{})
	s := newStub(t)
	t.Cleanup(func() { close(release) }) // runs before the server closes
	s.fallback = func(w http.ResponseWriter, r recorded) { <-release }
	c, _ := newTestClient(t, s.URL, Config{Timeout: 300 * time.Millisecond, Retry: RetryPolicy{MaxRetries: 1}})
	_, err := c.SettleTransaction(context.Background(), settleReq(), WithIdempotencyKey("k-timeout"))
	var connErr *ConnectionError
	if !errors.As(err, &connErr) || connErr.Attempts != 2 || connErr.IdempotencyKey != "k-timeout" {
		t.Fatalf("%v", err)
	}
	if len(s.requests()) != 2 {
		t.Fatalf("%d requests", len(s.requests()))
	}
}

func TestCancelledContextStopsRetrying(t *testing.T) {
	s := newStub(t)
	s.fallback = failJSON(503, "service_unavailable", nil, "")
	c, _ := newTestClient(t, s.URL, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	c.sleep = func(ctx context.Context, d time.Duration) error { cancel(); return sleepCtx(ctx, d) }
	if _, err := c.GetBalance(ctx, "m-1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if len(s.requests()) != 1 {
		t.Fatal("retried after cancel")
	}
}

func TestInvalidRequestDetails(t *testing.T) {
	s := newStub(t)
	s.script = []answer{failJSON(400, "invalid_request", nil,
		`,"details":[{"field":"member.wallet.bankAccount.sortCode","problem":"must be exactly 6 digits"}]`)}
	c, log := newTestClient(t, s.URL, Config{})
	_, err := c.UpsertMember(context.Background(), MemberInput{ExternalMemberID: "m-1"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || len(apiErr.Details) != 1 ||
		apiErr.Details[0].Field != "member.wallet.bankAccount.sortCode" || len(log.delays) != 0 {
		t.Fatalf("%v", err)
	}
	if want := "member.wallet.bankAccount.sortCode must be exactly 6 digits"; !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(err.Error()) {
		t.Fatal(err.Error())
	}
}

func TestAnswerThatIsNotTheEnvelope(t *testing.T) {
	s := newStub(t)
	s.script = []answer{func(w http.ResponseWriter, _ recorded) {
		w.Header().Set("X-Request-Id", "req-html")
		w.WriteHeader(502)
		io.WriteString(w, "<html>bad gateway</html>")
	}}
	c, _ := newTestClient(t, s.URL, Config{})
	_, err := c.GetClub(context.Background())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "unexpected_response" || apiErr.Status != 502 || apiErr.RequestID != "req-html" {
		t.Fatalf("%v", err)
	}
}

func entryJSON(ms int) string {
	return fmt.Sprintf(`{"id":"le_%d","entryType":"earn_award","description":"d","pointsDelta":1,"pointsDeltaAvailable":1,
	  "pointsDeltaReserved":0,"cashValueMinor":null,"currency":"GBP","createdAt":"2026-11-22T13:22:37.%03dZ","merchantName":"M",
	  "merchantId":"m","externalTransactionId":"tx-%d","ledgerGroupId":"1:tx-%d"}`, ms, ms, ms, ms)
}

func TestHistoryIteratorFollowsNextBeforeUntilNull(t *testing.T) {
	s := newStub(t)
	var times []int
	for ms := 112; ms > 100; ms-- {
		times = append(times, ms)
	}
	s.fallback = func(w http.ResponseWriter, r recorded) {
		before, limit := 1000000, 0
		if b, ok := r.Query["before"]; ok {
			before, _ = strconv.Atoi(b)
		}
		limit, _ = strconv.Atoi(r.Query["limit"])
		var rows []string
		last := 0
		for _, ms := range times {
			if ms < before && len(rows) < limit {
				rows = append(rows, entryJSON(ms))
				last = ms
			}
		}
		next := "null"
		if last != times[len(times)-1] {
			next = strconv.Itoa(last)
		}
		okJSON(200, fmt.Sprintf(`{"entries":[%s],"nextBefore":%s}`, joinComma(rows), next))(w, r)
	}
	c, _ := newTestClient(t, s.URL, Config{})
	it := c.IterPoints(context.Background(), "m-1", PointsParams{Limit: 5})
	var got []string
	for it.Next() {
		got = append(got, it.Value().ID)
	}
	if it.Err() != nil || len(got) != 12 || got[0] != "le_112" || got[11] != "le_101" {
		t.Fatalf("%v %v", got, it.Err())
	}
	var befores []string
	for _, r := range s.requests() {
		befores = append(befores, r.Query["before"])
		if r.Query["limit"] != "5" {
			t.Error("page size not sent")
		}
	}
	if fmt.Sprint(befores) != "[ 108 103]" {
		t.Fatalf("before cursors %v", befores)
	}
}

func joinComma(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ","
		}
		out += p
	}
	return out
}

func TestIteratorStopsOnError(t *testing.T) {
	s := newStub(t)
	s.script = []answer{okJSON(200, `{"entries":[`+entryJSON(5)+`],"nextBefore":5}`), failJSON(404, "cardholder_not_found", nil, "")}
	c, _ := newTestClient(t, s.URL, Config{})
	it := c.IterPoints(context.Background(), "m-1", PointsParams{})
	n := 0
	for it.Next() {
		n++
	}
	var apiErr *APIError
	if n != 1 || !errors.As(it.Err(), &apiErr) || apiErr.Code != "cardholder_not_found" {
		t.Fatalf("%d %v", n, it.Err())
	}
}

func TestRedemptionIteratorSendsTheFilters(t *testing.T) {
	red := `{"redemptionId":"rdm_1","requestId":"rq 1&x","status":"completed","externalMemberId":"m-1","pointsRedeemed":400,
	  "cashValueMinor":400,"currency":"GBP","payout":{"payoutId":"po_1","status":"succeeded","failureReason":null},
	  "createdAt":"2026-11-22T13:22:42.177Z","updatedAt":"2026-11-22T13:22:46.686Z"}`
	s := newStub(t)
	s.script = []answer{okJSON(200, `{"entries":[`+red+`],"nextBefore":7}`), okJSON(200, `{"entries":[`+red+`],"nextBefore":null}`)}
	c, _ := newTestClient(t, s.URL, Config{})
	it := c.IterRedemptions(context.Background(), RedemptionsParams{RequestID: "rq 1&x", Status: "completed", Limit: 1})
	n := 0
	for it.Next() {
		if it.Value().Payout.Status != "succeeded" {
			t.Error(it.Value())
		}
		n++
	}
	reqs := s.requests()
	if n != 2 || it.Err() != nil || reqs[0].RawQuery != "requestId=rq%201%26x&status=completed&limit=1" || reqs[1].Query["before"] != "7" {
		t.Fatalf("%d %v %s", n, it.Err(), reqs[0].RawQuery)
	}
}

func TestEventIteratorPagesOnNextAfterUntilAnEmptyPage(t *testing.T) {
	ev := func(n int) string {
		return fmt.Sprintf(`{"id":"evt_%d","type":"transaction.settled","createdAt":"2026-11-26T10:00:00.000Z","environment":"sandbox",
		  "data":{"externalMemberId":"m-1","memberSequence":%d,"pointsAwarded":%d}}`, n, n, n)
	}
	s := newStub(t)
	s.script = []answer{okJSON(200, `{"entries":[`+ev(1)+`,`+ev(2)+`],"nextAfter":"cur_a"}`),
		okJSON(200, `{"entries":[`+ev(3)+`],"nextAfter":"cur_b"}`), okJSON(200, `{"entries":[],"nextAfter":"cur_b"}`)}
	c, _ := newTestClient(t, s.URL, Config{})
	it := c.IterEvents(context.Background(), EventsParams{Types: []string{"transaction.settled", "member.created"}, Limit: 2})
	var seqs []int64
	for it.Next() {
		seqs = append(seqs, it.Value().Data.MemberSequence)
	}
	if it.Err() != nil || fmt.Sprint(seqs) != "[1 2 3]" || it.NextAfter() != "cur_b" {
		t.Fatalf("%v %v %s", seqs, it.Err(), it.NextAfter())
	}
	reqs := s.requests()
	if reqs[0].RawQuery != "limit=2&types=transaction.settled,member.created" || reqs[1].Query["after"] != "cur_a" || reqs[2].Query["after"] != "cur_b" {
		t.Fatalf("%+v", reqs)
	}
}

func TestWebhookEndpointCalls(t *testing.T) {
	endpoint := `{"endpointId":"we_1","url":"http://127.0.0.1:1/h","eventTypes":[],"description":null,"status":"enabled",
	  "secret":"whsec_x","createdAt":"2026-11-26T10:00:00.000Z"}`
	s := newStub(t)
	s.script = []answer{okJSON(201, endpoint), okJSON(200, `{"entries":[`+endpoint+`]}`),
		okJSON(200, `{"endpointId":"we_1","replayed":3}`), okJSON(200, `{"endpointId":"we_1","deleted":true}`),
		failJSON(404, "webhook_endpoint_not_found", nil, "")}
	c, _ := newTestClient(t, s.URL, Config{})
	ctx := context.Background()
	ep, err := c.CreateWebhookEndpoint(ctx, WebhookEndpointInput{URL: "http://127.0.0.1:1/h"})
	if err != nil || ep.Secret != "whsec_x" {
		t.Fatal(err)
	}
	list, err := c.ListWebhookEndpoints(ctx)
	if err != nil || len(list) != 1 || list[0].EndpointID != "we_1" {
		t.Fatal(err)
	}
	rep, err := c.ReplayWebhookEvents(ctx, "we_1", time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
	if err != nil || rep.Replayed != 3 {
		t.Fatal(err)
	}
	if del, err := c.DeleteWebhookEndpoint(ctx, "we_1"); err != nil || !del.Deleted {
		t.Fatal(err)
	}
	_, err = c.GetWebhookEndpoint(ctx, "we_1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "webhook_endpoint_not_found" {
		t.Fatal(err)
	}
	reqs := s.requests()
	got := ""
	for _, r := range reqs {
		got += r.Method + " " + r.RawPath + ";"
	}
	if got != "POST /api/v1/webhook-endpoints;GET /api/v1/webhook-endpoints;POST /api/v1/webhook-endpoints/we_1/replay;POST /api/v1/webhook-endpoints/we_1/delete;GET /api/v1/webhook-endpoints/we_1;" {
		t.Fatal(got)
	}
	if string(reqs[2].Body) != `{"partnerRef":"club-1","since":"2026-11-26T00:00:00Z"}` {
		t.Fatal(string(reqs[2].Body))
	}
}

func TestEveryErrorComesWithANilAnswer(t *testing.T) {
	s := newStub(t)
	s.fallback = failJSON(404, "cardholder_not_found", nil, "")
	c, _ := newTestClient(t, s.URL, Config{})
	ctx := context.Background()
	redemption, err := c.CreateRedemption(ctx, RedemptionRequest{RequestID: "rq-1", Member: MemberRef{"m-1"},
		Redemption: RedemptionAmount{Points: 400, Currency: "GBP"}})
	if redemption != nil || err == nil {
		t.Fatalf("CreateRedemption: %v %v", redemption, err)
	}
	balance, err := c.GetBalance(ctx, "m-1")
	if balance != nil || err == nil {
		t.Fatalf("GetBalance: %v %v", balance, err)
	}
	endpoints, err := c.ListWebhookEndpoints(ctx)
	if endpoints != nil || err == nil {
		t.Fatalf("ListWebhookEndpoints: %v %v", endpoints, err)
	}
}

func TestAnIDTheAPICannotTakeIsRefusedBeforeSending(t *testing.T) {
	s := newStub(t)
	c, _ := newTestClient(t, s.URL, Config{})
	ctx := context.Background()
	for _, bad := range []string{"", ".", "..", strings.Repeat("x", 129), "tab\there", "caf\u00e9"} {
		paid, err := c.TestHelperPayout(ctx, bad, PayoutReport{Outcome: PayoutSucceeded})
		if paid != nil || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("TestHelperPayout(%q): %v %v", bad, paid, err)
		}
		if _, err := c.GetBalance(ctx, bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("GetBalance(%q): %v", bad, err)
		}
	}
	if n := len(s.requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

func TestAReplayedAnswerSaysSo(t *testing.T) {
	s := newStub(t)
	member := `{"externalMemberId":"m-1","status":"created","payoutReady":false}`
	s.script = []answer{okJSON(201, member), func(w http.ResponseWriter, r recorded) {
		w.Header().Set("X-MR-Idempotent-Replay", "true")
		okJSON(201, member)(w, r)
	}}
	c, _ := newTestClient(t, s.URL, Config{})
	in := MemberInput{ExternalMemberID: "m-1", FirstName: "A", LastName: "L", Email: "a@example.com"}
	first, err := c.UpsertMember(context.Background(), in, WithIdempotencyKey("k-1"))
	if err != nil || first.IdempotentReplay {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := c.UpsertMember(context.Background(), in, WithIdempotencyKey("k-1"))
	if err != nil || !again.IdempotentReplay || again.Status != "created" {
		t.Fatalf("again: %+v %v", again, err)
	}
}

func TestHelperPayoutSendsTheFailureReasonOnlyWhenGiven(t *testing.T) {
	red := `{"redemptionId":"rdm_1","requestId":"rq-1","status":"failed","externalMemberId":"m-1","pointsRedeemed":100,
	  "cashValueMinor":100,"currency":"GBP","payout":{"payoutId":"po_1","status":"failed","failureReason":"account closed"},
	  "createdAt":"2026-11-22T13:22:42.177Z","updatedAt":"2026-11-22T13:22:46.686Z"}`
	s := newStub(t)
	s.fallback = okJSON(200, red)
	c, _ := newTestClient(t, s.URL, Config{})
	ctx := context.Background()
	paid, err := c.TestHelperPayout(ctx, "rdm_1", PayoutReport{Outcome: PayoutFailed, FailureReason: "account closed"})
	if err != nil || paid.Payout.FailureReason == nil || *paid.Payout.FailureReason != "account closed" {
		t.Fatalf("%v %v", paid, err)
	}
	if _, err := c.TestHelperPayout(ctx, "rdm_1", PayoutReport{Outcome: PayoutSucceeded}); err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 2 || reqs[0].Path != "/api/v1/test-helpers/redemptions/rdm_1/payout" {
		t.Fatalf("%+v", reqs)
	}
	var failed, succeeded map[string]interface{}
	if json.Unmarshal(reqs[0].Body, &failed) != nil || json.Unmarshal(reqs[1].Body, &succeeded) != nil {
		t.Fatalf("%s %s", reqs[0].Body, reqs[1].Body)
	}
	if failed["outcome"] != "failed" || failed["failureReason"] != "account closed" {
		t.Errorf("failed: %s", reqs[0].Body)
	}
	if _, has := succeeded["failureReason"]; has || succeeded["outcome"] != "succeeded" {
		t.Errorf("succeeded: %s", reqs[1].Body)
	}
}
