package memberrewards

import (
	"fmt"
	"strings"
	"time"
)

// FieldProblem names a field at fault in an invalid_request.
type FieldProblem struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

// APIError is a failure the service answered. Code is the stable error
// code (invalid_request, cardholder_not_found, ...); RequestID is the one to
// quote to support; Details lists the fields at fault on invalid_request;
// RedemptionID names the first redemption on duplicate_request_id.
type APIError struct {
	Status           int
	Code             string
	Message          string
	RequestID        string
	Details          []FieldProblem
	RedemptionID     string
	RetryAfter       time.Duration // 0 when the answer had no Retry-After
	IdempotentReplay bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memberrewards: %s (%s, HTTP %d)", e.Message, e.Code, e.Status)
	for i, d := range e.Details {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(d.Field + " " + d.Problem)
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// ConnectionError: no answer came (refused, reset, timed out) after every
// retry. A POST may or may not have been applied: call again with the same
// idempotency key (WithIdempotencyKey) to find out; it replays if it was.
type ConnectionError struct {
	Method, URL    string
	Attempts       int
	IdempotencyKey string
	Err            error
}

func (e *ConnectionError) Error() string {
	return fmt.Sprintf("memberrewards: no answer from %s %s after %d attempts: %v", e.Method, e.URL, e.Attempts, e.Err)
}

func (e *ConnectionError) Unwrap() error { return e.Err }
