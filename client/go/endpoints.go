package memberrewards

import (
	"context"
	"strconv"
	"strings"
	"time"
)

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func before(b *int64) string {
	if b == nil {
		return ""
	}
	return strconv.FormatInt(*b, 10)
}

// ---- members ----

// UpsertMember creates (Status "created") or updates ("updated") a member: POST /api/v1/members.
func (c *Client) UpsertMember(ctx context.Context, m MemberInput, opts ...CallOption) (*MemberResult, error) {
	return call[MemberResult](c, ctx, "POST", "/api/v1/members", nil, map[string]interface{}{"member": m}, opts)
}

// CloseMember closes a member; its available balance goes back to the club's pool.
func (c *Client) CloseMember(ctx context.Context, externalMemberID, reason string, opts ...CallOption) (*ClosedMember, error) {
	body := map[string]interface{}{}
	if reason != "" {
		body["reason"] = reason
	}
	path, err := idPath("/api/v1/members/", externalMemberID, "/close")
	if err != nil {
		return nil, err
	}
	return call[ClosedMember](c, ctx, "POST", path, nil, body, opts)
}

// GetBalance: GET /api/v1/members/{id}/balance.
func (c *Client) GetBalance(ctx context.Context, externalMemberID string) (*Balance, error) {
	path, err := idPath("/api/v1/members/", externalMemberID, "/balance")
	if err != nil {
		return nil, err
	}
	return call[Balance](c, ctx, "GET", path, nil, nil, nil)
}

// PointsParams selects a page of the points history. Limit 0 is the
// service's default (50) for ListPoints and 100 for IterPoints.
type PointsParams struct {
	Filter string // all, earned, reversed, reserved, redeemed, released, adjusted
	Limit  int
	Before *int64 // the previous page's NextBefore
}

// ListPoints returns one page of the member's ledger, newest first.
func (c *Client) ListPoints(ctx context.Context, externalMemberID string, p PointsParams) (*PointsPage, error) {
	q := []param{{"filter", p.Filter}, {"limit", itoa(p.Limit)}, {"before", before(p.Before)}}
	path, err := idPath("/api/v1/members/", externalMemberID, "/points")
	if err != nil {
		return nil, err
	}
	return call[PointsPage](c, ctx, "GET", path, q, nil, nil)
}

// IterPoints walks the member's whole ledger, newest first.
func (c *Client) IterPoints(ctx context.Context, externalMemberID string, p PointsParams) *Iter[LedgerEntry] {
	p.Limit = pageSize(p.Limit)
	return historyIter(ctx, p.Before, func(ctx context.Context, cursor *int64) ([]LedgerEntry, *int64, error) {
		p.Before = cursor
		page, err := c.ListPoints(ctx, externalMemberID, p)
		if err != nil {
			return nil, nil, err
		}
		return page.Entries, page.NextBefore, nil
	})
}

// HistoryParams selects a page of a history paged by NextBefore.
type HistoryParams struct {
	Limit  int
	Before *int64
}

// ListTransactions returns one page of the member's settled and reversed transactions, newest first.
func (c *Client) ListTransactions(ctx context.Context, externalMemberID string, p HistoryParams) (*TransactionsPage, error) {
	q := []param{{"limit", itoa(p.Limit)}, {"before", before(p.Before)}}
	path, err := idPath("/api/v1/members/", externalMemberID, "/transactions")
	if err != nil {
		return nil, err
	}
	return call[TransactionsPage](c, ctx, "GET", path, q, nil, nil)
}

// IterTransactions walks the member's whole transaction history, newest first.
func (c *Client) IterTransactions(ctx context.Context, externalMemberID string, p HistoryParams) *Iter[TransactionEntry] {
	p.Limit = pageSize(p.Limit)
	return historyIter(ctx, p.Before, func(ctx context.Context, cursor *int64) ([]TransactionEntry, *int64, error) {
		p.Before = cursor
		page, err := c.ListTransactions(ctx, externalMemberID, p)
		if err != nil {
			return nil, nil, err
		}
		return page.Entries, page.NextBefore, nil
	})
}

// ---- transactions ----

// SettleTransaction awards points for a settled transaction: POST /api/v1/transactions/settled.
func (c *Client) SettleTransaction(ctx context.Context, r SettleRequest, opts ...CallOption) (*SettledResult, error) {
	t := r.Transaction
	body := map[string]interface{}{
		"eventId": r.EventID, "occurredAt": rfc3339(r.OccurredAt), "member": r.Member,
		"transaction": map[string]interface{}{
			"externalTransactionId": t.ExternalTransactionID, "merchantId": t.MerchantID,
			"merchantName": t.MerchantName, "amountMinor": t.AmountMinor, "currency": t.Currency,
			"settledAt": rfc3339(t.SettledAt),
		},
	}
	return call[SettledResult](c, ctx, "POST", "/api/v1/transactions/settled", nil, body, opts)
}

