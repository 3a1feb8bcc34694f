// Request and response shapes of the partner API (docs/api-reference.md,
// contract sections 4-10). Requests omit `partnerRef`: the client adds the
// one it was configured with. Timestamps in answers are RFC 3339 strings.

/** RFC 3339 UTC text, or a Date (sent as its toISOString()). */
export type Timestamp = string | Date;

/**
 * An answer: the data as the service sent it, and whether it replays the
 * first answer to the same idempotency key (`X-MR-Idempotent-Replay`; a
 * retry of a call that was applied once already). Always false for a GET.
 */
export type Answer<T> = T & { readonly idempotentReplay: boolean };

export type MemberStatus = "active" | "closed";
export type MemberUpsertStatus = "created" | "updated";
export type WalletStatus = "active" | "suspended" | "closed";
export type TransactionType = "settled" | "reversed";
export type WebhookEndpointStatus = "enabled" | "disabled";
/** What the sandbox test helper makes of a payout. */
export type PayoutOutcome = "succeeded" | "failed";

// ---- members ----

export interface BankAccount {
  /** Exactly 8 digits. */
  accountNumber: string;
  /** Exactly 6 digits, no dashes. */
  sortCode: string;
  /** Account holder, 1-200 bytes. */
  name: string;
}

export interface Wallet {
  provider?: string;
  walletRef?: string;
  /** `suspended` or `closed` make the member not payout-ready. */
  status?: WalletStatus;
  bankAccount?: BankAccount;
}

export interface MemberInput {
  externalMemberId: string;
  firstName: string;
  lastName: string;
  email: string;
  /** Omitted on update: the stored wallet is kept. */
  wallet?: Wallet;
}

export interface MemberResult {
  externalMemberId: string;
  status: MemberUpsertStatus;
  payoutReady: boolean;
}

export interface CloseMemberInput {
  reason?: string;
}

export interface CloseMemberResult {
  externalMemberId: string;
  status: "closed";
  closedAt: string;
  pointsForfeited: number;
}

export interface Balances {
  pointsBalance: number;
  reservedPointsBalance: number;
}

export interface Balance {
  externalMemberId: string;
  memberStatus: MemberStatus;
  pointsBalance: number;
  reservedPointsBalance: number;
  lifetimePointsEarned: number;
  lifetimePointsRedeemed: number;
  currency: string | null;
  cashValueMinor: number;
}

// ---- transactions ----

export interface SettledInput {
  eventId: string;
  occurredAt: Timestamp;
  member: { externalMemberId: string };
  transaction: {
    externalTransactionId: string;
    merchantId: string;
    merchantName: string;
    /** Integer minor units, 1 to 10^12. */
    amountMinor: number;
    currency: string;
    settledAt: Timestamp;
  };
}

export interface SettledResult {
  eventId: string;
  status: "processed";
  externalTransactionId: string;
  pointsAwarded: number;
  balances: Balances;
  partner?: { availablePointsPool: number };
  ledgerGroupId?: string;
}

export interface ReversedInput {
  eventId: string;
  occurredAt: Timestamp;
  member: { externalMemberId: string };
  transaction: {
    externalTransactionId: string;
    /** Omitted: everything not yet reversed. */
    amountMinor?: number;
    currency: string;
  };
  reason?: string;
}

export interface ReversedResult {
  eventId: string;
  status: "processed";
  externalTransactionId: string;
  pointsReversed: number;
  balances: Balances;
  partner?: { availablePointsPool: number };
  ledgerGroupId?: string;
}

// ---- histories ----

export type LedgerEntryType =
  | "earn_award"
  | "earn_reversal"
  | "redeem_reserve"
  | "redeem_burn"
  | "redeem_release"
  | "close_forfeit"
  | "manual_adjustment";

export type LedgerFilter = "all" | "earned" | "reversed" | "reserved" | "redeemed" | "released" | "adjusted";

export interface LedgerEntry {
  id: string;
  entryType: LedgerEntryType;
  description: string;
  pointsDelta: number;
  pointsDeltaAvailable: number;
  pointsDeltaReserved: number;
  cashValueMinor: number | null;
  currency: string | null;
  createdAt: string;
  merchantName: string | null;
  merchantId: string | null;
  externalTransactionId: string | null;
  ledgerGroupId: string;
}

export interface TransactionEntry {
  externalTransactionId: string;
  type: TransactionType;
  eventId: string;
  merchantId: string;
  merchantName: string;
  amountMinor: number;
  currency: string;
  pointsDelta: number;
  occurredAt: string;
  /** Settled entries only. */
  settledAt?: string;
  createdAt: string;
}

/** A page of a newest-first history; `nextBefore` is null on the last page. */
export interface BeforePage<T> {
  entries: T[];
  nextBefore: number | null;
}

export interface HistoryParams {
  /** Entries per page, 1-100 (default 50); the iterators fetch pages of this size. */
  limit?: number;
  /** Epoch milliseconds: the `nextBefore` of the previous page. */
  before?: number;
}

export interface PointsParams extends HistoryParams {
  filter?: LedgerFilter;
}

// ---- redemptions ----

