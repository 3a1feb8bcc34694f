// One error type for every failure a call can end in: the API's own error
// envelope, or no usable answer at all (status 0).

export interface ErrorDetail {
  /** JSON path of the field, e.g. "member.email", or a query parameter name. */
  field: string;
  problem: string;
}

/** Codes the client itself uses when no API error object came back. */
export type ClientErrorCode = "connection_error" | "timeout" | "invalid_response" | "aborted";

export interface MemberRewardsErrorInit {
  code: string;
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
  readonly code: string;
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
  constructor(init: Omit<MemberRewardsErrorInit, "status"> & { code: ClientErrorCode }) {
    super({ ...init, status: 0 });
    this.name = "MemberRewardsConnectionError";
  }
}
