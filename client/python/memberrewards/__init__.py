"""Member Rewards partner API SDK (standard library only).

    from memberrewards import Client
    client = Client.from_env()
    print(client.get_balance("member-1").points_balance)
"""

__version__ = "0.1.0"

from .client import Client, EventIterator, RetryPolicy  # noqa: E402
from .constants import ErrorCode, EventType, PayoutOutcome, PayoutOutcomeName  # noqa: E402
from .errors import MemberRewardsConnectionError, MemberRewardsError  # noqa: E402
from .models import (  # noqa: E402
    Balance, Balances, BankAccount, ClosedMember, Club, DeletedWebhookEndpoint, DeliveriesPage, Event, EventData, EventsPage, FieldProblem,
    LedgerEntry, MemberInput, MemberRef, MemberResult, PartnerPool, Payout, PointsPage, RedemptionAccepted,
    RedemptionAmount, Redemption, RedemptionRequest, RedemptionsPage, ReplayResult, ReversedResult,
    ReversedTransaction, ReverseRequest, SettledResult, SettledTransaction, SettleRequest, TransactionEntry,
    TransactionsPage, Wallet, WebhookDelivery, WebhookEndpoint)
from .signing import canonical_string, format_timestamp, sign, signed_headers  # noqa: E402
from .webhooks import DEFAULT_TOLERANCE_SECONDS, Webhook, WebhookVerificationError  # noqa: E402

__all__ = [
    "Client", "EventIterator", "ErrorCode", "EventType", "PayoutOutcome", "PayoutOutcomeName", "RetryPolicy", "MemberRewardsError", "MemberRewardsConnectionError",
    "Webhook", "WebhookVerificationError", "DEFAULT_TOLERANCE_SECONDS",
    "canonical_string", "format_timestamp", "sign", "signed_headers",
    "BankAccount", "Wallet", "MemberInput", "MemberRef", "SettledTransaction", "SettleRequest",
    "ReversedTransaction", "ReverseRequest", "RedemptionAmount", "RedemptionRequest",
    "FieldProblem", "Balances", "PartnerPool", "MemberResult", "ClosedMember", "SettledResult", "ReversedResult",
    "Balance", "LedgerEntry", "PointsPage", "TransactionEntry", "TransactionsPage", "Payout",
    "RedemptionAccepted", "Redemption", "RedemptionsPage", "Club", "EventData", "Event", "EventsPage",
    "WebhookEndpoint", "DeletedWebhookEndpoint", "WebhookDelivery", "DeliveriesPage", "ReplayResult",
]
