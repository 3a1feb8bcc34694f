package com.memberrewards.partner;

/** No answer: the connection failed or was reset, the timeout passed, or the thread was interrupted. Status 0. */
public final class MemberRewardsConnectionException extends MemberRewardsException {
  private static final long serialVersionUID = 1L;

  public MemberRewardsConnectionException(String code, String message, String idempotencyKey, Throwable cause) {
    super(code, message, 0, null, null, null, null, idempotencyKey, cause);
  }
}
