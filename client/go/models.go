package memberrewards

import (
	"encoding/json"
	"time"
)

// ---- requests (partnerRef is added by the client) ----

// BankAccount: AccountNumber exactly 8 digits, SortCode exactly 6 digits.
type BankAccount struct {
	AccountNumber string `json:"accountNumber"`
	SortCode      string `json:"sortCode"`
	Name          string `json:"name"`
}

// Wallet: a Status of "suspended" or "closed" makes the member not payout-ready.
type Wallet struct {
	Provider    string       `json:"provider,omitempty"`
	WalletRef   string       `json:"walletRef,omitempty"`
	Status      string       `json:"status,omitempty"`
	BankAccount *BankAccount `json:"bankAccount,omitempty"`
}

// MemberInput is a member to create or update; a nil Wallet keeps the stored one.
type MemberInput struct {
	ExternalMemberID string  `json:"externalMemberId"`
	FirstName        string  `json:"firstName"`
	LastName         string  `json:"lastName"`
	Email            string  `json:"email"`
	Wallet           *Wallet `json:"wallet,omitempty"`
}

// MemberRef names a member in a request.
type MemberRef struct {
	ExternalMemberID string `json:"externalMemberId"`
}

// SettledTransaction is the transaction part of a SettleRequest.
type SettledTransaction struct {
	ExternalTransactionID string
	MerchantID            string
	MerchantName          string
	AmountMinor           int64
	Currency              string
	SettledAt             time.Time
}

// SettleRequest records a settled transaction.
type SettleRequest struct {
	EventID     string
	OccurredAt  time.Time
	Member      MemberRef
	Transaction SettledTransaction
}

// ReversedTransaction: AmountMinor 0 reverses everything not yet reversed.
type ReversedTransaction struct {
	ExternalTransactionID string
	AmountMinor           int64
	Currency              string
}

// ReverseRequest reverses (part of) a settled transaction.
type ReverseRequest struct {
	EventID     string
	OccurredAt  time.Time
	Member      MemberRef
	Transaction ReversedTransaction
	Reason      string
}

// RedemptionAmount is what a redemption asks for.
type RedemptionAmount struct {
	Points   int64  `json:"points"`
	Currency string `json:"currency"`
}

// RedemptionRequest redeems points; RequestID is unique per club.
type RedemptionRequest struct {
	RequestID  string           `json:"requestId"`
	Member     MemberRef        `json:"member"`
	Redemption RedemptionAmount `json:"redemption"`
}

// WebhookEndpointInput creates an endpoint; no EventTypes means every type.
type WebhookEndpointInput struct {
	URL         string   `json:"url"`
	EventTypes  []string `json:"eventTypes,omitempty"`
	Description string   `json:"description,omitempty"`
}

// WebhookEndpointUpdate changes the fields that are set (nil: unchanged).
type WebhookEndpointUpdate struct {
	URL         *string  `json:"url,omitempty"`
	EventTypes  []string `json:"eventTypes,omitempty"`
	Description *string  `json:"description,omitempty"`
	Status      *string  `json:"status,omitempty"` // "enabled" resumes delivery, "disabled" pauses it
}

// ---- answers ----

type Balances struct {
	PointsBalance         int64 `json:"pointsBalance"`
	ReservedPointsBalance int64 `json:"reservedPointsBalance"`
}

type PartnerPool struct {
	AvailablePointsPool int64 `json:"availablePointsPool"`
}

type MemberResult struct {
	Answer
	ExternalMemberID string `json:"externalMemberId"`
	Status           string `json:"status"` // created | updated
	PayoutReady      bool   `json:"payoutReady"`
}

type ClosedMember struct {
	Answer
	ExternalMemberID string    `json:"externalMemberId"`
	Status           string    `json:"status"`
	ClosedAt         time.Time `json:"closedAt"`
	PointsForfeited  int64     `json:"pointsForfeited"`
}

type SettledResult struct {
	Answer
	EventID               string       `json:"eventId"`
	Status                string       `json:"status"`
	ExternalTransactionID string       `json:"externalTransactionId"`
	PointsAwarded         int64        `json:"pointsAwarded"`
	Balances              Balances     `json:"balances"`
	Partner               *PartnerPool `json:"partner"`
	LedgerGroupID         string       `json:"ledgerGroupId"`
}

