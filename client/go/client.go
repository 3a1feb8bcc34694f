package memberrewards

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Version of this SDK, sent in the User-Agent.
const Version = "0.1.0"

// RetryPolicy shapes the retries of one logical call. Zero fields take the
// defaults: 3 retries, backoff from 0.5 s doubling up to 8 s (each drawn
// from [d/2, d]), a Retry-After up to 60 s waited in full; a longer one is
// returned as the error at once. MaxRetries below 0 disables retrying.
type RetryPolicy struct {
	MaxRetries    int
	BaseDelay     time.Duration
	MaxDelay      time.Duration
	MaxRetryAfter time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries == 0 {
		p.MaxRetries = 3
	} else if p.MaxRetries < 0 {
		p.MaxRetries = 0
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 8 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 60 * time.Second
	}
	return p
}

// Config of a Client. BaseURL, KeyID, KeySecret and PartnerRef are required.
type Config struct {
	BaseURL    string        // e.g. https://sandbox.example.com (a path prefix is kept and signed)
	KeyID      string        // mrk_sbx_... or mrk_prd_...
	KeySecret  string        // as issued
	PartnerRef string        // your club's reference, put in every POST body
	Timeout    time.Duration // per attempt; default 30 s (also set on a given HTTPClient)
	Retry      RetryPolicy
	HTTPClient *http.Client // optional; its redirects are never followed
	UserAgent  string
}

// Client calls the partner API. It is safe for concurrent use.
type Client struct {
	base, pathPrefix string
	keyID, secret    string
	partnerRef       string
	retry            RetryPolicy
	http             *http.Client
	userAgent        string
	sleep            func(ctx context.Context, d time.Duration) error
	randMu           sync.Mutex
	rand             *mrand.Rand
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("memberrewards: BaseURL must be an http(s) URL, got %q", cfg.BaseURL)
	}
	if cfg.KeyID == "" || cfg.KeySecret == "" || cfg.PartnerRef == "" {
		return nil, errors.New("memberrewards: KeyID, KeySecret and PartnerRef are required")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	hc := &http.Client{Timeout: timeout}
	if cfg.HTTPClient != nil {
		copied := *cfg.HTTPClient
		hc = &copied
		if cfg.Timeout > 0 || hc.Timeout == 0 {
			hc.Timeout = timeout
		}
	}
	// A signature covers one path: a redirect is answered, never followed.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	ua := cfg.UserAgent
	if ua == "" {
		ua = "memberrewards-go/" + Version
	}
	return &Client{
		base:       strings.TrimRight(cfg.BaseURL, "/"),
		pathPrefix: strings.TrimRight(u.EscapedPath(), "/"),
		keyID:      cfg.KeyID,
		secret:     cfg.KeySecret,
		partnerRef: cfg.PartnerRef,
		retry:      cfg.Retry.withDefaults(),
		http:       hc,
		userAgent:  ua,
		sleep:      sleepCtx,
		rand:       mrand.New(mrand.NewSource(time.Now().UnixNano())),
	}, nil
}

// NewFromEnv reads MR_BASE_URL, MR_KEY_ID, MR_KEY_SECRET and MR_PARTNER_REF.
func NewFromEnv() (*Client, error) {
	cfg := Config{BaseURL: os.Getenv("MR_BASE_URL"), KeyID: os.Getenv("MR_KEY_ID"),
		KeySecret: os.Getenv("MR_KEY_SECRET"), PartnerRef: os.Getenv("MR_PARTNER_REF")}
	for name, v := range map[string]string{"MR_BASE_URL": cfg.BaseURL, "MR_KEY_ID": cfg.KeyID,
		"MR_KEY_SECRET": cfg.KeySecret, "MR_PARTNER_REF": cfg.PartnerRef} {
		if v == "" {
			return nil, fmt.Errorf("memberrewards: environment variable %s is not set", name)
		}
	}
	return New(cfg)
}

// PartnerRef is the club reference the client puts in every POST body.
func (c *Client) PartnerRef() string { return c.partnerRef }

// CallOption adjusts one call.
type CallOption func(*callOptions)

type callOptions struct{ idempotencyKey string }