export interface RedemptionInput {
  /** Your id of this redemption, unique per club: a repeat is `duplicate_request_id`. */
  requestId: string;
  member: { externalMemberId: string };
  /** In points (not money), at least the club's minimumRedemptionPoints; currency is the club's payoutCurrency. */
  redemption: { points: number; currency: string };
}

export type RedemptionStatus = "payout_pending" | "completed" | "failed";
export type PayoutStatus = "created" | "submitted" | "succeeded" | "failed";

export interface RedemptionAccepted {
  redemptionId: string;
  status: "payout_pending";
  externalMemberId: string;
  pointsRedeemed: number;
  cashValueMinor: number;
  currency: string;
  payout: { payoutId: string; status: "created" };
  balances: Balances;
}

export interface Redemption {
  redemptionId: string;
  requestId: string;
  status: RedemptionStatus;
  externalMemberId: string;
  pointsRedeemed: number;
  cashValueMinor: number;
  currency: string;
  payout: { payoutId: string; status: PayoutStatus; failureReason: string | null };
  createdAt: string;
  updatedAt: string;
}

export interface RedemptionListParams extends HistoryParams {
  requestId?: string;
  externalMemberId?: string;
  status?: RedemptionStatus;
}

// ---- club ----

export interface Club {
  partnerRef: string;
  name: string;
  environment: "sandbox" | "production";
  earnRateBasisPoints: number | null;
  redemptionRateMinorPerPoint: number | null;
  payoutCurrency: string | null;
  supportedCurrencies: string[] | null;
  minimumRedemptionPoints: number | null;
  availablePointsPool: number | null;
}

// ---- events ----

export type EventType =
  | "member.created"
  | "member.updated"
  | "member.closed"
  | "transaction.settled"
  | "transaction.reversed"
  | "redemption.created"
  | "redemption.completed"
  | "redemption.failed"
  | "points.adjusted";

interface MemberScoped {
  externalMemberId: string;
  /** 1, 2, 3, ... per member in commit order, without gaps. */
  memberSequence: number;
}

export interface MemberEventData extends MemberScoped {
  status: string;
  payoutReady: boolean;
}

export interface MemberClosedEventData extends MemberScoped {
  closedAt: string;
  pointsForfeited: number;
  balances: Balances;
}

export interface TransactionSettledEventData extends MemberScoped {
  eventId: string;
  externalTransactionId: string;
  pointsAwarded: number;
  balances: Balances;
  ledgerGroupId: string;
}

export interface TransactionReversedEventData extends MemberScoped {
  eventId: string;
  externalTransactionId: string;
  pointsReversed: number;
  balances: Balances;
  ledgerGroupId: string;
}

export type RedemptionEventData = MemberScoped & Redemption & { balances: Balances };

export interface PointsAdjustedEventData extends MemberScoped {
  pointsDelta: number;
  reason: string;
  balances: Balances;
}

interface EventBase<T extends EventType, D> {
  id: string;
  type: T;
  createdAt: string;
  environment: "sandbox" | "production";
  data: D;
}

/** An event, as `GET /api/v1/events` lists it and a webhook delivers it; narrow on `type`. */
export type MemberRewardsEvent =
  | EventBase<"member.created" | "member.updated", MemberEventData>
  | EventBase<"member.closed", MemberClosedEventData>
  | EventBase<"transaction.settled", TransactionSettledEventData>
  | EventBase<"transaction.reversed", TransactionReversedEventData>
  | EventBase<"redemption.created" | "redemption.completed" | "redemption.failed", RedemptionEventData>
  | EventBase<"points.adjusted", PointsAdjustedEventData>;

export interface EventListParams {
  /** The `nextAfter` of the previous page; omitted: from the oldest event kept. */
  after?: string;
  /** Events per page, 1-100 (default 50). */
  limit?: number;
  types?: EventType[];
}

/** A page of events, oldest first; keep `nextAfter` to page on later. */
export interface EventPage {
  entries: MemberRewardsEvent[];
  nextAfter: string | null;
}

// ---- webhook endpoints ----

export interface WebhookEndpoint {
  endpointId: string;
  url: string;
  eventTypes: EventType[];
  description: string | null;
  status: WebhookEndpointStatus;
  disabledReason?: "gone" | "failing" | "manual" | null;
  createdAt: string;
  updatedAt?: string;
}

/** The create and rotate answers, the only ones with the signing secret. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  secret: string;
}

export interface WebhookEndpointCreateInput {
  url: string;
  /** Absent or empty: every event type, those added later included. */
  eventTypes?: EventType[];
  description?: string;
}

export interface WebhookEndpointUpdateInput {
  url?: string;
  eventTypes?: EventType[];
  description?: string;
  status?: WebhookEndpointStatus;
}

export interface WebhookEndpointDeleted {
  endpointId: string;
  [field: string]: unknown;
}

export interface WebhookDelivery {
  eventId: string;
  attempt: number;
  /** The receiver's HTTP status, or null when no answer came. */
  status: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
}

export interface WebhookReplayResult {
  endpointId: string;
  replayed: number;
}

// ---- sandbox test helper ----

export interface TestPayoutInput {
  outcome: PayoutOutcome;
  failureReason?: string;
}
