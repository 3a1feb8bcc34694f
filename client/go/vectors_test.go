package memberrewards

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"
)

// client/test-vectors.json: computed with openssl, shared by every SDK.
type vectorFile struct {
	RequestSigning struct {
		Vectors []struct {
			Name, KeyID, Secret, Timestamp, Method, PathAndQuery, Body, BodySha256, Canonical, Signature string
		}
	}
	WebhookSigning struct {
		Vectors []struct {
			Name, Secret, MsgID, Body, SignedContent, Signature string
			Timestamp                                           int64
		}
	}
	WebhookVerify struct {
		DefaultToleranceSeconds int64
		Vectors                 []struct {
			Name             string
			Secrets          []string
			Headers          map[string]string
			Body             string
			Now              int64
			ToleranceSeconds *int64
			Expect           string
			EventID          string
			EventType        string
		}
	}
}

func loadVectors(t *testing.T) vectorFile {
	t.Helper()
	raw, err := os.ReadFile("../test-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRequestSigningVectors(t *testing.T) {
	vs := loadVectors(t).RequestSigning.Vectors
	if len(vs) < 10 {
		t.Fatalf("only %d request vectors", len(vs))
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			sum := sha256.Sum256([]byte(v.Body))
			if got := hex.EncodeToString(sum[:]); got != v.BodySha256 {
				t.Errorf("body hash %s, want %s", got, v.BodySha256)
			}
			canonical := CanonicalString(v.Timestamp, v.Method, v.PathAndQuery, []byte(v.Body))
			if canonical != v.Canonical {
				t.Errorf("canonical %q, want %q", canonical, v.Canonical)
			}
			if got := Sign(v.Secret, canonical); got != v.Signature {
				t.Errorf("signature %s, want %s", got, v.Signature)
			}
			h := SignedHeaders(v.KeyID, v.Secret, v.Timestamp, v.Method, v.PathAndQuery, []byte(v.Body))
			if h["X-MR-Key-Id"] != v.KeyID || h["X-MR-Timestamp"] != v.Timestamp || h["X-MR-Signature"] != v.Signature || len(h) != 3 {
				t.Errorf("headers %v", h)
			}
		})
	}
}

func TestFormatTimestamp(t *testing.T) {
	when := time.Date(2026, 11, 22, 11, 0, 0, 987654321, time.FixedZone("CET", 3600))
	if got := FormatTimestamp(when); got != "2026-11-22T10:00:00.987Z" {
		t.Fatal(got)
	}
	if CanonicalString("t", "get", "/p?x=1", nil) != "t\nGET\n/p\n"+EmptyBodySHA256 {
		t.Fatal("empty body or query handling")
	}
}

func TestWebhookSigningVectors(t *testing.T) {
	vs := loadVectors(t).WebhookSigning.Vectors
	spec := vs[0]
	if spec.Secret != "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" || spec.MsgID != "msg_p5jXN8AQM9LWM0D4loKWxJek" ||
		spec.Signature != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("the first vector is not the specification's example: %+v", spec)
	}
	for _, v := range vs {
		if got := mustWebhook(t, v.Secret).Sign(v.MsgID, v.Timestamp, []byte(v.Body)); got != v.Signature {
			t.Errorf("%s: %s, want %s", v.Name, got, v.Signature)
		}
	}
}

var verifyKinds = map[string]error{
	"missing_header":             ErrMissingHeader,
	"invalid_timestamp":          ErrInvalidTimestamp,
	"timestamp_out_of_tolerance": ErrTimestampOutOfTolerance,
	"no_matching_signature":      ErrNoMatchingSignature,
}

func TestWebhookVerifyVectors(t *testing.T) {
	section := loadVectors(t).WebhookVerify
	seen := map[string]bool{}
	for _, v := range section.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			header := http.Header{}
			for k, val := range v.Headers {
				header.Set(k, val)
			}
			tol := section.DefaultToleranceSeconds
			if v.ToleranceSeconds != nil {
				tol = *v.ToleranceSeconds
			}
			now := time.Unix(v.Now, 0)
			verifier := mustWebhook(t, v.Secrets...)
			verifier.Tolerance = time.Duration(tol) * time.Second
			verifier.Now = func() time.Time { return now }
			event, err := verifier.Verify([]byte(v.Body), header)
			seen[v.Expect] = true
			if v.Expect == "valid" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if string(event.Raw) != v.Body {
					t.Errorf("raw %s", event.Raw)
				}
				if v.EventID != "" {
					if event.ID != v.EventID || event.Type != v.EventType || event.Data.ExternalMemberID != "member-1" ||
						event.Data.Balances == nil || event.Data.Balances.PointsBalance != 123 || event.Data.MemberSequence != 2 {
						t.Errorf("event %+v", event)
					}
				}
				return
			}
			want, known := verifyKinds[v.Expect]
			if !known {
				t.Fatalf("unknown expectation %s", v.Expect)
			}
			if !errors.Is(err, want) {
				t.Fatalf("got %v, want %v", err, want)
			}
		})
	}
	if len(seen) != 5 {
		t.Fatalf("expectations covered: %v", seen)
	}
}
