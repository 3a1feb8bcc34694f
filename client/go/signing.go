package memberrewards

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// EmptyBodySHA256 is the hash signed for a request without a body.
const EmptyBodySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// FormatTimestamp writes t as X-MR-Timestamp: RFC 3339 UTC to the
// millisecond. A POST's signature serves one idempotency key, so two calls
// with one body in one second must not sign the same timestamp.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// CanonicalString is what the signature covers: the timestamp as sent, the
// method in upper case, the path as sent up to "?" (the query is not
// signed) and the lower-case hex SHA-256 of the raw body, joined by "\n".
func CanonicalString(timestamp, method, pathAndQuery string, body []byte) string {
	path := pathAndQuery
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	sum := sha256.Sum256(body)
	return timestamp + "\n" + strings.ToUpper(method) + "\n" + path + "\n" + hex.EncodeToString(sum[:])
}

// Sign returns "v1=" + lower-case hex HMAC-SHA256 of canonical, keyed with
// the secret's bytes as issued (not decoded).
func Sign(secret, canonical string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(canonical))
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// SignedHeaders returns X-MR-Key-Id, X-MR-Timestamp and X-MR-Signature for
// one request; an empty timestamp means now.
func SignedHeaders(keyID, secret, timestamp, method, pathAndQuery string, body []byte) map[string]string {
	if timestamp == "" {
		timestamp = FormatTimestamp(time.Now())
	}
	return map[string]string{
		"X-MR-Key-Id":    keyID,
		"X-MR-Timestamp": timestamp,
		"X-MR-Signature": Sign(secret, CanonicalString(timestamp, method, pathAndQuery, body)),
	}
}
