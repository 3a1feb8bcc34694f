// The shared SDK scenario against a real sandbox stack:
//
//	MR_BASE_URL=... MR_KEY_ID=... MR_KEY_SECRET=... MR_PARTNER_REF=... go run ./examples/scenario
//
// It onboards a member, settles enough transactions for three pages of
// history, pages them, redeems, drives the payout with the sandbox test
// helper, and receives real webhooks on a loopback receiver: every one
// verified, the first delivery of member.created answered 500 once so it
// must come again with the same webhook-id, a rotated secret's double
// signature, a replay. Exit status 0 when everything matched, 1 on the first
// mismatch, 2 on bad setup. MR_WEBHOOK_HOST (default 127.0.0.1) is where the
// receiver listens; MR_SCENARIO_TIMEOUT (seconds, default 120) bounds each wait.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	memberrewards "memberrewards.example/sdk"
)

const (
	pageSize = 5
	settles  = 12 // three pages of five: 5, 5, 2
	mark     = "sdk-scenario go"
)

var timeout = 120 * time.Second

type mismatch struct{ msg string }

func (m mismatch) Error() string { return m.msg }

func check(cond bool, format string, args ...interface{}) {
	if !cond {
		panic(mismatch{fmt.Sprintf(format, args...)})
	}
}

func same(got, want interface{}, what string) {
	if !reflect.DeepEqual(got, want) {
		panic(mismatch{fmt.Sprintf("%s: got %#v, want %#v", what, got, want)})
	}
}

// must stops the scenario on an unexpected error.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func step(format string, args ...interface{}) { fmt.Printf("ok   "+format+"\n", args...) }

func expectError(code string, err error) *memberrewards.APIError {
	var apiErr *memberrewards.APIError
	if !errors.As(err, &apiErr) {
		panic(mismatch{fmt.Sprintf("expected %s, got %v", code, err)})
	}
	same(apiErr.Code, code, "error code")
	check(apiErr.RequestID != "", "error %s carries a request id", code)
	return apiErr
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// ---- the loopback receiver ----

type delivery struct {
	header   http.Header
	body     []byte
	answered int
	received time.Time
	id       string
	typ      string
	member   string
	seq      int64
	data     map[string]interface{}
}

type receiver struct {
	mu         sync.Mutex
	changed    chan struct{}
	deliveries []*delivery
	failedOnce string
	memberID   string
	url        string
	server     *http.Server
}

// newReceiver answers 500 to the first delivery of the member's first
// member.created event, and 200 to everything else.
func newReceiver(host, memberID string) *receiver {
	r := &receiver{memberID: memberID, changed: make(chan struct{})}
	ln := must(net.Listen("tcp", net.JoinHostPort(host, "0")))
	r.url = "http://" + ln.Addr().String() + "/hooks"
	r.server = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go r.server.Serve(ln)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	d := &delivery{header: req.Header.Clone(), body: body, received: time.Now(), id: req.Header.Get("webhook-id")}
	var probe struct {
		Type string                 `json:"type"`
		Data map[string]interface{} `json:"data"`
	}
	if json.Unmarshal(body, &probe) == nil {
		d.typ, d.data = probe.Type, probe.Data
		d.member, _ = probe.Data["externalMemberId"].(string)
		if f, ok := probe.Data["memberSequence"].(float64); ok {
			d.seq = int64(f)
		}
	}
	r.mu.Lock()
	d.answered = http.StatusOK
	if r.failedOnce == "" && d.typ == "member.created" && d.member == r.memberID {
		r.failedOnce, d.answered = d.id, http.StatusInternalServerError
	}
	r.deliveries = append(r.deliveries, d)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	w.WriteHeader(d.answered)
	io.WriteString(w, "ok")
}

func (r *receiver) wait(what string, done func([]*delivery) bool) []*delivery {
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		ds, changed := append([]*delivery(nil), r.deliveries...), r.changed
		r.mu.Unlock()
		if done(ds) {
			return ds
		}
		select {
		case <-changed:
		case <-deadline:
			panic(mismatch{fmt.Sprintf("no webhook for %s within %s (%d deliveries received)", what, timeout, len(ds))})
		}
	}
}

func (r *receiver) failed() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failedOnce
}

// ours maps the member's memberSequence to its first delivery answered 200.
func (r *receiver) ours(ds []*delivery) map[int64]*delivery {
	out := map[int64]*delivery{}
	for _, d := range ds {
		if d.member == r.memberID && d.answered == http.StatusOK {
			if _, seen := out[d.seq]; !seen {
				out[d.seq] = d
			}
		}
	}
	return out
}

