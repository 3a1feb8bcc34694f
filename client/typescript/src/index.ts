// Member Rewards Partner API client for Node.js 18+ (no runtime dependency).
export {
  MemberRewardsClient,
  Members,
  Transactions,
  Redemptions,
  ClubResource,
  Events,
  WebhookEndpoints,
  TestHelpers,
} from "./client";
export { pathSegment, parseRetryAfter, SDK_VERSION } from "./transport";
export type { ApiResponse, CallSpec, ClientOptions, QueryValue, RequestOptions } from "./transport";
export { MemberRewardsError, MemberRewardsConnectionError } from "./errors";
export type { ApiErrorCode, ClientErrorCode, ErrorCode, ErrorDetail, MemberRewardsErrorInit } from "./errors";
export {
  EMPTY_BODY_SHA256,
  canonicalString,
  pathWithoutQuery,
  sha256Hex,
  signRequest,
  signedHeaders,
  timestampNow,
} from "./signing";
export type { BodyBytes, SignedHeaders } from "./signing";
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  Webhook,
  WebhookVerificationError,
} from "./webhooks";
export type { HeaderSource, VerifyOptions, WebhookOptions, WebhookVerificationReason } from "./webhooks";
export type * from "./types";
