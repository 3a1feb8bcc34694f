"""The error every failed call raises."""

from typing import List, Optional

from .models import FieldProblem


class MemberRewardsError(Exception):
    """The service answered with a failure (or, for the subclass, did not answer).

    code: the stable error code (invalid_request, cardholder_not_found, ...);
    status: the HTTP status; request_id: quote it to support; details: the
    fields at fault on invalid_request; redemption_id: the first redemption on
    duplicate_request_id; retry_after: seconds the service asked to wait.
    """

    def __init__(self, message: str, *, code: str, status: int, request_id: Optional[str] = None,
                 details: Optional[List[FieldProblem]] = None, redemption_id: Optional[str] = None,
                 retry_after: Optional[float] = None, idempotent_replay: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details: List[FieldProblem] = details or []
        self.redemption_id = redemption_id
        self.retry_after = retry_after
        self.idempotent_replay = idempotent_replay

    def __str__(self) -> str:
        text = "%s (%s, HTTP %d)" % (self.message, self.code, self.status)
        if self.details:
            text += ": " + "; ".join("%s %s" % (d.field, d.problem) for d in self.details)
        if self.request_id:
            text += " [request %s]" % self.request_id
        return text


class MemberRewardsConnectionError(MemberRewardsError):
    """No answer came (refused, reset, timed out) after every retry: code "connection_error", status 0.

    A POST may or may not have been applied: call again with the same
    idempotency key to find out (it replays if it was applied).
    """

    def __init__(self, message: str, idempotency_key: Optional[str] = None) -> None:
        super().__init__(message, code="connection_error", status=0)
        self.idempotency_key = idempotency_key
