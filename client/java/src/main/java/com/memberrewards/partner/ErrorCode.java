package com.memberrewards.partner;

/**
 * The codes of {@link MemberRewardsException#code()}: the API's (docs/api-reference.md,
 * "Errors"), then the client's own when no API error came back. {@link #wire()} is
 * the string itself; {@link MemberRewardsException#is(ErrorCode)} compares.
 */
public enum ErrorCode {
  INVALID_REQUEST("invalid_request"),
  UNAUTHORIZED("unauthorized"),
  INVALID_SIGNATURE("invalid_signature"),
  STALE_TIMESTAMP("stale_timestamp"),
  PARTNER_NOT_FOUND("partner_not_found"),
  CARDHOLDER_NOT_FOUND("cardholder_not_found"),
  TRANSACTION_NOT_FOUND("transaction_not_found"),
  REDEMPTION_NOT_FOUND("redemption_not_found"),
  WEBHOOK_ENDPOINT_NOT_FOUND("webhook_endpoint_not_found"),
  NOT_FOUND("not_found"),
  METHOD_NOT_ALLOWED("method_not_allowed"),
  IDEMPOTENCY_IN_PROGRESS("idempotency_in_progress"),
  MEMBER_CLOSED("member_closed"),
  DUPLICATE_TRANSACTION("duplicate_transaction"),
  DUPLICATE_REQUEST_ID("duplicate_request_id"),
  TRANSACTION_ALREADY_REVERSED("transaction_already_reversed"),
  MEMBER_HAS_PENDING_REDEMPTIONS("member_has_pending_redemptions"),
  PAYOUT_STATE_CONFLICT("payout_state_conflict"),
  PAYLOAD_TOO_LARGE("payload_too_large"),
  DUPLICATE_IDEMPOTENCY_CONFLICT("duplicate_idempotency_conflict"),
  UNSUPPORTED_CURRENCY("unsupported_currency"),
  INSUFFICIENT_PARTNER_POINTS_POOL("insufficient_partner_points_pool"),
  INSUFFICIENT_POINTS_BALANCE("insufficient_points_balance"),
  MISSING_PAYOUT_REFERENCE("missing_payout_reference"),
  INSUFFICIENT_PARTNER_CASH_CAPACITY("insufficient_partner_cash_capacity"),
  PARTNER_FUNDING_RESTRICTED("partner_funding_restricted"),
  MINIMUM_REDEMPTION("minimum_redemption"),
  INVALID_REDEMPTION_POINTS("invalid_redemption_points"),
  INVALID_REDEMPTION_VALUE("invalid_redemption_value"),
  PARTNER_CONFIGURATION_INCOMPLETE("partner_configuration_incomplete"),
  REVERSAL_EXCEEDS_SETTLED_AMOUNT("reversal_exceeds_settled_amount"),
  RATE_LIMITED("rate_limited"),
  INTERNAL_ERROR("internal_error"),
  NOT_IMPLEMENTED("not_implemented"),
  SERVICE_UNAVAILABLE("service_unavailable"),
  // No API error object came back.
  CONNECTION_ERROR("connection_error"),
  TIMEOUT("timeout"),
  INTERRUPTED("interrupted"),
  INVALID_RESPONSE("invalid_response");

  private final String wire;

  ErrorCode(String wire) {
    this.wire = wire;
  }

  /** The code as the API sends it, e.g. "duplicate_transaction". */
  public String wire() {
    return wire;
  }

  /** The constant of a code, or null for one newer than this SDK. */
  public static ErrorCode of(String wire) {
    for (ErrorCode c : values()) {
      if (c.wire.equals(wire)) return c;
    }
    return null;
  }
}
