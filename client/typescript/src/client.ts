// The client: one method per endpoint, grouped by resource, plus iterators
// that page histories (nextBefore) and events (nextAfter) for the caller.
import { pathSegment as seg, Transport, type ApiResponse, type CallSpec, type ClientOptions, type RequestOptions } from "./transport";
import type {
  Answer,
  Balance,
  BeforePage,
  Club,
  CloseMemberInput,
  CloseMemberResult,
  EventListParams,
  EventPage,
  HistoryParams,
  LedgerEntry,
  MemberInput,
  MemberResult,
  MemberRewardsEvent,
  PointsParams,
  Redemption,
  RedemptionAccepted,
  RedemptionInput,
  RedemptionListParams,
  ReversedInput,
  ReversedResult,
  SettledInput,
  SettledResult,
  TestPayoutInput,
  Timestamp,
  TransactionEntry,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreateInput,
  WebhookEndpointDeleted,
  WebhookEndpointUpdateInput,
  WebhookEndpointWithSecret,
  WebhookReplayResult,
} from "./types";

const API = "/api/v1";

/** Yields every entry of a newest-first history, following nextBefore. */
async function* followBefore<T>(
  page: (before: number | undefined) => Promise<BeforePage<T>>,
  start: number | undefined,
): AsyncGenerator<T, void, undefined> {
  let before = start;
  for (;;) {
    const p = await page(before);
    yield* p.entries;
    if (p.nextBefore === null || p.entries.length === 0) return;
    before = p.nextBefore;
  }
}

abstract class Resource {
  constructor(protected readonly transport: Transport) {}

  /** The answer's data, with whether it replays an earlier answer to the same idempotency key. */
  protected async data<T extends object>(spec: CallSpec, options?: RequestOptions): Promise<Answer<T>> {
    const response = await this.transport.call<T>(spec, options);
    return Object.assign(response.data, { idempotentReplay: response.idempotentReplay });
  }

  /** A POST body with the client's partnerRef first. */
  protected body(fields: object): Record<string, unknown> {
    return { partnerRef: this.transport.partnerRef, ...fields };
  }
}

export class Members extends Resource {
  /** POST /members: creates (status "created", HTTP 201) or updates ("updated") a member. */
  async upsert(member: MemberInput, options?: RequestOptions): Promise<Answer<MemberResult>> {
    return this.data({ method: "POST", path: `${API}/members`, body: this.body({ member }) }, options);
  }

  /** POST /members/{id}/close. */
  async close(externalMemberId: string, input: CloseMemberInput = {}, options?: RequestOptions): Promise<Answer<CloseMemberResult>> {
    return this.data(
      { method: "POST", path: `${API}/members/${seg(externalMemberId)}/close`, body: this.body(input) },
      options,
    );
  }

  /** GET /members/{id}/balance. */
  async balance(externalMemberId: string, options?: RequestOptions): Promise<Answer<Balance>> {
    return this.data({ method: "GET", path: `${API}/members/${seg(externalMemberId)}/balance` }, options);
  }

  /** GET /members/{id}/points: one page, newest first. */
  async listPoints(externalMemberId: string, params: PointsParams = {}, options?: RequestOptions): Promise<Answer<BeforePage<LedgerEntry>>> {
    return this.data(
      {
        method: "GET",
        path: `${API}/members/${seg(externalMemberId)}/points`,
        query: { filter: params.filter, limit: params.limit, before: params.before },
      },
      options,
    );
  }

  /** Every ledger entry of the member, newest first, fetched page by page. */
  iteratePoints(externalMemberId: string, params: PointsParams = {}, options?: RequestOptions): AsyncGenerator<LedgerEntry, void, undefined> {
    return followBefore((before) => this.listPoints(externalMemberId, { ...params, before }, options), params.before);
  }

  /** GET /members/{id}/transactions: one page, newest first. */
  async listTransactions(externalMemberId: string, params: HistoryParams = {}, options?: RequestOptions): Promise<Answer<BeforePage<TransactionEntry>>> {
    return this.data(
      {
        method: "GET",
        path: `${API}/members/${seg(externalMemberId)}/transactions`,
        query: { limit: params.limit, before: params.before },
      },
      options,
    );
  }

