// One error type for every failure a call can end in: the API's own error
// envelope, or no usable answer at all (status 0).

export interface ErrorDetail {
  /** JSON path of the field, e.g. "member.email", or a query parameter name. */
  field: string;
  problem: string;
}

/** Every error code of the API (docs/api-reference.md, "Errors"). */
export type ApiErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "invalid_signature"
  | "stale_timestamp"
  | "partner_not_found"
  | "cardholder_not_found"
  | "transaction_not_found"
  | "redemption_not_found"
  | "webhook_endpoint_not_found"
  | "not_found"
  | "method_not_allowed"
  | "idempotency_in_progress"
  | "member_closed"
  | "duplicate_transaction"
  | "duplicate_request_id"
  | "transaction_already_reversed"
  | "member_has_pending_redemptions"
  | "payout_state_conflict"
  | "payload_too_large"
  | "duplicate_idempotency_conflict"
  | "unsupported_currency"
  | "insufficient_partner_points_pool"
  | "insufficient_points_balance"
  | "missing_payout_reference"
  | "insufficient_partner_cash_capacity"
  | "partner_funding_restricted"
  | "minimum_redemption"
  | "invalid_redemption_points"
  | "invalid_redemption_value"
  | "partner_configuration_incomplete"
  | "reversal_exceeds_settled_amount"
  | "rate_limited"
  | "internal_error"
  | "not_implemented"
  | "service_unavailable";

/**
 * Codes the client itself uses when no API error object came back, and
 * `invalid_argument` for a call refused before anything was sent (an empty
 * or malformed id in the path).
 */
export type ClientErrorCode = "connection_error" | "timeout" | "invalid_response" | "aborted" | "invalid_argument";

/** `code` of a MemberRewardsError: narrow on it with `===`; a code newer than this SDK is still a string. */
export type ErrorCode = ApiErrorCode | ClientErrorCode | (string & {});

export interface MemberRewardsErrorInit {
  code: ErrorCode;
  message: string;
  status: number;
  requestId?: string | null;
  details?: ErrorDetail[];
  redemptionId?: string;
  retryAfterSeconds?: number;
  idempotencyKey?: string;
  cause?: unknown;
}

/**
 * A failed call. `code` is the API's stable error code (`invalid_request`,
 * `insufficient_points_balance`, ...) or one of ClientErrorCode; `status` is
 * the HTTP status (0 when no answer came); `requestId` is the one to quote to
 * support; `redemptionId` names the first redemption on `duplicate_request_id`.
 */
export class MemberRewardsError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly requestId: string | null;
  readonly details: ErrorDetail[];
  readonly redemptionId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  /** The idempotency key the call used (POST): retry with it to stay exactly-once. */
  readonly idempotencyKey: string | undefined;

  constructor(init: MemberRewardsErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "MemberRewardsError";
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId ?? null;
    this.details = init.details ?? [];
    this.redemptionId = init.redemptionId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.idempotencyKey = init.idempotencyKey;
  }
}

/** No answer: the connection failed, was reset, or the timeout passed. */
export class MemberRewardsConnectionError extends MemberRewardsError {
  constructor(init: Omit<MemberRewardsErrorInit, "status"> & { code: Exclude<ClientErrorCode, "invalid_argument"> }) {
    super({ ...init, status: 0 });
    this.name = "MemberRewardsConnectionError";
  }
}