// WithIdempotencyKey sends a POST with this key instead of a fresh random
// one (e.g. to retry a call whose outcome you did not learn).
func WithIdempotencyKey(key string) CallOption {
	return func(o *callOptions) { o.idempotencyKey = key }
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// newIdempotencyKey is a random (version 4) UUID.
func newIdempotencyKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("memberrewards: no randomness for an idempotency key: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (c *Client) jitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	c.randMu.Lock()
	defer c.randMu.Unlock()
	return time.Duration(c.rand.Int63n(int64(max) + 1))
}

// backoff before retry n (0-based): drawn from [d/2, d], d = min(max, base*2^n).
func (c *Client) backoff(n int) time.Duration {
	d := c.retry.MaxDelay
	if n < 30 {
		if e := c.retry.BaseDelay << uint(n); e > 0 && e < d {
			d = e
		}
	}
	return d/2 + c.jitter(d/2)
}

// escapeSegment percent-encodes one path segment (or a query value, with
// ',' kept), leaving only unreserved characters as they are.
func escapeSegment(s string, keep string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' ||
			ch == '-' || ch == '.' || ch == '_' || ch == '~' || strings.IndexByte(keep, ch) >= 0 {
			b.WriteByte(ch)
		} else {
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

// ErrInvalidArgument is an argument refused before anything is sent: an id
// the API cannot take (not 1-128 printable ASCII characters) or one a URL
// resolver would fold ("." or ".."), so an empty id never turns a call into
// a request for another path. Test it with errors.Is.
var ErrInvalidArgument = errors.New("memberrewards: invalid argument")

// idPath is prefix + the percent-encoded id + suffix, or ErrInvalidArgument.
func idPath(prefix, id, suffix string) (string, error) {
	valid := len(id) >= 1 && len(id) <= 128 && id != "." && id != ".."
	for i := 0; valid && i < len(id); i++ {
		valid = id[i] >= ' ' && id[i] <= '~'
	}
	if !valid {
		return "", fmt.Errorf("%w: %q is no id (1-128 printable ASCII characters, not \".\" or \"..\")", ErrInvalidArgument, id)
	}
	return prefix + escapeSegment(id, "") + suffix, nil
}

// call runs one logical call and returns its typed answer, or nil and the error.
func call[T any](c *Client, ctx context.Context, method, path string, query []param, body map[string]interface{},
	opts []CallOption) (*T, error) {
	var out T
	if err := c.do(ctx, method, path, query, body, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Answer is in every POST's answer: IdempotentReplay is true when the
// service replayed the stored answer of an earlier call under the same
// idempotency key (X-MR-Idempotent-Replay).
type Answer struct {
	IdempotentReplay bool `json:"-"`
}

func (a *Answer) setReplay(replayed bool) { a.IdempotentReplay = replayed }

type param struct{ name, value string }

func encodeQuery(params []param) string {
	var parts []string
	for _, p := range params {
		if p.value != "" {
			parts = append(parts, escapeSegment(p.name, "")+"="+escapeSegment(p.value, ","))
		}
	}
	return strings.Join(parts, "&")
}

type envelope struct {
	OK    *bool           `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Code         string         `json:"code"`
		Message      string         `json:"message"`
		RequestID    string         `json:"requestId"`
		Details      []FieldProblem `json:"details"`
		RedemptionID string         `json:"redemptionId"`
	} `json:"error"`
}

func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// outcome decodes an answer: the data of a success, or the *APIError it stands for.
func outcome(status int, h http.Header, raw []byte) (json.RawMessage, *APIError) {
	var env envelope
	jsonOK := json.Unmarshal(raw, &env) == nil
	if jsonOK && env.OK != nil && *env.OK && status >= 200 && status < 300 && len(env.Data) > 0 {
		return env.Data, nil
	}
	e := &APIError{Status: status, RequestID: h.Get("X-Request-Id"), RetryAfter: parseRetryAfter(h.Get("Retry-After")),
		IdempotentReplay: h.Get("X-MR-Idempotent-Replay") == "true"}
	if jsonOK && env.Error != nil && env.Error.Code != "" {
		e.Code, e.Message, e.Details, e.RedemptionID = env.Error.Code, env.Error.Message, env.Error.Details, env.Error.RedemptionID
		if env.Error.RequestID != "" {
			e.RequestID = env.Error.RequestID
		}
		return nil, e
	}
	e.Code = "unexpected_response"
	e.Message = fmt.Sprintf("unexpected answer (HTTP %d, not the API's JSON envelope)", status)
	return nil, e
}

func retryable(e *APIError) bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable ||
		(e.Status == http.StatusConflict && e.Code == "idempotency_in_progress")
}

// do runs one logical call: each attempt signed afresh, retried as the
// policy says, the answer's data decoded into out.
func (c *Client) do(ctx context.Context, method, path string, query []param, body map[string]interface{},
	out interface{}, opts []CallOption) error {
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	target := c.base + path
	if q := encodeQuery(query); q != "" {
		target += "?" + q
	}
	var payload []byte
	if method == http.MethodPost {
		full := map[string]interface{}{"partnerRef": c.partnerRef}
		for k, v := range body {
			full[k] = v
		}
		var err error
		// Serialised once: the bytes signed are the bytes sent, on every attempt.
		if payload, err = json.Marshal(full); err != nil {
			return fmt.Errorf("memberrewards: encoding the request: %w", err)
		}
		if o.idempotencyKey == "" {
			o.idempotencyKey = newIdempotencyKey()
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(payload))
		if err != nil {
			return fmt.Errorf("memberrewards: %w", err)
		}
		// Sign the path exactly as it goes on the request line.
		for k, v := range SignedHeaders(c.keyID, c.secret, "", method, req.URL.EscapedPath(), payload) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", c.userAgent)
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-MR-Idempotency-Key", o.idempotencyKey)
		} else {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		resp, err := c.http.Do(req)
		var raw []byte
		if err == nil {
			raw, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if attempt < c.retry.MaxRetries {
				if serr := c.sleep(ctx, c.backoff(attempt)); serr != nil {
					return serr
				}
				continue
			}
			return &ConnectionError{Method: method, URL: target, Attempts: attempt + 1, IdempotencyKey: o.idempotencyKey, Err: err}
		}
		data, apiErr := outcome(resp.StatusCode, resp.Header, raw)
		if apiErr == nil {
			if out == nil {
				return nil
			}
			if err := json.Unmarshal(data, out); err != nil {
				return &APIError{Status: resp.StatusCode, Code: "invalid_response", RequestID: resp.Header.Get("X-Request-Id"),
					Message: "the answer does not have the documented shape: " + err.Error()}
			}
			if a, ok := out.(interface{ setReplay(bool) }); ok {
				a.setReplay(resp.Header.Get("X-MR-Idempotent-Replay") == "true")
			}
			return nil
		}
		if !retryable(apiErr) || attempt >= c.retry.MaxRetries {
			return apiErr
		}
		delay := c.backoff(attempt)
		if apiErr.RetryAfter > 0 {
			if apiErr.RetryAfter > c.retry.MaxRetryAfter {
				return apiErr
			}
			delay = apiErr.RetryAfter + c.jitter(c.retry.BaseDelay/2)
		}
		if err := c.sleep(ctx, delay); err != nil {
			return err
		}
	}
}
