package memberrewards

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func headersFor(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	return h
}

func TestWebhookDefaultToleranceAgainstTheClock(t *testing.T) {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"id":"evt_1","type":"member.created","createdAt":"2026-11-26T10:00:00.000Z","environment":"sandbox","data":{"externalMemberId":"m","memberSequence":1,"status":"created","payoutReady":true}}`)
	now := time.Now().Unix()
	wh, err := NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	event, err := wh.Verify(body, headersFor("evt_1", now, wh.Sign("evt_1", now, body)))
	if err != nil || event.Type != "member.created" || event.Data.PayoutReady == nil || !*event.Data.PayoutReady {
		t.Fatalf("%+v %v", event, err)
	}
	old := now - 301
	if _, err := wh.Verify(body, headersFor("evt_1", old, wh.Sign("evt_1", old, body))); !errors.Is(err, ErrTimestampOutOfTolerance) {
		t.Fatalf("stale: %v", err)
	}
}

func TestWebhookRotationEitherSecretAlone(t *testing.T) {
	oldSecret, newSecret := "whsec_ugZF12zT1ylnU1LYwZT5en8D+vIDJjJ/w8cXxwyZbh0=", "whsec_XlzAqQC2EsKA0p4IFurDj51wKMAF4z0wCKHRNzZ9WLI="
	body := []byte(`{"id":"evt_2","type":"member.updated","createdAt":"2026-11-26T10:00:00.000Z","environment":"sandbox","data":{}}`)
	a := mustWebhook(t, oldSecret).Sign("evt_2", 1000, body)
	b := mustWebhook(t, newSecret).Sign("evt_2", 1000, body)
	at := func() time.Time { return time.Unix(1000, 0) }
	for _, secrets := range [][]string{{oldSecret}, {newSecret}, {newSecret, oldSecret}} {
		v := mustWebhook(t, secrets...)
		v.Now = at
		if _, err := v.Verify(body, headersFor("evt_2", 1000, a+" "+b)); err != nil {
			t.Fatalf("%v: %v", secrets, err)
		}
	}
	v := mustWebhook(t, "whsec_10E7zzCOsZrfnjoWTB/ihWEvNA9BnssAXMsrM1NY3WE=")
	v.Now = at
	if _, err := v.Verify(body, headersFor("evt_2", 1000, a+" "+b)); !errors.Is(err, ErrNoMatchingSignature) {
		t.Fatalf("third secret: %v", err)
	}
}

func TestWebhookBadSecretAndPayload(t *testing.T) {
	at := func() time.Time { return time.Unix(5, 0) }
	for _, secrets := range [][]string{{"whsec_not*base64"}, {}} {
		if w, err := NewWebhook(secrets...); w != nil || !errors.Is(err, ErrInvalidSecret) {
			t.Fatalf("secret %v: %v %v", secrets, w, err)
		}
	}
	v := mustWebhook(t, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	v.Now = at
	if _, err := v.Verify([]byte("[1]"), headersFor("m", 5, v.Sign("m", 5, []byte("[1]")))); !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("payload: %v", err)
	}
}

func mustWebhook(t *testing.T, secrets ...string) *Webhook {
	t.Helper()
	w, err := NewWebhook(secrets...)
	if err != nil {
		t.Fatalf("NewWebhook(%v): %v", secrets, err)
	}
	return w
}
