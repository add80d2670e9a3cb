package bootstrap

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
)

// Config is Herald's whole configuration (SPEC §8), read once at start from
// the environment and from flags of the same names in kebab case
// (HERALD_ADDR is --herald-addr); a flag wins over the variable.
type Config struct {
	Addr                string
	Domain              string
	Store               string
	DataDir             string // the SQLite store's data directory
	MongoURI            Secret // connection strings carry passwords
	MongoDatabase       string
	DatabaseURL         Secret
	AdminToken          Secret
	Workers             int
	PerHost             int
	AllowPrivateTargets bool
	LogFormat           string
	LogLevel            string
	InstanceActor       string
	ReservedNames       []string
	ShutdownGrace       time.Duration
	DeliveryTimeout     time.Duration
	BcryptCost          int
	Registrations       string // open, approval or closed (SPEC §11)
	AuthRatePerMinute   int    // sign-up and login attempts per client IP and minute
	AuthBurst           int    // ... and at once
	InboxRatePerMinute  int    // inbox POSTs per client IP and minute
	InboxBurst          int    // ... and at once
	FederationMode      string // blocklist or allowlist (SPEC §11)
	Scheme              string // auto, https or http: the scheme of actor URIs
	TrustedProxies      string // networks whose forwarding header names the client
	ProxyHeader         string // x-forwarded-for or forwarded

	// StreamPoll is how often a streaming connection reads the stores;
	// StreamConnections how many this process holds at most.
	StreamPoll        time.Duration
	StreamConnections int
}

// Secret is a string that never prints, so a config dump or a log line
// cannot leak it.
type Secret string

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// MarshalText keeps encoders (slog's JSON handler among them) from
// printing it.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue keeps slog from printing it either.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Store names.
const (
	StoreMemory   = "memory"
	StoreSQLite   = "sqlite"
	StoreMongo    = "mongo"
	StorePostgres = "postgres"
)

type setting struct {
	env   string
	def   string
	usage string
	apply func(*Config, string) error
}

func str(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

func secret(dst func(*Config) *Secret) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = Secret(v); return nil }
}

func integer(name string, dst func(*Config) *int, lo, hi int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%s=%q: want a whole number from %d to %d", name, v, lo, hi)
		}
		*dst(c) = n
		return nil
	}
}

func duration(name string, dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return fmt.Errorf("%s=%q: want a positive duration such as 30s", name, v)
		}
		*dst(c) = d
		return nil
	}
}

