"""Typed request and response objects, and their mapping to the wire.

Attribute names are the wire's camelCase names in snake_case
(external_member_id <-> externalMemberId). Unknown fields in answers are
ignored (the API may add fields); a field the contract requires but the
answer lacks is an error, so a breaking API change does not go unnoticed.
Timestamps in answers stay RFC 3339 strings exactly as the service sent them.
"""

import dataclasses
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Type, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")


class ResponseShapeError(ValueError):
    """An answer did not have the shape the contract gives it."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _wire_name(f: "dataclasses.Field[Any]") -> str:
    return f.metadata.get("json", _camel(f.name))


_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return _HINTS[cls]


def format_request_time(value: Union[str, datetime]) -> str:
    """A request timestamp: strings pass as they are, aware datetimes become RFC 3339 UTC."""
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        raise ValueError("request timestamps need an aware datetime (naive times are ambiguous)")
    utc = value.astimezone(timezone.utc)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += ".%03d" % (utc.microsecond // 1000)
    return text + "Z"


def encode(value: Any) -> Any:
    """A request object as JSON-ready data; None fields are left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if v is not None:
                out[_wire_name(f)] = encode(v)
        return out
    if isinstance(value, datetime):
        return format_request_time(value)
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value


def decode(cls: Type[T], value: Any, lenient: bool = False, path: str = "data") -> T:
    """JSON data as `cls`. lenient: missing fields become None instead of an error."""
    return _decode(cls, value, lenient, path)


def _decode(tp: Any, value: Any, lenient: bool, path: str) -> Any:
    if tp is Any:
        return value
    origin = get_origin(tp)
    if origin is Union:
        if value is None:
            return None
        inner = [a for a in get_args(tp) if a is not type(None)]
        return _decode(inner[0], value, lenient, path)
    if value is None:
        if lenient:
            return None
        raise ResponseShapeError("%s is null" % path)
    if origin in (list, List):
        if not isinstance(value, list):
            raise ResponseShapeError("%s is not an array" % path)
        (item,) = get_args(tp) or (Any,)
        return [_decode(item, v, lenient, "%s[%d]" % (path, i)) for i, v in enumerate(value)]
    if origin in (dict, Dict):
        if not isinstance(value, dict):
            raise ResponseShapeError("%s is not an object" % path)
        return dict(value)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ResponseShapeError("%s is not an object" % path)
        hints = _hints(tp)
        kwargs: Dict[str, Any] = {}
        for f in dataclasses.fields(tp):
            if f.metadata.get("raw"):
                kwargs[f.name] = value
                continue
            if f.metadata.get("header"):
                continue  # from the answer's headers, not its body
            key = _wire_name(f)
            if key in value:
                kwargs[f.name] = _decode(hints[f.name], value[key], lenient, path + "." + key)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                if not lenient:
                    raise ResponseShapeError("%s.%s is missing" % (path, key))
                kwargs[f.name] = None
        return tp(**kwargs)
    if tp is bool:
        if not isinstance(value, bool):
            raise ResponseShapeError("%s is not a boolean" % path)
    elif tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ResponseShapeError("%s is not an integer" % path)
    elif tp is str:
        if not isinstance(value, str):
            raise ResponseShapeError("%s is not a string" % path)
    return value


# ---- requests ----

@dataclass
class BankAccount:
    account_number: str  # exactly 8 digits
    sort_code: str  # exactly 6 digits, no dashes
    name: str


@dataclass
class Wallet:
    provider: Optional[str] = None
    wallet_ref: Optional[str] = None
    status: Optional[str] = None  # "suspended" or "closed" make the member not payout-ready
    bank_account: Optional[BankAccount] = None


@dataclass
class MemberInput:
    external_member_id: str
    first_name: str
    last_name: str
    email: str
    wallet: Optional[Wallet] = None  # omitted on update: the stored wallet is kept


@dataclass
class MemberRef:
    external_member_id: str


@dataclass
class SettledTransaction:
    external_transaction_id: str
    merchant_id: str
    merchant_name: str
    amount_minor: int
    currency: str
    settled_at: Union[str, datetime]


@dataclass
class SettleRequest:
    event_id: str
    occurred_at: Union[str, datetime]
    member: MemberRef
    transaction: SettledTransaction


@dataclass
class ReversedTransaction:
    external_transaction_id: str
    currency: str
    amount_minor: Optional[int] = None  # None: everything not yet reversed


@dataclass
class ReverseRequest:
    event_id: str
    occurred_at: Union[str, datetime]
    member: MemberRef
    transaction: ReversedTransaction
    reason: Optional[str] = None


@dataclass
class RedemptionAmount:
    points: int
    currency: str


@dataclass
class RedemptionRequest:
    request_id: str
    member: MemberRef
    redemption: RedemptionAmount


# ---- answers ----

@dataclass
class FieldProblem:
    field: str
    problem: str


@dataclass
class Balances:
    points_balance: int
    reserved_points_balance: int


@dataclass
class PartnerPool:
    available_points_pool: int


@dataclass
class MemberResult:
    external_member_id: str
    status: str  # "created" | "updated"
    payout_ready: bool
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay


@dataclass
class ClosedMember:
    external_member_id: str
    status: str  # "closed"
    closed_at: str
    points_forfeited: int
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay


