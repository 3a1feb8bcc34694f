package com.memberrewards.partner;

import java.util.List;

/**
 * A failed call. {@link #code()} is the API's stable error code
 * ({@code invalid_request}, {@code insufficient_points_balance}, ...) or, when
 * no API error came back, one of {@code connection_error}, {@code timeout},
 * {@code interrupted}, {@code invalid_response}; {@link #status()} is the HTTP
 * status (0 when no answer came).
 */
public class MemberRewardsException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** One field at fault in an {@code invalid_request}. */
  public record ErrorDetail(String field, String problem) {}

  private final String code;
  private final int status;
  private final String requestId;
  private final transient List<ErrorDetail> details;
  private final String redemptionId;
  private final Long retryAfterSeconds;
  private final String idempotencyKey;

  public MemberRewardsException(String code, String message, int status, String requestId, List<ErrorDetail> details,
      String redemptionId, Long retryAfterSeconds, String idempotencyKey, Throwable cause) {
    super(message, cause);
    this.code = code;
    this.status = status;
    this.requestId = requestId;
    this.details = details == null ? List.of() : List.copyOf(details);
    this.redemptionId = redemptionId;
    this.retryAfterSeconds = retryAfterSeconds;
    this.idempotencyKey = idempotencyKey;
  }

  /** The API's stable error code, or the client's own (see {@link ErrorCode}); a code newer than this SDK too. */
  public String code() {
    return code;
  }

  /** The code as a constant, or null for a code newer than this SDK. */
  public ErrorCode errorCode() {
    return ErrorCode.of(code);
  }

  /** Whether the code is {@code expected}: {@code e.is(ErrorCode.DUPLICATE_TRANSACTION)}. */
  public boolean is(ErrorCode expected) {
    return expected.wire().equals(code);
  }

  public int status() {
    return status;
  }

  /** The id to quote to support (the error's requestId, else the X-Request-Id header); may be null. */
  public String requestId() {
    return requestId;
  }

  /** The fields at fault of an {@code invalid_request}; empty otherwise. */
  public List<ErrorDetail> details() {
    return details;
  }

  /** On {@code duplicate_request_id}: the first redemption made with that requestId; else null. */
  public String redemptionId() {
    return redemptionId;
  }

  /** The answer's Retry-After in seconds, or null. */
  public Long retryAfterSeconds() {
    return retryAfterSeconds;
  }

  /** The idempotency key the call used (POST): retrying with it stays exactly-once. Null for GET. */
  public String idempotencyKey() {
    return idempotencyKey;
  }

  @Override
  public String toString() {
    return "MemberRewardsException{code=" + code + ", status=" + status + ", requestId=" + requestId + ", message="
        + getMessage() + (details.isEmpty() ? "" : ", details=" + details)
        + (redemptionId == null ? "" : ", redemptionId=" + redemptionId) + "}";
  }
}
