package memberrewards

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far webhook-timestamp may be from now.
const DefaultWebhookTolerance = 5 * time.Minute

// Reasons a webhook is refused; test them with errors.Is. A refused
// delivery must not be acted on (answer it 400).
var (
	ErrMissingHeader           = errors.New("memberrewards: webhook-id, webhook-timestamp and webhook-signature are required")
	ErrInvalidTimestamp        = errors.New("memberrewards: webhook-timestamp is not Unix seconds")
	ErrTimestampOutOfTolerance = errors.New("memberrewards: webhook-timestamp is too far from now")
	ErrNoMatchingSignature     = errors.New("memberrewards: no v1 signature matches the webhook secret")
	ErrInvalidSecret           = errors.New("memberrewards: the webhook secret is not whsec_ + base64")
	ErrInvalidPayload          = errors.New("memberrewards: the signed webhook body is not an event object")
)

func webhookKey(secret string) ([]byte, error) {
	raw := strings.TrimPrefix(secret, "whsec_")
	if m := len(raw) % 4; m != 0 {
		raw += strings.Repeat("=", 4-m)
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, ErrInvalidSecret
	}
	return key, nil
}

func webhookMAC(key []byte, msgID, timestamp string, payload []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + timestamp + "."))
	mac.Write(payload)
	return mac.Sum(nil)
}

// SignWebhook computes one "v1,<base64>" signature as the service does
// (useful to test a receiver).
func SignWebhook(secret, msgID string, timestamp int64, payload []byte) (string, error) {
	key, err := webhookKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(webhookMAC(key, msgID, strconv.FormatInt(timestamp, 10), payload)), nil
}

// WebhookVerifier checks deliveries (Standard Webhooks v1). Secrets holds
// the endpoint's secret, or several while you rotate it; Tolerance 0 is
// DefaultWebhookTolerance; Now nil is time.Now.
type WebhookVerifier struct {
	Secrets   []string
	Tolerance time.Duration
	Now       func() time.Time
}

// VerifyWebhook checks one delivery against the secret(s) with the default
// tolerance and returns its event. payload is the raw body as received.
func VerifyWebhook(payload []byte, header http.Header, secrets ...string) (*Event, error) {
	return (&WebhookVerifier{Secrets: secrets}).Verify(payload, header)
}

// Verify checks the headers, the timestamp (before the signatures) and
// every space-separated v1 signature in constant time, then parses the event.
func (v *WebhookVerifier) Verify(payload []byte, header http.Header) (*Event, error) {
	msgID, tsText, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if msgID == "" || tsText == "" || sigs == "" {
		return nil, ErrMissingHeader
	}
	for i := 0; i < len(tsText); i++ {
		if tsText[i] < '0' || tsText[i] > '9' {
			return nil, ErrInvalidTimestamp
		}
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return nil, ErrInvalidTimestamp
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	sent := time.Unix(ts, 0)
	if sent.Before(now.Add(-tolerance)) || sent.After(now.Add(tolerance)) {
		return nil, fmt.Errorf("%w (%s)", ErrTimestampOutOfTolerance, now.Sub(sent).Round(time.Second))
	}
	var expected [][]byte
	for _, s := range v.Secrets {
		key, err := webhookKey(s)
		if err != nil {
			return nil, err
		}
		expected = append(expected, webhookMAC(key, msgID, tsText, payload))
	}
	matched := false
	for _, candidate := range strings.Split(sigs, " ") {
		version, b64, found := strings.Cut(candidate, ",")
		if !found || version != "v1" {
			continue
		}
		given, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			continue
		}
		for _, mac := range expected {
			// No early exit: every candidate is compared with every key.
			if hmac.Equal(given, mac) {
				matched = true
			}
		}
	}
	if !matched {
		return nil, ErrNoMatchingSignature
	}
	var event Event
	if err := json.Unmarshal(payload, &event); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	return &event, nil
}