  /** Every settled and reversed transaction of the member, newest first. */
  iterateTransactions(externalMemberId: string, params: HistoryParams = {}, options?: RequestOptions): AsyncGenerator<TransactionEntry, void, undefined> {
    return followBefore((before) => this.listTransactions(externalMemberId, { ...params, before }, options), params.before);
  }
}

export class Transactions extends Resource {
  /** POST /transactions/settled: the service computes the award. */
  async settled(input: SettledInput, options?: RequestOptions): Promise<Answer<SettledResult>> {
    return this.data({ method: "POST", path: `${API}/transactions/settled`, body: this.body(input) }, options);
  }

  /** POST /transactions/reversed: without amountMinor, everything left is reversed. */
  async reversed(input: ReversedInput, options?: RequestOptions): Promise<Answer<ReversedResult>> {
    return this.data({ method: "POST", path: `${API}/transactions/reversed`, body: this.body(input) }, options);
  }
}

export class Redemptions extends Resource {
  /** POST /redemptions: 202, the payout has not happened yet. */
  async create(input: RedemptionInput, options?: RequestOptions): Promise<Answer<RedemptionAccepted>> {
    return this.data({ method: "POST", path: `${API}/redemptions`, body: this.body(input) }, options);
  }

  /** GET /redemptions/{id}. */
  async get(redemptionId: string, options?: RequestOptions): Promise<Answer<Redemption>> {
    return this.data({ method: "GET", path: `${API}/redemptions/${seg(redemptionId)}` }, options);
  }

  /** GET /redemptions: one page of the club's redemptions, newest first, optionally filtered. */
  async list(params: RedemptionListParams = {}, options?: RequestOptions): Promise<Answer<BeforePage<Redemption>>> {
    return this.data(
      {
        method: "GET",
        path: `${API}/redemptions`,
        query: {
          limit: params.limit,
          before: params.before,
          requestId: params.requestId,
          externalMemberId: params.externalMemberId,
          status: params.status,
        },
      },
      options,
    );
  }

  /** Every matching redemption, newest first. */
  iterate(params: RedemptionListParams = {}, options?: RequestOptions): AsyncGenerator<Redemption, void, undefined> {
    return followBefore((before) => this.list({ ...params, before }, options), params.before);
  }
}

export class ClubResource extends Resource {
  /** GET /club: the calling key's club (rates, minimum redemption, currencies, pool). */
  async get(options?: RequestOptions): Promise<Answer<Club>> {
    return this.data({ method: "GET", path: `${API}/club` }, options);
  }
}

export class Events extends Resource {
  /** GET /events: one page, oldest first. */
  async list(params: EventListParams = {}, options?: RequestOptions): Promise<Answer<EventPage>> {
    return this.data(
      {
        method: "GET",
        path: `${API}/events`,
        query: {
          after: params.after,
          limit: params.limit,
          types: params.types && params.types.length > 0 ? params.types : undefined,
        },
      },
      options,
    );
  }

  /**
   * Pages from `params.after` until a page comes back empty (caught up).
   * Store each page's `nextAfter` once you have handled it, and start from
   * it next time: you see every event exactly once.
   */
  async *iteratePages(params: EventListParams = {}, options?: RequestOptions): AsyncGenerator<EventPage, void, undefined> {
    let after = params.after;
    for (;;) {
      const page = await this.list({ ...params, after }, options);
      if (page.entries.length === 0) return;
      yield page;
      if (!page.nextAfter) return;
      after = page.nextAfter;
    }
  }

  /** Every event after `params.after`, oldest first, until caught up. */
  async *iterate(params: EventListParams = {}, options?: RequestOptions): AsyncGenerator<MemberRewardsEvent, void, undefined> {
    for await (const page of this.iteratePages(params, options)) yield* page.entries;
  }
}

export class WebhookEndpoints extends Resource {
  /** POST /webhook-endpoints: 201; the answer carries the signing `secret` (keep it). */
  async create(input: WebhookEndpointCreateInput, options?: RequestOptions): Promise<Answer<WebhookEndpointWithSecret>> {
    return this.data({ method: "POST", path: `${API}/webhook-endpoints`, body: this.body(input) }, options);
  }

  /** GET /webhook-endpoints: all of the club's endpoints (no secrets). */
  async list(options?: RequestOptions): Promise<WebhookEndpoint[]> {
    const page = await this.data<{ entries: WebhookEndpoint[] }>({ method: "GET", path: `${API}/webhook-endpoints` }, options);
    return page.entries;
  }