func poll[T any](what string, fetch func() T, done func(T) bool) T {
	deadline := time.Now().Add(timeout)
	for {
		v := fetch()
		if done(v) {
			return v
		}
		if time.Now().After(deadline) {
			panic(mismatch{fmt.Sprintf("%s not reached within %s", what, timeout)})
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func verifyAt(d *delivery, secrets ...string) *memberrewards.Event {
	wh, err := memberrewards.NewWebhook(secrets...)
	if err != nil {
		panic(mismatch{fmt.Sprintf("webhook secrets %v: %v", secrets, err)})
	}
	wh.Now = func() time.Time { return d.received }
	event, err := wh.Verify(d.body, d.header)
	if err != nil {
		panic(mismatch{fmt.Sprintf("webhook %s did not verify: %v", d.id, err)})
	}
	return event
}

// ---- the scenario ----

func run(ctx context.Context, c *memberrewards.Client) {
	started := time.Now().Add(-2 * time.Second)
	runID := randomHex(5)
	memberID := "go-scn-" + runID

	club := must(c.GetClub(ctx))
	same(club.PartnerRef, c.PartnerRef(), "club partnerRef")
	same(club.Environment, "sandbox", "club environment")
	check(club.EarnRateBasisPoints != nil && *club.EarnRateBasisPoints > 0, "the club earns points")
	check(club.RedemptionRateMinorPerPoint != nil && club.PayoutCurrency != nil, "the club can pay out")
	rate, redemptionRate, currency := *club.EarnRateBasisPoints, *club.RedemptionRateMinorPerPoint, *club.PayoutCurrency
	minimum := int64(1)
	if club.MinimumRedemptionPoints != nil && *club.MinimumRedemptionPoints > 1 {
		minimum = *club.MinimumRedemptionPoints
	}
	found := false
	for _, cur := range club.SupportedCurrencies {
		found = found || cur == currency
	}
	check(found, "payout currency among the supported ones")
	step("club %s: earn %d bp, minimum redemption %d, payout %s", club.PartnerRef, rate, minimum, currency)

	// Where the event log stands now, so later reads start from here.
	it := c.IterEvents(ctx, memberrewards.EventsParams{})
	skipped := 0
	for it.Next() {
		skipped++
	}
	must(0, it.Err())
	cursor := it.NextAfter()
	step("event log caught up past %d earlier events", skipped)

	for _, old := range must(c.ListWebhookEndpoints(ctx)) {
		if old.Description != nil && strings.HasPrefix(*old.Description, mark) {
			must(c.DeleteWebhookEndpoint(ctx, old.EndpointID)) // left by an interrupted run
		}
	}
	host := os.Getenv("MR_WEBHOOK_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	recv := newReceiver(host, memberID)
	defer recv.server.Close()
	endpoint := must(c.CreateWebhookEndpoint(ctx, memberrewards.WebhookEndpointInput{URL: recv.url, Description: mark + " " + runID}))
	defer func() {
		if _, err := c.DeleteWebhookEndpoint(ctx, endpoint.EndpointID); err != nil {
			var apiErr *memberrewards.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != "webhook_endpoint_not_found" {
				fmt.Fprintln(os.Stderr, "cleanup:", err)
			}
		}
	}()
	check(strings.HasPrefix(endpoint.EndpointID, "we_"), "endpoint id prefix")
	check(strings.HasPrefix(endpoint.Secret, "whsec_"), "the create answer carries the secret")
	same(endpoint.Status, "enabled", "new endpoint status")
	same(endpoint.URL, recv.url, "endpoint url")
	fetched := must(c.GetWebhookEndpoint(ctx, endpoint.EndpointID))
	same([]string{fetched.URL, fetched.Secret}, []string{recv.url, ""}, "GET endpoint (url, no secret)")
	listed := false
	for _, e := range must(c.ListWebhookEndpoints(ctx)) {
		listed = listed || e.EndpointID == endpoint.EndpointID
	}
	check(listed, "endpoint listed")
	secrets := []string{endpoint.Secret}
	step("webhook endpoint %s -> %s", endpoint.EndpointID, recv.url)

	// ---- onboard ----
	var expected []string // the member's event types in memberSequence order
	member := memberrewards.MemberInput{ExternalMemberID: memberID, FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
		Wallet: &memberrewards.Wallet{Provider: "bank", WalletRef: "w-" + memberID, Status: "active",
			BankAccount: &memberrewards.BankAccount{AccountNumber: "12345678", SortCode: "112233", Name: "Ada Lovelace"}}}
	key := memberrewards.WithIdempotencyKey("idem-" + randomHex(16))
	created := must(c.UpsertMember(ctx, member, key))
	same([]interface{}{created.Status, created.PayoutReady}, []interface{}{"created", true}, "first upsert")
	expected = append(expected, "member.created")
	again := must(c.UpsertMember(ctx, member, key))
	check(again.IdempotentReplay && !created.IdempotentReplay, "only the second answer under the key is a replay")
	again.IdempotentReplay = false
	same(*again, *created, "the same idempotency key replays the first answer")
	same(must(c.UpsertMember(ctx, member)).Status, "updated", "second upsert under a new key")
	expected = append(expected, "member.updated")
	step("member %s onboarded (created, replayed, updated)", memberID)

	// ---- settle enough for three pages ----
	perTx := (2*minimum+settles-1)/settles + 1
	baseAmount := (perTx*10000 + rate - 1) / rate
	if baseAmount < 100 {
		baseAmount = 100
	}
	var total int64
	var txIDs []string
	settle := func(i int, txID string, amount int64) (*memberrewards.SettledResult, error) {
		now := time.Now()
		return c.SettleTransaction(ctx, memberrewards.SettleRequest{
			EventID: fmt.Sprintf("%s-ev-%02d", memberID, i), OccurredAt: now.Add(-5 * time.Minute), Member: memberrewards.MemberRef{ExternalMemberID: memberID},
			Transaction: memberrewards.SettledTransaction{ExternalTransactionID: txID, MerchantID: "m-42", MerchantName: "Corner Shop",
				AmountMinor: amount, Currency: currency, SettledAt: now.Add(-4 * time.Minute)}})
	}
	for i := 0; i < settles; i++ {
		amount := baseAmount + int64(i)
		txID := fmt.Sprintf("%s-tx-%02d", memberID, i)
		res := must(settle(i, txID, amount))
		points := amount * rate / 10000
		total += points
		same([]interface{}{res.Status, res.PointsAwarded, res.Balances.PointsBalance}, []interface{}{"processed", points, total}, "settle "+txID)
		txIDs = append(txIDs, txID)
		expected = append(expected, "transaction.settled")
	}
	_, err := settle(99, txIDs[0], baseAmount)
	same(expectError("duplicate_transaction", err).Status, 409, "duplicate_transaction status")
	step("%d transactions settled, %d points; a repeated one is duplicate_transaction", settles, total)

	// ---- page the histories ----
	var pages []*memberrewards.PointsPage
	var before *int64
	for {
		page := must(c.ListPoints(ctx, memberID, memberrewards.PointsParams{Limit: pageSize, Before: before}))
		pages = append(pages, page)
		if page.NextBefore == nil {
			break
		}
		check(len(pages) < 10, "points history ends")
		before = page.NextBefore
	}
	var sizes []int
	var listedTx, listedIDs []string
	for _, p := range pages {
		sizes = append(sizes, len(p.Entries))
		for _, e := range p.Entries {
			check(e.EntryType == "earn_award", "every entry is an award")
			listedTx = append(listedTx, *e.ExternalTransactionID)
			listedIDs = append(listedIDs, e.ID)
		}
	}
	same(sizes, []int{5, 5, 2}, "points page sizes")
	var newestFirst []string
	for i := len(txIDs) - 1; i >= 0; i-- {
		newestFirst = append(newestFirst, txIDs[i])
	}
	same(listedTx, newestFirst, "points history, newest first")
	var iterated []string
	pit := c.IterPoints(ctx, memberID, memberrewards.PointsParams{Limit: pageSize})
	for pit.Next() {
		iterated = append(iterated, pit.Value().ID)
	}
	must(0, pit.Err())
	same(iterated, listedIDs, "IterPoints walks the same entries")
	var historyTx []string
	tit := c.IterTransactions(ctx, memberID, memberrewards.HistoryParams{Limit: pageSize})
	for tit.Next() {
		check(tit.Value().Type == "settled", "transaction type")
		historyTx = append(historyTx, tit.Value().ExternalTransactionID)
	}
	must(0, tit.Err())
	same(historyTx, newestFirst, "transaction history, newest first")
	step("three pages of history (5, 5, 2) paged by hand and by the iterators")

	// ---- redeem ----
	requestID := "rq-" + memberID
	redeem := memberrewards.RedemptionRequest{RequestID: requestID, Member: memberrewards.MemberRef{ExternalMemberID: memberID},
		Redemption: memberrewards.RedemptionAmount{Points: minimum, Currency: currency}}
	accepted := must(c.CreateRedemption(ctx, redeem))
	rid := accepted.RedemptionID
	check(strings.HasPrefix(rid, "rdm_") && strings.HasPrefix(accepted.Payout.PayoutID, "po_"), "redemption and payout ids")
	same([]interface{}{accepted.Status, accepted.Payout.Status, accepted.PointsRedeemed, accepted.CashValueMinor},
		[]interface{}{"payout_pending", "created", minimum, minimum * redemptionRate}, "accepted redemption")
	same(accepted.Balances, memberrewards.Balances{PointsBalance: total - minimum, ReservedPointsBalance: minimum}, "balances after the reservation")
	expected = append(expected, "redemption.created")
	_, err = c.CreateRedemption(ctx, redeem)
	same(expectError("duplicate_request_id", err).RedemptionID, rid, "duplicate_request_id names the first redemption")
	byRequest := must(c.ListRedemptions(ctx, memberrewards.RedemptionsParams{RequestID: requestID}))
	same(len(byRequest.Entries), 1, "redemptions found by requestId")
	same(byRequest.Entries[0].RedemptionID, rid, "redemption found by requestId")
	var ofMember []string
	rit := c.IterRedemptions(ctx, memberrewards.RedemptionsParams{ExternalMemberID: memberID})
	for rit.Next() {
		ofMember = append(ofMember, rit.Value().RedemptionID)
	}
	must(0, rit.Err())
	same(ofMember, []string{rid}, "redemptions of the member")
	step("redeemed %d points as %s; a repeated requestId names it", minimum, rid)

	// ---- the payout, driven by the sandbox test helper ----
	paid := must(c.TestHelperPayout(ctx, rid, memberrewards.PayoutReport{Outcome: "succeeded"}))
	same([]string{paid.RedemptionID, paid.Status, paid.Payout.Status}, []string{rid, "completed", "succeeded"}, "after the payout")
	same(must(c.TestHelperPayout(ctx, rid, memberrewards.PayoutReport{Outcome: "succeeded"})).Status, "completed", "the same report again is a no-op")
	expected = append(expected, "redemption.completed")
	bal := must(c.GetBalance(ctx, memberID))
	same([]int64{bal.PointsBalance, bal.ReservedPointsBalance, bal.LifetimePointsEarned, bal.LifetimePointsRedeemed},
		[]int64{total - minimum, 0, total, minimum}, "balance after the payout")
	same(must(c.GetRedemption(ctx, rid)).Status, "completed", "GET redemption")
	step("payout succeeded through the test helper; balance %d", bal.PointsBalance)

	// ---- the webhooks ----
	n := int64(len(expected))
	ds := recv.wait(fmt.Sprintf("all %d events of the member", n), func(ds []*delivery) bool {
		got := recv.ours(ds)
		for s := int64(1); s <= n; s++ {
			if got[s] == nil {
				return false
			}
		}
		return true
	})
	for _, d := range ds {
		event := verifyAt(d, secrets...)
		same(event.ID, d.id, "webhook-id is the event id")
		same(event.Environment, "sandbox", "event environment")
	}
	bySeq := recv.ours(ds)
	var types []string
	for s := int64(1); s <= n; s++ {
		types = append(types, bySeq[s].typ)
	}
	same(types, expected, "event types by memberSequence")
	same(bySeq[n].data["redemptionId"], rid, "redemption.completed names the redemption")
	step("%d deliveries verified; the member's %d events arrived in memberSequence 1..%d", len(ds), n, n)

	failed := recv.failed()
	check(failed != "", "the receiver refused one delivery")
	same(bySeq[1].id, failed, "member.created was the delivery answered 500")
	var answers []int
	for _, d := range ds {
		if d.id == failed {
			answers = append(answers, d.answered)
		}
	}
	check(len(answers) >= 2, "the refused webhook came again")
	same(answers[:2], []int{500, 200}, "the refused webhook came again with the same webhook-id")
	attempts := poll("the deliveries log of the retried event", func() []memberrewards.WebhookDelivery {
		var out []memberrewards.WebhookDelivery
		dit := c.IterWebhookDeliveries(ctx, endpoint.EndpointID, memberrewards.HistoryParams{})
		for dit.Next() {
			if dit.Value().EventID == failed {
				out = append(out, dit.Value())
			}
		}
		must(0, dit.Err())
		return out
	}, func(xs []memberrewards.WebhookDelivery) bool {
		saw500, saw200 := false, false
		for _, x := range xs {
			saw500 = saw500 || (x.Status != nil && *x.Status == 500)
			saw200 = saw200 || (x.Status != nil && *x.Status == 200)
		}
		return saw500 && saw200
	})
	second := false
	for _, a := range attempts {
		second = second || a.Attempt >= 2
	}
	check(second, "the log counts a second attempt")
	step("forced retry: webhook %s answered 500, delivered again with the same id and logged", failed)

	// ---- the events API from the cursor taken at the start ----
	events := poll("the member's events in the events API", func() []memberrewards.Event {
		var out []memberrewards.Event
		eit := c.IterEvents(ctx, memberrewards.EventsParams{After: cursor})
		for eit.Next() {
			if eit.Value().Data.ExternalMemberID == memberID {
				out = append(out, eit.Value())
			}
		}
		must(0, eit.Err())
		return out
	}, func(es []memberrewards.Event) bool { return int64(len(es)) >= n })
	var seqs []int64
	ids := map[string]bool{}
	for _, e := range events {
		seqs = append(seqs, e.Data.MemberSequence)
		ids[e.ID] = true
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	var want []int64
	webhookIDs := map[string]bool{}
	for s := int64(1); s <= n; s++ {
		want = append(want, s)
		webhookIDs[bySeq[s].id] = true
	}
	same(seqs, want, "events API: each event exactly once")
	same(ids, webhookIDs, "events API and webhooks name the same events")
	step("events API from the saved cursor lists the same %d events", len(events))

	// ---- rotate the secret: two signatures, each verifies alone ----
	rotated := must(c.RotateWebhookSecret(ctx, endpoint.EndpointID))
	check(strings.HasPrefix(rotated.Secret, "whsec_") && rotated.Secret != secrets[0], "a new secret")
	secrets = append(secrets, rotated.Secret)
	must(c.UpsertMember(ctx, memberrewards.MemberInput{ExternalMemberID: memberID, FirstName: "Ada", LastName: "King", Email: "ada@example.com"}))
	expected = append(expected, "member.updated")
	seq := int64(len(expected))
	d := recv.ours(recv.wait("the update after the rotation", func(ds []*delivery) bool { return recv.ours(ds)[seq] != nil }))[seq]
	same(len(strings.Split(d.header.Get("webhook-signature"), " ")), 2, "signatures during a rotation")
	for _, s := range secrets {
		verifyAt(d, s)
	}
	step("rotated secret: the next webhook carries two signatures, each secret verifies it alone")

	// ---- replay, update, close, delete ----
	replay := must(c.ReplayWebhookEvents(ctx, endpoint.EndpointID, started))
	check(replay.Replayed >= int64(len(expected)), "replay queued at least the member's %d events", len(expected))
	recv.wait("the replayed member.created", func(ds []*delivery) bool {
		count := 0
		for _, d := range ds {
			if d.id == failed {
				count++
			}
		}
		return count >= 3
	})
	desc := mark + " updated"
	changed := must(c.UpdateWebhookEndpoint(ctx, endpoint.EndpointID, memberrewards.WebhookEndpointUpdate{Description: &desc}))
	check(changed.Description != nil && *changed.Description == desc, "endpoint description updated")
	step("replay sent %d events again (member.created came a third time)", replay.Replayed)

	closed := must(c.CloseMember(ctx, memberID, "scenario done"))
	same([]interface{}{closed.Status, closed.PointsForfeited}, []interface{}{"closed", total - minimum}, "close")
	same(must(c.GetBalance(ctx, memberID)).MemberStatus, "closed", "member status after close")
	must(c.DeleteWebhookEndpoint(ctx, endpoint.EndpointID))
	_, err = c.GetWebhookEndpoint(ctx, endpoint.EndpointID)
	expectError("webhook_endpoint_not_found", err)
	step("member closed (%d points forfeited), endpoint deleted", closed.PointsForfeited)
}

func main() {
	if s := os.Getenv("MR_SCENARIO_TIMEOUT"); s != "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "setup: MR_SCENARIO_TIMEOUT:", err)
			os.Exit(2)
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	c, err := memberrewards.NewFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		os.Exit(2)
	}
	code := 0
	func() {
		defer func() {
			if r := recover(); r != nil {
				var m mismatch
				if e, ok := r.(error); ok && errors.As(e, &m) {
					fmt.Fprintln(os.Stderr, "MISMATCH:", m.msg)
				} else if e, ok := r.(error); ok {
					fmt.Fprintln(os.Stderr, "MISMATCH: unexpected failure:", e)
				} else {
					panic(r)
				}
				code = 1
			}
		}()
		run(context.Background(), c)
	}()
	if code == 0 {
		fmt.Println("scenario passed")
	}
	os.Exit(code)
}
