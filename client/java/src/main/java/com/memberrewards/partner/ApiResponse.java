package com.memberrewards.partner;

/** A successful answer: its data, HTTP status, X-Request-Id, whether it was an idempotent replay, and how many attempts it took. */
public record ApiResponse<T>(T data, int status, String requestId, boolean idempotentReplay, String idempotencyKey,
    int attempts) {}