// ReverseTransaction reverses (part of) a settled transaction: POST /api/v1/transactions/reversed.
func (c *Client) ReverseTransaction(ctx context.Context, r ReverseRequest, opts ...CallOption) (*ReversedResult, error) {
	tx := map[string]interface{}{"externalTransactionId": r.Transaction.ExternalTransactionID, "currency": r.Transaction.Currency}
	if r.Transaction.AmountMinor != 0 {
		tx["amountMinor"] = r.Transaction.AmountMinor
	}
	body := map[string]interface{}{"eventId": r.EventID, "occurredAt": rfc3339(r.OccurredAt), "member": r.Member, "transaction": tx}
	if r.Reason != "" {
		body["reason"] = r.Reason
	}
	return call[ReversedResult](c, ctx, "POST", "/api/v1/transactions/reversed", nil, body, opts)
}

// ---- redemptions ----

// CreateRedemption reserves the points; the payout follows (Status payout_pending).
func (c *Client) CreateRedemption(ctx context.Context, r RedemptionRequest, opts ...CallOption) (*RedemptionAccepted, error) {
	body := map[string]interface{}{"requestId": r.RequestID, "member": r.Member, "redemption": r.Redemption}
	return call[RedemptionAccepted](c, ctx, "POST", "/api/v1/redemptions", nil, body, opts)
}

// GetRedemption: GET /api/v1/redemptions/{id}.
func (c *Client) GetRedemption(ctx context.Context, redemptionID string) (*Redemption, error) {
	path, err := idPath("/api/v1/redemptions/", redemptionID, "")
	if err != nil {
		return nil, err
	}
	return call[Redemption](c, ctx, "GET", path, nil, nil, nil)
}

// RedemptionsParams filters and pages the club's redemptions.
type RedemptionsParams struct {
	RequestID        string
	ExternalMemberID string
	Status           string // payout_pending | completed | failed
	Limit            int
	Before           *int64
}

// ListRedemptions returns one page of the club's redemptions, newest first.
func (c *Client) ListRedemptions(ctx context.Context, p RedemptionsParams) (*RedemptionsPage, error) {
	q := []param{{"requestId", p.RequestID}, {"externalMemberId", p.ExternalMemberID}, {"status", p.Status},
		{"limit", itoa(p.Limit)}, {"before", before(p.Before)}}
	return call[RedemptionsPage](c, ctx, "GET", "/api/v1/redemptions", q, nil, nil)
}