type ReversedResult struct {
	Answer
	EventID               string       `json:"eventId"`
	Status                string       `json:"status"`
	ExternalTransactionID string       `json:"externalTransactionId"`
	PointsReversed        int64        `json:"pointsReversed"`
	Balances              Balances     `json:"balances"`
	Partner               *PartnerPool `json:"partner"`
	LedgerGroupID         string       `json:"ledgerGroupId"`
}

type Balance struct {
	ExternalMemberID       string  `json:"externalMemberId"`
	MemberStatus           string  `json:"memberStatus"` // active | closed
	PointsBalance          int64   `json:"pointsBalance"`
	ReservedPointsBalance  int64   `json:"reservedPointsBalance"`
	LifetimePointsEarned   int64   `json:"lifetimePointsEarned"`
	LifetimePointsRedeemed int64   `json:"lifetimePointsRedeemed"`
	Currency               *string `json:"currency"`
	CashValueMinor         int64   `json:"cashValueMinor"`
}

type LedgerEntry struct {
	ID                    string    `json:"id"`
	EntryType             string    `json:"entryType"`
	Description           string    `json:"description"`
	PointsDelta           int64     `json:"pointsDelta"`
	PointsDeltaAvailable  int64     `json:"pointsDeltaAvailable"`
	PointsDeltaReserved   int64     `json:"pointsDeltaReserved"`
	CashValueMinor        *int64    `json:"cashValueMinor"`
	Currency              *string   `json:"currency"`
	CreatedAt             time.Time `json:"createdAt"`
	MerchantName          *string   `json:"merchantName"`
	MerchantID            *string   `json:"merchantId"`
	ExternalTransactionID *string   `json:"externalTransactionId"`
	LedgerGroupID         string    `json:"ledgerGroupId"`
}

// PointsPage: NextBefore is nil when no older entry exists.
type PointsPage struct {
	Entries    []LedgerEntry `json:"entries"`
	NextBefore *int64        `json:"nextBefore"`
}

type TransactionEntry struct {
	ExternalTransactionID string     `json:"externalTransactionId"`
	Type                  string     `json:"type"` // settled | reversed
	EventID               string     `json:"eventId"`
	MerchantID            string     `json:"merchantId"`
	MerchantName          string     `json:"merchantName"`
	AmountMinor           int64      `json:"amountMinor"`
	Currency              string     `json:"currency"`
	PointsDelta           int64      `json:"pointsDelta"`
	OccurredAt            time.Time  `json:"occurredAt"`
	SettledAt             *time.Time `json:"settledAt"`
	CreatedAt             time.Time  `json:"createdAt"`
}

type TransactionsPage struct {
	Entries    []TransactionEntry `json:"entries"`
	NextBefore *int64             `json:"nextBefore"`
}

type Payout struct {
	PayoutID      string  `json:"payoutId"`
	Status        string  `json:"status"` // created | submitted | succeeded | failed
	FailureReason *string `json:"failureReason"`
}

type RedemptionAccepted struct {
	Answer
	RedemptionID     string   `json:"redemptionId"`
	Status           string   `json:"status"` // payout_pending
	ExternalMemberID string   `json:"externalMemberId"`
	PointsRedeemed   int64    `json:"pointsRedeemed"`
	CashValueMinor   int64    `json:"cashValueMinor"`
	Currency         string   `json:"currency"`
	Payout           Payout   `json:"payout"`
	Balances         Balances `json:"balances"`
}

