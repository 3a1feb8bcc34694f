package memberrewards

// The API's fixed strings as constants. Each is the wire string itself:
// compare APIError.Code with the Code* ones and Event.Type with the Event*
// ones (a code newer than this SDK is still a plain string).

// Error codes of APIError.Code (docs/api-reference.md, "Errors").
const (
	CodeInvalidRequest                  = "invalid_request"
	CodeUnauthorized                    = "unauthorized"
	CodeInvalidSignature                = "invalid_signature"
	CodeStaleTimestamp                  = "stale_timestamp"
	CodePartnerNotFound                 = "partner_not_found"
	CodeCardholderNotFound              = "cardholder_not_found"
	CodeTransactionNotFound             = "transaction_not_found"
	CodeRedemptionNotFound              = "redemption_not_found"
	CodeWebhookEndpointNotFound         = "webhook_endpoint_not_found"
	CodeNotFound                        = "not_found"
	CodeMethodNotAllowed                = "method_not_allowed"
	CodeIDempotencyInProgress           = "idempotency_in_progress"
	CodeMemberClosed                    = "member_closed"
	CodeDuplicateTransaction            = "duplicate_transaction"
	CodeDuplicateRequestID              = "duplicate_request_id"
	CodeTransactionAlreadyReversed      = "transaction_already_reversed"
	CodeMemberHasPendingRedemptions     = "member_has_pending_redemptions"
	CodePayoutStateConflict             = "payout_state_conflict"
	CodePayloadTooLarge                 = "payload_too_large"
	CodeDuplicateIDempotencyConflict    = "duplicate_idempotency_conflict"
	CodeUnsupportedCurrency             = "unsupported_currency"
	CodeInsufficientPartnerPointsPool   = "insufficient_partner_points_pool"
	CodeInsufficientPointsBalance       = "insufficient_points_balance"
	CodeMissingPayoutReference          = "missing_payout_reference"
	CodeInsufficientPartnerCashCapacity = "insufficient_partner_cash_capacity"
	CodePartnerFundingRestricted        = "partner_funding_restricted"
	CodeMinimumRedemption               = "minimum_redemption"
	CodeInvalidRedemptionPoints         = "invalid_redemption_points"
	CodeInvalidRedemptionValue          = "invalid_redemption_value"
	CodePartnerConfigurationIncomplete  = "partner_configuration_incomplete"
	CodeReversalExceedsSettledAmount    = "reversal_exceeds_settled_amount"
	CodeRateLimited                     = "rate_limited"
	CodeInternalError                   = "internal_error"
	CodeNotImplemented                  = "not_implemented"
	CodeServiceUnavailable              = "service_unavailable"
	// The answer was a success without the documented shape, or not the API's envelope.
	CodeInvalidResponse    = "invalid_response"
	CodeUnexpectedResponse = "unexpected_response"
)

// Event types: Event.Type, and the values of WebhookEndpointInput.EventTypes.
const (
	EventMemberCreated       = "member.created"
	EventMemberUpdated       = "member.updated"
	EventMemberClosed        = "member.closed"
	EventTransactionSettled  = "transaction.settled"
	EventTransactionReversed = "transaction.reversed"
	EventRedemptionCreated   = "redemption.created"
	EventRedemptionCompleted = "redemption.completed"
	EventRedemptionFailed    = "redemption.failed"
	EventPointsAdjusted      = "points.adjusted"
)

// PayoutOutcome is what TestHelperPayout reports for a sandbox payout.
type PayoutOutcome string

// The two outcomes of a payout.
const (
	PayoutSucceeded PayoutOutcome = "succeeded"
	PayoutFailed    PayoutOutcome = "failed"
)
