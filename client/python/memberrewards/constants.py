"""The API's fixed strings as constants: each is the wire string itself, so
`err.code == ErrorCode.DUPLICATE_TRANSACTION` and `event.type == EventType.MEMBER_CREATED`
compare with what the service sent (a code newer than this SDK is still a plain string).
"""

from typing import Final, Literal



class ErrorCode:
    """`MemberRewardsError.code`: the API's codes (docs/api-reference.md, "Errors"), then the client's own."""
    INVALID_REQUEST: Final = "invalid_request"
    UNAUTHORIZED: Final = "unauthorized"
    INVALID_SIGNATURE: Final = "invalid_signature"
    STALE_TIMESTAMP: Final = "stale_timestamp"
    PARTNER_NOT_FOUND: Final = "partner_not_found"
    CARDHOLDER_NOT_FOUND: Final = "cardholder_not_found"
    TRANSACTION_NOT_FOUND: Final = "transaction_not_found"
    REDEMPTION_NOT_FOUND: Final = "redemption_not_found"
    WEBHOOK_ENDPOINT_NOT_FOUND: Final = "webhook_endpoint_not_found"
    NOT_FOUND: Final = "not_found"
    METHOD_NOT_ALLOWED: Final = "method_not_allowed"
    IDEMPOTENCY_IN_PROGRESS: Final = "idempotency_in_progress"
    MEMBER_CLOSED: Final = "member_closed"
    DUPLICATE_TRANSACTION: Final = "duplicate_transaction"
    DUPLICATE_REQUEST_ID: Final = "duplicate_request_id"
    TRANSACTION_ALREADY_REVERSED: Final = "transaction_already_reversed"
    MEMBER_HAS_PENDING_REDEMPTIONS: Final = "member_has_pending_redemptions"
    PAYOUT_STATE_CONFLICT: Final = "payout_state_conflict"
    PAYLOAD_TOO_LARGE: Final = "payload_too_large"
    DUPLICATE_IDEMPOTENCY_CONFLICT: Final = "duplicate_idempotency_conflict"
    UNSUPPORTED_CURRENCY: Final = "unsupported_currency"
    INSUFFICIENT_PARTNER_POINTS_POOL: Final = "insufficient_partner_points_pool"
    INSUFFICIENT_POINTS_BALANCE: Final = "insufficient_points_balance"
    MISSING_PAYOUT_REFERENCE: Final = "missing_payout_reference"
    INSUFFICIENT_PARTNER_CASH_CAPACITY: Final = "insufficient_partner_cash_capacity"
    PARTNER_FUNDING_RESTRICTED: Final = "partner_funding_restricted"
    MINIMUM_REDEMPTION: Final = "minimum_redemption"
    INVALID_REDEMPTION_POINTS: Final = "invalid_redemption_points"
    INVALID_REDEMPTION_VALUE: Final = "invalid_redemption_value"
    PARTNER_CONFIGURATION_INCOMPLETE: Final = "partner_configuration_incomplete"
    REVERSAL_EXCEEDS_SETTLED_AMOUNT: Final = "reversal_exceeds_settled_amount"
    RATE_LIMITED: Final = "rate_limited"
    INTERNAL_ERROR: Final = "internal_error"
    NOT_IMPLEMENTED: Final = "not_implemented"
    SERVICE_UNAVAILABLE: Final = "service_unavailable"
    # No API error object came back, or the call was refused before sending (invalid_argument).
    CONNECTION_ERROR: Final = "connection_error"
    TIMEOUT: Final = "timeout"
    INVALID_RESPONSE: Final = "invalid_response"
    ABORTED: Final = "aborted"
    INVALID_ARGUMENT: Final = "invalid_argument"


class EventType:
    """`Event.type`, and the values of a webhook endpoint's `event_types`."""
    MEMBER_CREATED: Final = "member.created"
    MEMBER_UPDATED: Final = "member.updated"
    MEMBER_CLOSED: Final = "member.closed"
    TRANSACTION_SETTLED: Final = "transaction.settled"
    TRANSACTION_REVERSED: Final = "transaction.reversed"
    REDEMPTION_CREATED: Final = "redemption.created"
    REDEMPTION_COMPLETED: Final = "redemption.completed"
    REDEMPTION_FAILED: Final = "redemption.failed"
    POINTS_ADJUSTED: Final = "points.adjusted"


class PayoutOutcome:
    """The outcome `test_helper_payout` reports for a sandbox payout."""
    SUCCEEDED: Final = "succeeded"
    FAILED: Final = "failed"

# The outcomes as a type, for a checker: PayoutOutcome's constants are of it.
PayoutOutcomeName = Literal["succeeded", "failed"]