type Redemption struct {
	Answer
	RedemptionID     string    `json:"redemptionId"`
	RequestID        string    `json:"requestId"`
	Status           string    `json:"status"` // payout_pending | completed | failed
	ExternalMemberID string    `json:"externalMemberId"`
	PointsRedeemed   int64     `json:"pointsRedeemed"`
	CashValueMinor   int64     `json:"cashValueMinor"`
	Currency         string    `json:"currency"`
	Payout           Payout    `json:"payout"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

type RedemptionsPage struct {
	Entries    []Redemption `json:"entries"`
	NextBefore *int64       `json:"nextBefore"`
}

// Club is the calling key's club; settings not made yet are nil.
type Club struct {
	PartnerRef                  string   `json:"partnerRef"`
	Name                        string   `json:"name"`
	Environment                 string   `json:"environment"` // sandbox | production
	EarnRateBasisPoints         *int64   `json:"earnRateBasisPoints"`
	RedemptionRateMinorPerPoint *int64   `json:"redemptionRateMinorPerPoint"`
	PayoutCurrency              *string  `json:"payoutCurrency"`
	SupportedCurrencies         []string `json:"supportedCurrencies"`
	MinimumRedemptionPoints     *int64   `json:"minimumRedemptionPoints"`
	AvailablePointsPool         *int64   `json:"availablePointsPool"`
}

// EventData is the union of every event type's data; fields a type does
// not carry stay zero or nil.
type EventData struct {
	ExternalMemberID      string     `json:"externalMemberId"`
	MemberSequence        int64      `json:"memberSequence"`
	Status                string     `json:"status,omitempty"`
	PayoutReady           *bool      `json:"payoutReady,omitempty"`
	ClosedAt              *time.Time `json:"closedAt,omitempty"`
	PointsForfeited       *int64     `json:"pointsForfeited,omitempty"`
	Balances              *Balances  `json:"balances,omitempty"`
	EventID               string     `json:"eventId,omitempty"`
	ExternalTransactionID string     `json:"externalTransactionId,omitempty"`
	PointsAwarded         *int64     `json:"pointsAwarded,omitempty"`
	PointsReversed        *int64     `json:"pointsReversed,omitempty"`
	LedgerGroupID         string     `json:"ledgerGroupId,omitempty"`
	RedemptionID          string     `json:"redemptionId,omitempty"`
	RequestID             string     `json:"requestId,omitempty"`
	PointsRedeemed        *int64     `json:"pointsRedeemed,omitempty"`
	CashValueMinor        *int64     `json:"cashValueMinor,omitempty"`
	Currency              string     `json:"currency,omitempty"`
	Payout                *Payout    `json:"payout,omitempty"`
	CreatedAt             *time.Time `json:"createdAt,omitempty"`
	UpdatedAt             *time.Time `json:"updatedAt,omitempty"`
	PointsDelta           *int64     `json:"pointsDelta,omitempty"`
	Reason                string     `json:"reason,omitempty"`
}

// Event is one change; Raw is the event object exactly as received.
type Event struct {
	ID          string          `json:"id"`   // evt_...
	Type        string          `json:"type"` // member.created, transaction.settled, ...
	CreatedAt   time.Time       `json:"createdAt"`
	Environment string          `json:"environment"`
	Data        EventData       `json:"data"`
	Raw         json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw bytes beside the typed fields.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Event(p)
	e.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// EventsPage: page on with NextAfter.
type EventsPage struct {
	Entries   []Event `json:"entries"`
	NextAfter *string `json:"nextAfter"`
}

// WebhookEndpoint: Secret is set only in the answers of create and rotate-secret.
type WebhookEndpoint struct {
	Answer
	EndpointID     string     `json:"endpointId"` // we_...
	URL            string     `json:"url"`
	EventTypes     []string   `json:"eventTypes"`
	Description    *string    `json:"description"`
	Status         string     `json:"status"`         // enabled | disabled
	DisabledReason *string    `json:"disabledReason"` // gone | failing | manual
	Secret         string     `json:"secret,omitempty"`
	CreatedAt      *time.Time `json:"createdAt"`
	UpdatedAt      *time.Time `json:"updatedAt"`
}

// DeletedWebhookEndpoint is the answer of a delete.
type DeletedWebhookEndpoint struct {
	Answer
	EndpointID string `json:"endpointId"`
	Deleted    bool   `json:"deleted"`
}

// WebhookDelivery is one attempt; Status is nil when no answer came.
type WebhookDelivery struct {
	EventID     string    `json:"eventId"`
	Attempt     int       `json:"attempt"`
	Status      *int      `json:"status"`
	Error       *string   `json:"error"`
	DurationMs  *int64    `json:"durationMs"`
	AttemptedAt time.Time `json:"attemptedAt"`
}

type DeliveriesPage struct {
	Entries    []WebhookDelivery `json:"entries"`
	NextBefore *int64            `json:"nextBefore"`
}

type ReplayResult struct {
	Answer
	EndpointID string `json:"endpointId"`
	Replayed   int64  `json:"replayed"`
}