@dataclass
class SettledResult:
    event_id: str
    status: str  # "processed"
    external_transaction_id: str
    points_awarded: int
    balances: Balances
    partner: Optional[PartnerPool] = None
    ledger_group_id: Optional[str] = None
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay


@dataclass
class ReversedResult:
    event_id: str
    status: str
    external_transaction_id: str
    points_reversed: int
    balances: Balances
    partner: Optional[PartnerPool] = None
    ledger_group_id: Optional[str] = None
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay


@dataclass
class Balance:
    external_member_id: str
    member_status: str  # "active" | "closed"
    points_balance: int
    reserved_points_balance: int
    lifetime_points_earned: int
    lifetime_points_redeemed: int
    currency: Optional[str]
    cash_value_minor: int


@dataclass
class LedgerEntry:
    id: str
    entry_type: str
    description: str
    points_delta: int
    points_delta_available: int
    points_delta_reserved: int
    cash_value_minor: Optional[int]
    currency: Optional[str]
    created_at: str
    merchant_name: Optional[str]
    merchant_id: Optional[str]
    external_transaction_id: Optional[str]
    ledger_group_id: str


@dataclass
class PointsPage:
    entries: List[LedgerEntry]
    next_before: Optional[int]


@dataclass
class TransactionEntry:
    external_transaction_id: str
    type: str  # "settled" | "reversed"
    event_id: str
    merchant_id: str
    merchant_name: str
    amount_minor: int
    currency: str
    points_delta: int
    occurred_at: str
    created_at: str
    settled_at: Optional[str] = None


@dataclass
class TransactionsPage:
    entries: List[TransactionEntry]
    next_before: Optional[int]


@dataclass
class Payout:
    payout_id: str
    status: str  # created | submitted | succeeded | failed
    failure_reason: Optional[str] = None


@dataclass
class RedemptionAccepted:
    redemption_id: str
    status: str  # "payout_pending"
    external_member_id: str
    points_redeemed: int
    cash_value_minor: int
    currency: str
    payout: Payout
    balances: Balances
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay


@dataclass
class Redemption:
    redemption_id: str
    request_id: str
    status: str  # payout_pending | completed | failed
    external_member_id: str
    points_redeemed: int
    cash_value_minor: int
    currency: str
    payout: Payout
    created_at: str
    updated_at: str
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay


@dataclass
class RedemptionsPage:
    entries: List[Redemption]
    next_before: Optional[int]


@dataclass
class Club:
    partner_ref: str
    name: Optional[str] = None
    environment: Optional[str] = None  # "sandbox" | "production"
    earn_rate_basis_points: Optional[int] = None
    redemption_rate_minor_per_point: Optional[int] = None
    payout_currency: Optional[str] = None
    supported_currencies: Optional[List[str]] = None
    minimum_redemption_points: Optional[int] = None
    available_points_pool: Optional[int] = None


@dataclass
class EventData:
    """The union of every event type's data; fields a type does not carry are None."""
    external_member_id: Optional[str] = None
    member_sequence: Optional[int] = None
    status: Optional[str] = None
    payout_ready: Optional[bool] = None
    closed_at: Optional[str] = None
    points_forfeited: Optional[int] = None
    balances: Optional[Balances] = None
    event_id: Optional[str] = None
    external_transaction_id: Optional[str] = None
    points_awarded: Optional[int] = None
    points_reversed: Optional[int] = None
    ledger_group_id: Optional[str] = None
    redemption_id: Optional[str] = None
    request_id: Optional[str] = None
    points_redeemed: Optional[int] = None
    cash_value_minor: Optional[int] = None
    currency: Optional[str] = None
    payout: Optional[Payout] = None
    created_at: Optional[str] = None
    updated_at: Optional[str] = None
    points_delta: Optional[int] = None
    reason: Optional[str] = None


@dataclass
class Event:
    id: str  # evt_...
    type: str  # member.created, transaction.settled, redemption.completed, ...
    created_at: str
    environment: str
    data: EventData
    raw: Dict[str, Any] = field(default_factory=dict, metadata={"raw": True}, repr=False, compare=False)


@dataclass
class EventsPage:
    entries: List[Event]
    next_after: Optional[str]


@dataclass
class WebhookEndpoint:
    endpoint_id: str  # we_...
    url: Optional[str] = None
    event_types: Optional[List[str]] = None  # empty: every type
    description: Optional[str] = None
    status: Optional[str] = None  # "enabled" | "disabled"
    disabled_reason: Optional[str] = None  # gone | failing | manual
    secret: Optional[str] = None  # only in the answers of create and rotate-secret
    created_at: Optional[str] = None
    updated_at: Optional[str] = None
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay


@dataclass
class DeletedWebhookEndpoint:
    endpoint_id: str
    deleted: Optional[bool] = None
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay


@dataclass
class WebhookEndpointList:
    entries: List[WebhookEndpoint]


@dataclass
class WebhookDelivery:
    event_id: str
    attempt: int
    status: Optional[int]  # the receiver's HTTP status, None when no answer came
    error: Optional[str]
    duration_ms: Optional[int]
    attempted_at: str


@dataclass
class DeliveriesPage:
    entries: List[WebhookDelivery]
    next_before: Optional[int]


@dataclass
class ReplayResult:
    endpoint_id: str
    replayed: int
    idempotent_replay: bool = field(default=False, compare=False, metadata={"header": True})  # X-MR-Idempotent-Replay