// IterRedemptions walks every matching redemption, newest first.
func (c *Client) IterRedemptions(ctx context.Context, p RedemptionsParams) *Iter[Redemption] {
	p.Limit = pageSize(p.Limit)
	return historyIter(ctx, p.Before, func(ctx context.Context, cursor *int64) ([]Redemption, *int64, error) {
		p.Before = cursor
		page, err := c.ListRedemptions(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		return page.Entries, page.NextBefore, nil
	})
}

// PayoutReport is the outcome TestHelperPayout reports for a payout:
// PayoutReport{Outcome: PayoutSucceeded}, or
// PayoutReport{Outcome: PayoutFailed, FailureReason: "account closed"}. The
// reason is optional: left out, none is sent.
type PayoutReport struct {
	Outcome       PayoutOutcome
	FailureReason string
}

// TestHelperPayout (sandbox only) moves a redemption's payout as the
// operator's report would. It returns the redemption after the move.
func (c *Client) TestHelperPayout(ctx context.Context, redemptionID string, report PayoutReport, opts ...CallOption) (*Redemption, error) {
	body := map[string]interface{}{"outcome": report.Outcome}
	if report.FailureReason != "" {
		body["failureReason"] = report.FailureReason
	}
	path, err := idPath("/api/v1/test-helpers/redemptions/", redemptionID, "/payout")
	if err != nil {
		return nil, err
	}
	return call[Redemption](c, ctx, "POST", path, nil, body, opts)
}

// ---- club ----

// GetClub returns the calling key's club: GET /api/v1/club.
func (c *Client) GetClub(ctx context.Context) (*Club, error) {
	return call[Club](c, ctx, "GET", "/api/v1/club", nil, nil, nil)
}

// ---- events ----

// EventsParams: After is a previous page's NextAfter (empty: from the oldest kept event).
type EventsParams struct {
	After string
	Limit int
	Types []string
}

// ListEvents returns one page of the club's events, oldest first.
func (c *Client) ListEvents(ctx context.Context, p EventsParams) (*EventsPage, error) {
	q := []param{{"after", p.After}, {"limit", itoa(p.Limit)}, {"types", strings.Join(p.Types, ",")}}
	return call[EventsPage](c, ctx, "GET", "/api/v1/events", q, nil, nil)
}

// IterEvents walks the events after p.After, oldest first, until a page
// comes back empty; NextAfter on the iterator is the cursor to go on from.
func (c *Client) IterEvents(ctx context.Context, p EventsParams) *EventIter {
	p.Limit = pageSize(p.Limit)
	it := &EventIter{nextAfter: p.After}
	cursor := p.After
	it.Iter = &Iter[Event]{ctx: ctx, fetch: func(ctx context.Context) ([]Event, bool, error) {
		p.After = cursor
		page, err := c.ListEvents(ctx, p)
		if err != nil {
			return nil, false, err
		}
		more := len(page.Entries) > 0 && page.NextAfter != nil && *page.NextAfter != ""
		if page.NextAfter != nil && *page.NextAfter != "" {
			cursor = *page.NextAfter
		}
		return page.Entries, more, nil
	}, drained: func() { it.nextAfter = cursor }}
	return it
}

// ---- webhook endpoints ----

// CreateWebhookEndpoint: the answer carries the signing secret; keep it.
func (c *Client) CreateWebhookEndpoint(ctx context.Context, in WebhookEndpointInput, opts ...CallOption) (*WebhookEndpoint, error) {
	body := map[string]interface{}{"url": in.URL}
	if len(in.EventTypes) > 0 {
		body["eventTypes"] = in.EventTypes
	}
	if in.Description != "" {
		body["description"] = in.Description
	}
	return call[WebhookEndpoint](c, ctx, "POST", "/api/v1/webhook-endpoints", nil, body, opts)
}

// ListWebhookEndpoints returns all of the club's endpoints (no secrets).
func (c *Client) ListWebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error) {
	var out struct {
		Entries []WebhookEndpoint `json:"entries"`
	}
	if err := c.do(ctx, "GET", "/api/v1/webhook-endpoints", nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Entries, nil
}

// GetWebhookEndpoint returns one endpoint (no secret).
func (c *Client) GetWebhookEndpoint(ctx context.Context, endpointID string) (*WebhookEndpoint, error) {
	path, err := idPath("/api/v1/webhook-endpoints/", endpointID, "")
	if err != nil {
		return nil, err
	}
	return call[WebhookEndpoint](c, ctx, "GET", path, nil, nil, nil)
}

// UpdateWebhookEndpoint changes what u sets; Status "enabled" resumes delivery.
func (c *Client) UpdateWebhookEndpoint(ctx context.Context, endpointID string, u WebhookEndpointUpdate, opts ...CallOption) (*WebhookEndpoint, error) {
	body := map[string]interface{}{}
	if u.URL != nil {
		body["url"] = *u.URL
	}
	if u.EventTypes != nil {
		body["eventTypes"] = u.EventTypes
	}
	if u.Description != nil {
		body["description"] = *u.Description
	}
	if u.Status != nil {
		body["status"] = *u.Status
	}
	path, err := idPath("/api/v1/webhook-endpoints/", endpointID, "")
	if err != nil {
		return nil, err
	}
	return call[WebhookEndpoint](c, ctx, "POST", path, nil, body, opts)
}

// RotateWebhookSecret gives the endpoint a new secret; the old one keeps
// signing beside it for 24 hours.
func (c *Client) RotateWebhookSecret(ctx context.Context, endpointID string, opts ...CallOption) (*WebhookEndpoint, error) {
	path, err := idPath("/api/v1/webhook-endpoints/", endpointID, "/rotate-secret")
	if err != nil {
		return nil, err
	}
	return call[WebhookEndpoint](c, ctx, "POST", path, nil, map[string]interface{}{}, opts)
}

// DeleteWebhookEndpoint stops deliveries; the endpoint is then webhook_endpoint_not_found.
func (c *Client) DeleteWebhookEndpoint(ctx context.Context, endpointID string, opts ...CallOption) (*DeletedWebhookEndpoint, error) {
	path, err := idPath("/api/v1/webhook-endpoints/", endpointID, "/delete")
	if err != nil {
		return nil, err
	}
	return call[DeletedWebhookEndpoint](c, ctx, "POST", path, nil, map[string]interface{}{}, opts)
}

// ListWebhookDeliveries returns one page of recent attempts, newest first.
func (c *Client) ListWebhookDeliveries(ctx context.Context, endpointID string, p HistoryParams) (*DeliveriesPage, error) {
	q := []param{{"limit", itoa(p.Limit)}, {"before", before(p.Before)}}
	path, err := idPath("/api/v1/webhook-endpoints/", endpointID, "/deliveries")
	if err != nil {
		return nil, err
	}
	return call[DeliveriesPage](c, ctx, "GET", path, q, nil, nil)
}

// IterWebhookDeliveries walks every kept attempt of the endpoint, newest first.
func (c *Client) IterWebhookDeliveries(ctx context.Context, endpointID string, p HistoryParams) *Iter[WebhookDelivery] {
	p.Limit = pageSize(p.Limit)
	return historyIter(ctx, p.Before, func(ctx context.Context, cursor *int64) ([]WebhookDelivery, *int64, error) {
		p.Before = cursor
		page, err := c.ListWebhookDeliveries(ctx, endpointID, p)
		if err != nil {
			return nil, nil, err
		}
		return page.Entries, page.NextBefore, nil
	})
}

// ReplayWebhookEvents sends again every event since `since` that matches the endpoint.
func (c *Client) ReplayWebhookEvents(ctx context.Context, endpointID string, since time.Time, opts ...CallOption) (*ReplayResult, error) {
	path, err := idPath("/api/v1/webhook-endpoints/", endpointID, "/replay")
	if err != nil {
		return nil, err
	}
	return call[ReplayResult](c, ctx, "POST", path, nil,
		map[string]interface{}{"since": rfc3339(since)}, opts)
}
