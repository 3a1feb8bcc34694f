// Package memberrewards is the Go SDK of the Member Rewards partner API
// (standard library only).
//
// A Client signs every request (contract section 2), gives every POST an
// idempotency key that its retries reuse, retries connection errors, 409
// idempotency_in_progress, 429 and 503 with exponential backoff and jitter
// (honouring Retry-After), and returns failures as *APIError. Iterators page
// histories, redemptions and events; a Webhook (NewWebhook(secret), then
// Verify(body, header)) checks the service's Standard Webhooks signatures.
//
//	client, err := memberrewards.NewFromEnv() // MR_BASE_URL, MR_KEY_ID, MR_KEY_SECRET, MR_PARTNER_REF
//	balance, err := client.GetBalance(ctx, "member-1")
package memberrewards
