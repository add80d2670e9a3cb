package httpapi

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"golang.org/x/time/rate"
)

// RateLimit configures a per-client limit: of sign-up and login, the two
// endpoints that hash a password (bcrypt) for anyone who asks, or of the
// ActivityPub inboxes, where every POST may cost a signature check and a
// key fetch. The endpoints of one limiter share one token bucket per
// client: PerMinute sustained, Burst at once.
type RateLimit struct {
	PerMinute int
	Burst     int
	// MaxClients bounds the clients tracked at once (memory); past it,
	// new clients share one bucket until idle ones are evicted.
	MaxClients int
	// Now is the clock (nil: time.Now); tests drive it by hand.
	Now func() time.Time
}

// DefaultRateLimit is 10 attempts a minute with bursts of 10 per client:
// a person who mistypes a password never meets it, a script guessing
// passwords or squatting names gets 14,400 tries a day instead of millions.
func DefaultRateLimit() RateLimit { return RateLimit{PerMinute: 10, Burst: 10, MaxClients: 100_000} }

// RateLimiter limits requests per client IP (per /64 for IPv6, which one
// host usually holds whole) with golang.org/x/time/rate. Its memory is
// bounded: a client's bucket is dropped once it has been idle long enough
// to be full again, when a fresh one is the same, so eviction never
// loosens the limit.
//
// It keys on the request's RemoteAddr, which Handler has set to the
// client's address: the TCP peer, or the forwarded client behind a trusted
// proxy (Proxies).
type RateLimiter struct {
	cfg      RateLimit
	every    rate.Limit
	idle     time.Duration // time for an empty bucket to fill up
	mu       sync.Mutex
	clients  map[string]*client
	overflow *rate.Limiter
	swept    time.Time
}

type client struct {
	lim  *rate.Limiter
	seen time.Time
}

// NewRateLimiter builds a limiter; zero fields of cfg take the defaults.
func NewRateLimiter(cfg RateLimit) *RateLimiter {
	d := DefaultRateLimit()
	if cfg.PerMinute <= 0 {
		cfg.PerMinute = d.PerMinute
	}
	if cfg.Burst <= 0 {
		cfg.Burst = d.Burst
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = d.MaxClients
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	every := rate.Every(time.Minute / time.Duration(cfg.PerMinute))
	return &RateLimiter{
		cfg: cfg, every: every,
		idle:     time.Duration(cfg.Burst) * time.Minute / time.Duration(cfg.PerMinute),
		clients:  make(map[string]*client),
		overflow: rate.NewLimiter(every, cfg.Burst),
	}
}

// Register implements Routes so that bootstrap can hand the configured
// limiter to New among the extra surfaces; it adds no route of its own.
func (l *RateLimiter) Register(*mux.Router) {}

// Clients is the number of clients tracked now.
func (l *RateLimiter) Clients() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}

// Wrap answers 429 with Retry-After once the client is over the limit.
// A nil limiter limits nothing.
func (l *RateLimiter) Wrap(next http.Handler) http.Handler { return l.WrapBy(nil, next) }

// WrapBy is Wrap with the client named by key (an access token's hash,
// so each token has its own budget) where key returns one, and by its
// address otherwise.
func (l *RateLimiter) WrapBy(key func(*http.Request) string, next http.Handler) http.Handler {
	if l == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := ""
		if key != nil {
			k = key(r)
		}
		if k == "" {
			k = clientKey(r.RemoteAddr)
		}
		if wait, ok := l.allow(k); !ok {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			writeJSON(w, http.StatusTooManyRequests, errorBody{Error: "too many requests: try again in " + strconv.Itoa(max(secs, 1)) + " s"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allow takes one token from key's bucket, or says how long until one is
// there.
func (l *RateLimiter) allow(key string) (time.Duration, bool) {
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= l.idle {
		l.sweep(now)
	}
	c, ok := l.clients[key]
	var lim *rate.Limiter
	switch {
	case ok:
		lim = c.lim
		c.seen = now
	case len(l.clients) >= l.cfg.MaxClients:
		if l.sweep(now); len(l.clients) >= l.cfg.MaxClients {
			lim = l.overflow
			break
		}
		fallthrough
	default:
		lim = rate.NewLimiter(l.every, l.cfg.Burst)
		l.clients[key] = &client{lim: lim, seen: now}
	}
	res := lim.ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		return wait, false
	}
	return 0, true
}

// sweep drops the buckets that are full again.
func (l *RateLimiter) sweep(now time.Time) {
	for k, c := range l.clients {
		if now.Sub(c.seen) >= l.idle {
			delete(l.clients, k)
		}
	}
	l.swept = now
}

// clientKey is the peer's IP, or its /64 for IPv6.
func clientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// rateLimiterOf picks the limiter bootstrap passed among the extra
// surfaces. Without one nothing is limited: bootstrap always passes the
// configured one, and tests of other surfaces are not throttled.
func rateLimiterOf(extra []Routes) *RateLimiter {
	for _, e := range extra {
		if l, ok := e.(*RateLimiter); ok && l != nil {
			return l
		}
	}
	return nil
}
