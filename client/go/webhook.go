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
	ErrInvalidSecret           = errors.New("memberrewards: no webhook secret, or one that is not whsec_ + base64")
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

// Webhook verifies one endpoint's deliveries (Standard Webhooks v1), in the
// Standard Webhooks libraries' shape: made from the endpoint's secret
// ("whsec_...", shown once in the answers of create and rotate-secret), or
// several while you roll a rotation out (any one matching passes).
//
//	wh, err := memberrewards.NewWebhook(secret)
//	event, err := wh.Verify(body, r.Header) // the raw body, before parsing it
//
// Tolerance 0 is DefaultWebhookTolerance; Now nil is time.Now (for tests).
type Webhook struct {
	Tolerance time.Duration
	Now       func() time.Time
	keys      [][]byte
}

// NewWebhook makes the verifier of the given secret(s); ErrInvalidSecret
// when none is given or one is not "whsec_" followed by base64.
func NewWebhook(secrets ...string) (*Webhook, error) {
	if len(secrets) == 0 {
		return nil, ErrInvalidSecret
	}
	w := &Webhook{}
	for _, s := range secrets {
		key, err := webhookKey(s)
		if err != nil {
			return nil, err
		}
		w.keys = append(w.keys, key)
	}
	return w, nil
}

// Sign computes the "v1,<base64>" signature the service sends, with the
// first secret (useful to test a receiver).
func (w *Webhook) Sign(msgID string, timestamp int64, payload []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(webhookMAC(w.keys[0], msgID, strconv.FormatInt(timestamp, 10), payload))
}

// Verify checks one delivery and returns its event: the headers, the
// timestamp (before the signatures) and every space-separated v1 signature
// in constant time, then it parses the event. payload is the raw body as
// received; a refusal is one of the Err* reasons above (errors.Is).
func (w *Webhook) Verify(payload []byte, header http.Header) (*Event, error) {
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
	tolerance := w.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	sent := time.Unix(ts, 0)
	if sent.Before(now.Add(-tolerance)) || sent.After(now.Add(tolerance)) {
		return nil, fmt.Errorf("%w (%s)", ErrTimestampOutOfTolerance, now.Sub(sent).Round(time.Second))
	}
	var expected [][]byte
	for _, key := range w.keys {
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
