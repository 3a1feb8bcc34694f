package com.memberrewards.partner;

import java.util.List;

/**
 * Query parameters of the list calls, built fluently and immutable:
 * {@code ListParams.limit(10).filter("earned")}. Each call reads the ones it
 * knows: limit and before (every newest-first list), filter (points),
 * requestId, externalMemberId and status (redemptions), after and types (events).
 */
public record ListParams(Integer limit, Long before, String filter, String requestId, String externalMemberId,
    String status, String after, List<String> types) {
  public static final ListParams DEFAULT = new ListParams(null, null, null, null, null, null, null, null);

  public static ListParams limit(int limit) {
    return DEFAULT.withLimit(limit);
  }

  public ListParams withLimit(int v) { return new ListParams(v, before, filter, requestId, externalMemberId, status, after, types); }
  public ListParams withBefore(Long v) { return new ListParams(limit, v, filter, requestId, externalMemberId, status, after, types); }
  /** Points history: all, earned, reversed, reserved, redeemed, released, adjusted. */
  public ListParams filter(String v) { return new ListParams(limit, before, v, requestId, externalMemberId, status, after, types); }
  public ListParams requestId(String v) { return new ListParams(limit, before, filter, v, externalMemberId, status, after, types); }
  public ListParams externalMemberId(String v) { return new ListParams(limit, before, filter, requestId, v, status, after, types); }
  /** Redemptions: payout_pending, completed, failed. */
  public ListParams status(String v) { return new ListParams(limit, before, filter, requestId, externalMemberId, v, after, types); }
  /** Events: the nextAfter of a previous page. */
  public ListParams after(String v) { return new ListParams(limit, before, filter, requestId, externalMemberId, status, v, types); }
  /** Events: only these types. */
  public ListParams types(List<String> v) { return new ListParams(limit, before, filter, requestId, externalMemberId, status, after, v == null ? null : List.copyOf(v)); }
}
