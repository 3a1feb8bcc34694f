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

func TestVerifyWebhookDefaultToleranceAgainstTheClock(t *testing.T) {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"id":"evt_1","type":"member.created","createdAt":"2026-11-26T10:00:00.000Z","environment":"sandbox","data":{"externalMemberId":"m","memberSequence":1,"status":"created","payoutReady":true}}`)
	now := time.Now().Unix()
	sig, _ := SignWebhook(secret, "evt_1", now, body)
	event, err := VerifyWebhook(body, headersFor("evt_1", now, sig), secret)
	if err != nil || event.Type != "member.created" || event.Data.PayoutReady == nil || !*event.Data.PayoutReady {
		t.Fatalf("%+v %v", event, err)
	}
	old := now - 301
	sig, _ = SignWebhook(secret, "evt_1", old, body)
	if _, err := VerifyWebhook(body, headersFor("evt_1", old, sig), secret); !errors.Is(err, ErrTimestampOutOfTolerance) {
		t.Fatalf("stale: %v", err)
	}
}

func TestVerifyWebhookRotationEitherSecretAlone(t *testing.T) {
	oldSecret, newSecret := "whsec_ugZF12zT1ylnU1LYwZT5en8D+vIDJjJ/w8cXxwyZbh0=", "whsec_XlzAqQC2EsKA0p4IFurDj51wKMAF4z0wCKHRNzZ9WLI="
	body := []byte(`{"id":"evt_2","type":"member.updated","createdAt":"2026-11-26T10:00:00.000Z","environment":"sandbox","data":{}}`)
	a, _ := SignWebhook(oldSecret, "evt_2", 1000, body)
	b, _ := SignWebhook(newSecret, "evt_2", 1000, body)
	at := func() time.Time { return time.Unix(1000, 0) }
	for _, secrets := range [][]string{{oldSecret}, {newSecret}, {newSecret, oldSecret}} {
		v := WebhookVerifier{Secrets: secrets, Now: at}
		if _, err := v.Verify(body, headersFor("evt_2", 1000, a+" "+b)); err != nil {
			t.Fatalf("%v: %v", secrets, err)
		}
	}
	v := WebhookVerifier{Secrets: []string{"whsec_10E7zzCOsZrfnjoWTB/ihWEvNA9BnssAXMsrM1NY3WE="}, Now: at}
	if _, err := v.Verify(body, headersFor("evt_2", 1000, a+" "+b)); !errors.Is(err, ErrNoMatchingSignature) {
		t.Fatalf("third secret: %v", err)
	}
}

func TestVerifyWebhookBadSecretAndPayload(t *testing.T) {
	at := func() time.Time { return time.Unix(5, 0) }
	v := WebhookVerifier{Secrets: []string{"whsec_not*base64"}, Now: at}
	if _, err := v.Verify([]byte("{}"), headersFor("m", 5, "v1,AAAA")); !errors.Is(err, ErrInvalidSecret) {
		t.Fatalf("secret: %v", err)
	}
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	sig, _ := SignWebhook(secret, "m", 5, []byte("[1]"))
	v = WebhookVerifier{Secrets: []string{secret}, Now: at}
	if _, err := v.Verify([]byte("[1]"), headersFor("m", 5, sig)); !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("payload: %v", err)
	}
}
