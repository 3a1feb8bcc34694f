package com.memberrewards.partner;

/** The answer to {@code POST /members}: status "created" (HTTP 201) or "updated" (200). */
public record MemberResult(String externalMemberId, String status, boolean payoutReady, boolean idempotentReplay) {
  public boolean created() {
    return "created".equals(status);
  }

  static MemberResult from(JsonObject o) {
    return from(o, false);
  }

  static MemberResult from(JsonObject o, boolean replay) {
    return new MemberResult(o.getString("externalMemberId"), o.getString("status"), o.getBoolean("payoutReady"), replay);
  }
}
