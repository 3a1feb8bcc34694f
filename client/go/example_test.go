package memberrewards_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	memberrewards "memberrewards.example/sdk"
)

// The examples without an Output comment need a sandbox (MR_BASE_URL and
// the rest): go test compiles them, it does not run them.

func ExampleNewWebhook() {
	wh, err := memberrewards.NewWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") // the endpoint's secret
	if err != nil {
		log.Fatal(err)
	}
	body := []byte(`{"id":"evt_1","type":"member.created","createdAt":"2026-11-26T10:00:00.000Z","environment":"sandbox","data":{"externalMemberId":"member-1","memberSequence":1}}`)
	now := time.Now().Unix()
	header := http.Header{}
	header.Set("webhook-id", "evt_1")
	header.Set("webhook-timestamp", fmt.Sprint(now))
	header.Set("webhook-signature", wh.Sign("evt_1", now, body)) // as the service signs it
	event, err := wh.Verify(body, header)                        // the raw body, before parsing it
	if err != nil {
		fmt.Println("refused:", err) // answer 400
		return
	}
	fmt.Println(event.Type, event.Data.ExternalMemberID, event.Data.MemberSequence)
	// Output: member.created member-1 1
}

func ExampleClient_UpsertMember() {
	c, err := memberrewards.NewFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.UpsertMember(context.Background(), memberrewards.MemberInput{
		ExternalMemberID: "member-7f3a", FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
		Wallet: &memberrewards.Wallet{Provider: "bank", WalletRef: "wallet-7f3a", Status: "active",
			BankAccount: &memberrewards.BankAccount{AccountNumber: "12345678", SortCode: "112233", Name: "Ada Lovelace"}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.PayoutReady) // created true
}

func ExampleClient_SettleTransaction() {
	c, err := memberrewards.NewFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	now := time.Now() // taken once: a retry under the same key must send the same body
	req := memberrewards.SettleRequest{EventID: "ev-7f3a-1", OccurredAt: now,
		Member: memberrewards.MemberRef{ExternalMemberID: "member-7f3a"},
		Transaction: memberrewards.SettledTransaction{ExternalTransactionID: "tx-7f3a-1", MerchantID: "m-42",
			MerchantName: "Corner Shop", AmountMinor: 12345, Currency: "GBP", SettledAt: now}}
	res, err := c.SettleTransaction(context.Background(), req, memberrewards.WithIdempotencyKey("settle-7f3a-1"))
	var apiErr *memberrewards.APIError
	if errors.As(err, &apiErr) && apiErr.Code == memberrewards.CodeDuplicateTransaction {
		return // settled before under another key
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.PointsAwarded, res.Balances.PointsBalance, res.IdempotentReplay)
}

func ExampleClient_ReverseTransaction() {
	c, err := memberrewards.NewFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.ReverseTransaction(context.Background(), memberrewards.ReverseRequest{EventID: "ev-7f3a-2",
		OccurredAt: time.Now(), Member: memberrewards.MemberRef{ExternalMemberID: "member-7f3a"},
		Transaction: memberrewards.ReversedTransaction{ExternalTransactionID: "tx-7f3a-1",
			AmountMinor: 2000, Currency: "GBP"}, // AmountMinor 0: all that is left
		Reason: "partial refund"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.PointsReversed, res.Balances.PointsBalance)
}

func ExampleClient_CreateRedemption() {
	c, err := memberrewards.NewFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	accepted, err := c.CreateRedemption(ctx, memberrewards.RedemptionRequest{RequestID: "rq-7f3a",
		Member:     memberrewards.MemberRef{ExternalMemberID: "member-7f3a"},
		Redemption: memberrewards.RedemptionAmount{Points: 100, Currency: "GBP"}}) // points, not money
	if err != nil {
		log.Fatal(err)
	}
	// Sandbox only: the payout's outcome.
	paid, err := c.TestHelperPayout(ctx, accepted.RedemptionID,
		memberrewards.PayoutReport{Outcome: memberrewards.PayoutSucceeded}) // or PayoutFailed, FailureReason: "..."
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(accepted.CashValueMinor, accepted.Currency, paid.Status, paid.Payout.Status) // ... completed succeeded
}

func ExampleClient_IterPoints() {
	c, err := memberrewards.NewFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	it := c.IterPoints(context.Background(), "member-7f3a", memberrewards.PointsParams{Limit: 50}) // Limit: page size
	for it.Next() {
		e := it.Value()
		fmt.Println(e.CreatedAt, e.EntryType, e.PointsDelta)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
}

func ExampleClient_CreateWebhookEndpoint() {
	c, err := memberrewards.NewFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	endpoint, err := c.CreateWebhookEndpoint(context.Background(), memberrewards.WebhookEndpointInput{
		URL:        "https://partner.example.com/hooks",
		EventTypes: []string{memberrewards.EventRedemptionCompleted, memberrewards.EventRedemptionFailed}, // empty: every type
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(endpoint.EndpointID, endpoint.Secret) // keep the secret: it is shown once
}
