package domain

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// OutcomeKind is the class of one delivery attempt's result.
type OutcomeKind int

const (
	// OutcomeDelivered: a 2xx.
	OutcomeDelivered OutcomeKind = iota + 1
	// OutcomeRetryable: network errors, timeouts, 3xx, 5xx, 408 and 429.
	OutcomeRetryable
	// OutcomeFinal: any other 4xx; retrying cannot help (410 Gone, 404, ...).
	OutcomeFinal
)

func (k OutcomeKind) String() string {
	switch k {
	case OutcomeDelivered:
		return "delivered"
	case OutcomeRetryable:
		return "retryable"
	case OutcomeFinal:
		return "final"
	}
	return "unknown"
}

// Outcome is the classified result of one attempt.
type Outcome struct {
	Kind   OutcomeKind
	Status int // HTTP status; 0 for network errors
	// RetryAfter is the server's Retry-After on a 429, 0 when absent.
	RetryAfter time.Duration
	// HostFailure says the attempt counts against the host's circuit
	// breaker: the host did not answer usefully (network error, timeout,
	// 5xx, 408). A 4xx or a 429 proves the host is up, so it does not.
	HostFailure bool
	Reason      string
}

// Answered says the host answered the attempt as a server that is up: an
// HTTP status that does not count against it (a 2xx, 4xx, 429, 3xx).
func (o Outcome) Answered() bool { return o.Status != 0 && !o.HostFailure }

// StatusClass is "2xx", "4xx", ... or "network", for metrics and logs.
func (o Outcome) StatusClass() string {
	if o.Status == 0 {
		return "network"
	}
	return strconv.Itoa(o.Status/100) + "xx"
}

// Classify turns an HTTP status and its Retry-After header into an Outcome.
// now resolves an HTTP-date Retry-After.
func Classify(status int, retryAfter string, now time.Time) Outcome {
	reason := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	switch {
	case status >= 200 && status < 300:
		return Outcome{Kind: OutcomeDelivered, Status: status}
	case status == http.StatusTooManyRequests:
		ra, _ := ParseRetryAfter(retryAfter, now)
		return Outcome{Kind: OutcomeRetryable, Status: status, RetryAfter: ra, Reason: reason}
	case status == http.StatusRequestTimeout:
		return Outcome{Kind: OutcomeRetryable, Status: status, HostFailure: true, Reason: reason}
	case status >= 400 && status < 500:
		return Outcome{Kind: OutcomeFinal, Status: status, Reason: reason}
	case status >= 500 && status < 600:
		return Outcome{Kind: OutcomeRetryable, Status: status, HostFailure: true, Reason: reason}
	default: // 1xx that was not followed by a final answer, 3xx (redirects are not followed for POST), nonsense
		return Outcome{Kind: OutcomeRetryable, Status: status, Reason: reason}
	}
}

// NetworkFailure classifies an attempt that got no HTTP answer (refused,
// reset, DNS, TLS, timeout). It is always retryable and counts against the
// host.
func NetworkFailure(err error) Outcome {
	msg := "network error"
	if err != nil {
		msg = err.Error()
	}
	return Outcome{Kind: OutcomeRetryable, HostFailure: true, Reason: msg}
}

// RefusedTarget classifies a delivery the client refused to make (an inbox
// on a private address while that is not allowed, an invalid URL). Trying
// again cannot help, and the host is not to blame.
func RefusedTarget(err error) Outcome {
	return Outcome{Kind: OutcomeFinal, Reason: "refused: " + err.Error()}
}

// ErrBadRetryAfter: a Retry-After that is neither delta-seconds nor an
// HTTP-date.
var ErrBadRetryAfter = errors.New("bad Retry-After")

// ParseRetryAfter reads Retry-After as delta-seconds or an HTTP-date (RFC
// 9110 §10.2.3). A date in the past is 0. It does not bound the result; Decide
// does.
func ParseRetryAfter(v string, now time.Time) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, fmt.Errorf("%w: %q", ErrBadRetryAfter, v)
		}
		// Clamp before multiplying so a huge value cannot overflow.
		if secs > int64(MaxRetryAfter/time.Second)*2 {
			secs = int64(MaxRetryAfter/time.Second) * 2
		}
		return time.Duration(secs) * time.Second, nil
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrBadRetryAfter, v)
	}
	if d := t.Sub(now); d > 0 {
		return d, nil
	}
	return 0, nil
}