// settings is the table of every variable: its default and meaning. The
// README's table is this one.
var settings = []setting{
	{"HERALD_ADDR", "127.0.0.1:8080", "listen address", str(func(c *Config) *string { return &c.Addr })},
	{"HERALD_DOMAIN", "localhost:8080", "the instance's public host, used in actor URIs and WebFinger", str(func(c *Config) *string { return &c.Domain })},
	{"HERALD_STORE", StoreSQLite, "sqlite (one file, kept in HERALD_DATA_DIR), memory (lost on exit: tests, demos), mongo or postgres", str(func(c *Config) *string { return &c.Store })},
	{"HERALD_DATA_DIR", "herald-data", "data directory of the sqlite store, relative to the working directory; created on first start", str(func(c *Config) *string { return &c.DataDir })},
	{"MONGODB_URI", "", "connection string of the Mongo store", secret(func(c *Config) *Secret { return &c.MongoURI })},
	{"HERALD_MONGO_DATABASE", "herald", "database name in the Mongo store", str(func(c *Config) *string { return &c.MongoDatabase })},
	{"DATABASE_URL", "", "connection string of the PostgreSQL store", secret(func(c *Config) *Secret { return &c.DatabaseURL })},
	{"HERALD_ADMIN_TOKEN", "", "bearer token of the operator API and page (empty: operator API off)", secret(func(c *Config) *Secret { return &c.AdminToken })},
	{"HERALD_WORKERS", "8", "deliveries at a time in this process", integer("HERALD_WORKERS", func(c *Config) *int { return &c.Workers }, 1, 1024)},
	{"HERALD_PER_HOST", "2", "deliveries at a time per remote host, over every process sharing the store", integer("HERALD_PER_HOST", func(c *Config) *int { return &c.PerHost }, 1, 64)},
	{"HERALD_ALLOW_PRIVATE_TARGETS", "false", "let deliveries reach loopback/private addresses (tests, demos)", func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("HERALD_ALLOW_PRIVATE_TARGETS=%q: want true or false", v)
		}
		c.AllowPrivateTargets = b
		return nil
	}},
	{"HERALD_LOG_FORMAT", "auto", "text (tint), json, or auto (tint on a terminal)", str(func(c *Config) *string { return &c.LogFormat })},
	{"HERALD_LOG_LEVEL", "info", "debug, info, warn or error", str(func(c *Config) *string { return &c.LogLevel })},
	{"HERALD_INSTANCE_ACTOR", "instance", "user name of the instance actor (never available to users)", str(func(c *Config) *string { return &c.InstanceActor })},
	{"HERALD_RESERVED_NAMES", "", "comma-separated names an operator adds to the never-available list", func(c *Config, v string) error {
		c.ReservedNames = nil
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				c.ReservedNames = append(c.ReservedNames, n)
			}
		}
		return nil
	}},
	{"HERALD_SHUTDOWN_GRACE", "30s", "how long in-flight deliveries may finish after SIGTERM", duration("HERALD_SHUTDOWN_GRACE", func(c *Config) *time.Duration { return &c.ShutdownGrace })},
	{"HERALD_DELIVERY_TIMEOUT", "10s", "timeout of one outgoing delivery request (Mastodon reads for 10 s)", duration("HERALD_DELIVERY_TIMEOUT", func(c *Config) *time.Duration { return &c.DeliveryTimeout })},
	{"HERALD_BCRYPT_COST", "10", "bcrypt cost of password hashes", integer("HERALD_BCRYPT_COST", func(c *Config) *int { return &c.BcryptCost }, 4, 31)},
	{"HERALD_REGISTRATIONS", "open", "who may sign up: open, approval (the account waits for the operator's approval: /admin/api/registrations) or closed (403)", str(func(c *Config) *string { return &c.Registrations })},
	{"HERALD_AUTH_RATE_PER_MINUTE", "10", "sign-up and login attempts per client IP and minute (429 past it)", integer("HERALD_AUTH_RATE_PER_MINUTE", func(c *Config) *int { return &c.AuthRatePerMinute }, 1, 100000)},
	{"HERALD_AUTH_BURST", "10", "sign-up and login attempts per client IP at once", integer("HERALD_AUTH_BURST", func(c *Config) *int { return &c.AuthBurst }, 1, 100000)},
	{"HERALD_FEDERATION_MODE", "blocklist", "blocklist: federate with every domain but the blocked ones; allowlist: only with the allowed ones (operator API /admin/api/domain-allows)", str(func(c *Config) *string { return &c.FederationMode })},
	{"HERALD_INBOX_RATE_PER_MINUTE", "3000", "ActivityPub inbox POSTs per client IP and minute (429 with Retry-After past it, before any signature work)", integer("HERALD_INBOX_RATE_PER_MINUTE", func(c *Config) *int { return &c.InboxRatePerMinute }, 1, 10_000_000)},
	{"HERALD_INBOX_BURST", "600", "ActivityPub inbox POSTs per client IP at once", integer("HERALD_INBOX_BURST", func(c *Config) *int { return &c.InboxBurst }, 1, 10_000_000)},
	{"HERALD_SCHEME", "auto", "scheme of actor URIs: https, http, or auto (http for a loopback HERALD_DOMAIN, https otherwise)", str(func(c *Config) *string { return &c.Scheme })},
	{"HERALD_TRUSTED_PROXIES", "", "comma-separated networks (CIDR) of reverse proxies whose HERALD_PROXY_HEADER names the client; none: the TCP peer is the client", str(func(c *Config) *string { return &c.TrustedProxies })},
	{"HERALD_PROXY_HEADER", "x-forwarded-for", "the header the trusted proxies write the client address in: x-forwarded-for or forwarded (RFC 7239)", str(func(c *Config) *string { return &c.ProxyHeader })},
	{"HERALD_STREAM_POLL", "2s", "how often a streaming API connection reads the stores for what is new to it (processes share no event bus)", duration("HERALD_STREAM_POLL", func(c *Config) *time.Duration { return &c.StreamPoll })},
	{"HERALD_STREAM_CONNECTIONS", "1000", "streaming API connections this process holds at most (4 per token)", integer("HERALD_STREAM_CONNECTIONS", func(c *Config) *int { return &c.StreamConnections }, 1, 1_000_000)},
}