  /** GET /webhook-endpoints/{id}. */
  async get(endpointId: string, options?: RequestOptions): Promise<Answer<WebhookEndpoint>> {
    return this.data({ method: "GET", path: `${API}/webhook-endpoints/${seg(endpointId)}` }, options);
  }

  /** POST /webhook-endpoints/{id}: re-enabling resumes what is still pending. */
  async update(endpointId: string, input: WebhookEndpointUpdateInput, options?: RequestOptions): Promise<Answer<WebhookEndpoint>> {
    return this.data(
      { method: "POST", path: `${API}/webhook-endpoints/${seg(endpointId)}`, body: this.body(input) },
      options,
    );
  }

  /** POST /webhook-endpoints/{id}/rotate-secret: the old secret keeps signing beside the new one for 24 h. */
  async rotateSecret(endpointId: string, options?: RequestOptions): Promise<Answer<WebhookEndpointWithSecret>> {
    return this.data(
      { method: "POST", path: `${API}/webhook-endpoints/${seg(endpointId)}/rotate-secret`, body: this.body({}) },
      options,
    );
  }

  /** POST /webhook-endpoints/{id}/delete. */
  async delete(endpointId: string, options?: RequestOptions): Promise<Answer<WebhookEndpointDeleted>> {
    return this.data(
      { method: "POST", path: `${API}/webhook-endpoints/${seg(endpointId)}/delete`, body: this.body({}) },
      options,
    );
  }

  /** GET /webhook-endpoints/{id}/deliveries: one page of attempts, newest first. */
  async listDeliveries(endpointId: string, params: HistoryParams = {}, options?: RequestOptions): Promise<Answer<BeforePage<WebhookDelivery>>> {
    return this.data(
      {
        method: "GET",
        path: `${API}/webhook-endpoints/${seg(endpointId)}/deliveries`,
        query: { limit: params.limit, before: params.before },
      },
      options,
    );
  }

  /** Every kept delivery attempt of the endpoint, newest first. */
  iterateDeliveries(endpointId: string, params: HistoryParams = {}, options?: RequestOptions): AsyncGenerator<WebhookDelivery, void, undefined> {
    return followBefore((before) => this.listDeliveries(endpointId, { ...params, before }, options), params.before);
  }

  /** POST /webhook-endpoints/{id}/replay: sends again every matching event since `since`. */
  async replay(endpointId: string, since: Timestamp, options?: RequestOptions): Promise<Answer<WebhookReplayResult>> {
    return this.data(
      {
        method: "POST",
        path: `${API}/webhook-endpoints/${seg(endpointId)}/replay`,
        body: this.body({ since }),
      },
      options,
    );
  }
}

export class TestHelpers extends Resource {
  /** Sandbox only: POST /test-helpers/redemptions/{id}/payout moves the payout as the operator would. */
  async payout(redemptionId: string, input: TestPayoutInput, options?: RequestOptions): Promise<Answer<Redemption>> {
    return this.data(
      { method: "POST", path: `${API}/test-helpers/redemptions/${seg(redemptionId)}/payout`, body: this.body(input) },
      options,
    );
  }
}

/**
 * Member Rewards Partner API client. Every call is signed; every POST carries
 * an idempotency key made per call and kept across its retries.
 *
 *   const mr = new MemberRewardsClient({ baseUrl, keyId, keySecret, partnerRef });
 *   const balance = await mr.members.balance("member-1");
 */
export class MemberRewardsClient {
  readonly members: Members;
  readonly transactions: Transactions;
  readonly redemptions: Redemptions;
  readonly club: ClubResource;
  readonly events: Events;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly testHelpers: TestHelpers;
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.members = new Members(this.transport);
    this.transactions = new Transactions(this.transport);
    this.redemptions = new Redemptions(this.transport);
    this.club = new ClubResource(this.transport);
    this.events = new Events(this.transport);
    this.webhookEndpoints = new WebhookEndpoints(this.transport);
    this.testHelpers = new TestHelpers(this.transport);
  }

  /**
   * Any call, for endpoints newer than this SDK: `path` starts at the root
   * ("/api/v1/..."), segments percent-encoded; a POST body gets no partnerRef
   * added. Returns the data with the answer's status and request id.
   */
  request<T = unknown>(spec: CallSpec, options?: RequestOptions): Promise<ApiResponse<T>> {
    return this.transport.call<T>(spec, options);
  }
}
