package com.memberrewards.partner;

/**
 * A webhook delivery that is not authentic (or not usable), or a secret that
 * is none; {@link #reason()} says which check failed. Unchecked, like
 * {@link MemberRewardsException}: answer the delivery 400.
 */
public final class WebhookVerificationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The check that failed. */
  public enum Reason {
    MISSING_HEADER("missing_header"),
    INVALID_SECRET("invalid_secret"),
    INVALID_TIMESTAMP("invalid_timestamp"),
    TIMESTAMP_OUT_OF_TOLERANCE("timestamp_out_of_tolerance"),
    NO_MATCHING_SIGNATURE("no_matching_signature"),
    INVALID_PAYLOAD("invalid_payload");

    private final String code;

    Reason(String code) {
      this.code = code;
    }

    /** The same name every SDK uses, e.g. "timestamp_out_of_tolerance". */
    public String code() {
      return code;
    }
  }

  private final Reason reason;

  public WebhookVerificationException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