// FlagName is the kebab-case flag of an environment variable.
func FlagName(env string) string { return strings.ToLower(strings.ReplaceAll(env, "_", "-")) }

// LoadConfig reads the environment through getenv, then args as flags.
// Unknown flags, malformed values and inconsistent settings are errors
// that name the setting.
func LoadConfig(args []string, getenv func(string) string, usageOut io.Writer) (Config, error) {
	fs := flag.NewFlagSet("herald", flag.ContinueOnError)
	fs.SetOutput(usageOut)
	load := ConfigFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return load(getenv)
}

// ConfigFlags defines every setting as a flag of fs (HERALD_ADDR is
// --herald-addr), beside the flags fs has of its own: a command's. Once fs
// is parsed, the function it returns reads the environment through getenv
// and gives the Config, a flag set on the command line winning over its
// variable.
func ConfigFlags(fs *flag.FlagSet) func(getenv func(string) string) (Config, error) {
	flags := make(map[string]*string, len(settings))
	for _, s := range settings {
		flags[s.env] = fs.String(FlagName(s.env), "", s.usage+" (env "+s.env+", default "+quoteDefault(s.def)+")")
	}
	return func(getenv func(string) string) (Config, error) {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		var c Config
		for _, s := range settings {
			v := s.def
			if e := getenv(s.env); e != "" {
				v = e
			}
			if set[FlagName(s.env)] {
				v = *flags[s.env]
			}
			if err := s.apply(&c, v); err != nil {
				return Config{}, err
			}
		}
		return c, c.validate()
	}
}

func quoteDefault(d string) string {
	if d == "" {
		return "none"
	}
	return d
}

func (c Config) validate() error {
	var errs []error
	if k, err := kindOf(c); err != nil {
		errs = append(errs, err)
	} else if err := k.check(c); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("HERALD_ADDR=%q: want host:port", c.Addr))
	}
	if c.Domain == "" || strings.ContainsAny(c.Domain, "/ ") {
		errs = append(errs, fmt.Errorf("HERALD_DOMAIN=%q: want a host[:port], without scheme or path", c.Domain))
	}
	if !domain.RegistrationMode(c.Registrations).Valid() {
		errs = append(errs, fmt.Errorf("HERALD_REGISTRATIONS=%q: want open, approval or closed", c.Registrations))
	}
	switch c.LogFormat {
	case "auto", "text", "json":
	default:
		errs = append(errs, fmt.Errorf("HERALD_LOG_FORMAT=%q: want text, json or auto", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("HERALD_LOG_LEVEL=%q: want debug, info, warn or error", c.LogLevel))
	}
	switch c.Scheme {
	case "auto", "https", "http":
	default:
		errs = append(errs, fmt.Errorf("HERALD_SCHEME=%q: want auto, https or http", c.Scheme))
	}
	if !domain.FederationMode(c.FederationMode).Valid() {
		errs = append(errs, fmt.Errorf("HERALD_FEDERATION_MODE=%q: want blocklist or allowlist", c.FederationMode))
	}
	if _, err := httpapi.NewProxies(c.TrustedProxies, c.ProxyHeader); err != nil {
		errs = append(errs, fmt.Errorf("HERALD_TRUSTED_PROXIES / HERALD_PROXY_HEADER: %w", err))
	}
	if c.PerHost > c.Workers {
		errs = append(errs, fmt.Errorf("HERALD_PER_HOST=%d is more than HERALD_WORKERS=%d", c.PerHost, c.Workers))
	}
	// A delivery must end well inside its job's lease, or the reaper could
	// hand the job to another worker while the first is still sending it.
	if limit := engine.DefaultConfig().LeaseFor / 2; c.DeliveryTimeout > limit {
		errs = append(errs, fmt.Errorf("HERALD_DELIVERY_TIMEOUT=%s: at most %s, half the %s lease", c.DeliveryTimeout, limit, 2*limit))
	}
	return errors.Join(errs...)
}

// Settings lists every variable with its default and meaning, for --help
// and documentation.
func Settings() [][3]string {
	out := make([][3]string, len(settings))
	for i, s := range settings {
		out[i] = [3]string{s.env, s.def, s.usage}
	}
	return out
}
