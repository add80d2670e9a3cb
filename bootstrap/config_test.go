package bootstrap_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/bootstrap"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := bootstrap.LoadConfig(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.Domain != "localhost:8080" || c.Store != "sqlite" || c.DataDir != "herald-data" || c.Workers != 8 || c.PerHost != 2 ||
		c.AllowPrivateTargets || c.LogFormat != "auto" || c.AdminToken != "" || c.ShutdownGrace != 30*time.Second || c.Registrations != "open" {
		t.Fatalf("defaults %+v", c)
	}
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(bootstrap.Config) bool
		wantErr string
	}{
		{"env", map[string]string{"HERALD_WORKERS": "16", "HERALD_PER_HOST": "4", "HERALD_ALLOW_PRIVATE_TARGETS": "true"}, nil,
			func(c bootstrap.Config) bool { return c.Workers == 16 && c.PerHost == 4 && c.AllowPrivateTargets }, ""},
		{"flag wins over env", map[string]string{"HERALD_ADDR": "127.0.0.1:1"}, []string{"--herald-addr", "127.0.0.1:2"},
			func(c bootstrap.Config) bool { return c.Addr == "127.0.0.1:2" }, ""},
		{"postgres with url", map[string]string{"HERALD_STORE": "postgres", "DATABASE_URL": "postgres://x"}, nil,
			func(c bootstrap.Config) bool { return c.Store == "postgres" && string(c.DatabaseURL) == "postgres://x" }, ""},
		{"mongo flag", nil, []string{"--herald-store=mongo", "--mongodb-uri=mongodb://x"},
			func(c bootstrap.Config) bool { return c.Store == "mongo" && string(c.MongoURI) == "mongodb://x" }, ""},
		{"reserved names list", map[string]string{"HERALD_RESERVED_NAMES": " ops, billing ,,"}, nil,
			func(c bootstrap.Config) bool { return fmt.Sprint(c.ReservedNames) == "[ops billing]" }, ""},
		{"sqlite data dir", map[string]string{"HERALD_DATA_DIR": "/var/lib/herald"}, nil,
			func(c bootstrap.Config) bool { return c.Store == "sqlite" && c.DataDir == "/var/lib/herald" }, ""},
		{"memory by flag", nil, []string{"--herald-store=memory"},
			func(c bootstrap.Config) bool { return c.Store == "memory" }, ""},
		{"sqlite without data dir", nil, []string{"--herald-data-dir= "}, nil, "needs HERALD_DATA_DIR"},
		{"postgres without url", map[string]string{"HERALD_STORE": "postgres"}, nil, nil, "needs DATABASE_URL"},
		{"mongo without uri", map[string]string{"HERALD_STORE": "mongo"}, nil, nil, "needs MONGODB_URI"},
		{"unknown store", map[string]string{"HERALD_STORE": "redis"}, nil, nil, "HERALD_STORE"},
		{"bad workers", map[string]string{"HERALD_WORKERS": "many"}, nil, nil, "HERALD_WORKERS"},
		{"zero workers", map[string]string{"HERALD_WORKERS": "0"}, nil, nil, "HERALD_WORKERS"},
		{"per host above workers", map[string]string{"HERALD_WORKERS": "2", "HERALD_PER_HOST": "3"}, nil, nil, "HERALD_PER_HOST"},
		{"bad bool", map[string]string{"HERALD_ALLOW_PRIVATE_TARGETS": "sure"}, nil, nil, "HERALD_ALLOW_PRIVATE_TARGETS"},
		{"bad duration", map[string]string{"HERALD_SHUTDOWN_GRACE": "soon"}, nil, nil, "HERALD_SHUTDOWN_GRACE"},
		{"delivery timeout as long as the lease", map[string]string{"HERALD_DELIVERY_TIMEOUT": "2m"}, nil, nil, "HERALD_DELIVERY_TIMEOUT"},
		{"delivery timeout within the lease", map[string]string{"HERALD_DELIVERY_TIMEOUT": "1m"}, nil,
			func(c bootstrap.Config) bool { return c.DeliveryTimeout == time.Minute }, ""},
		{"bad log format", map[string]string{"HERALD_LOG_FORMAT": "xml"}, nil, nil, "HERALD_LOG_FORMAT"},
		{"domain with scheme", map[string]string{"HERALD_DOMAIN": "https://x.example"}, nil, nil, "HERALD_DOMAIN"},
		{"addr without port", map[string]string{"HERALD_ADDR": "localhost"}, nil, nil, "HERALD_ADDR"},
		{"trusted proxies", map[string]string{"HERALD_TRUSTED_PROXIES": "10.0.0.0/8, ::1", "HERALD_PROXY_HEADER": "forwarded"}, nil,
			func(c bootstrap.Config) bool {
				return c.TrustedProxies == "10.0.0.0/8, ::1" && c.ProxyHeader == "forwarded"
			}, ""},
		{"bad trusted proxy", map[string]string{"HERALD_TRUSTED_PROXIES": "proxy.example"}, nil, nil, "HERALD_TRUSTED_PROXIES"},
		{"bad proxy header", map[string]string{"HERALD_PROXY_HEADER": "x-real-ip"}, nil, nil, "HERALD_PROXY_HEADER"},
		{"bad scheme", map[string]string{"HERALD_SCHEME": "ftp"}, nil, nil, "HERALD_SCHEME"},
		{"registrations by approval", map[string]string{"HERALD_REGISTRATIONS": "approval"}, nil,
			func(c bootstrap.Config) bool { return c.Registrations == "approval" }, ""},
		{"registrations closed by flag", nil, []string{"--herald-registrations=closed"},
			func(c bootstrap.Config) bool { return c.Registrations == "closed" }, ""},
		{"bad registrations", map[string]string{"HERALD_REGISTRATIONS": "invite"}, nil, nil, "HERALD_REGISTRATIONS"},
		{"https on a loopback domain", map[string]string{"HERALD_SCHEME": "https"}, nil,
			func(c bootstrap.Config) bool {
				return bootstrap.ProvideURLs(c).Persona("a") == "https://localhost:8080/users/a"
			}, ""},
		{"auto scheme", nil, nil,
			func(c bootstrap.Config) bool {
				return bootstrap.ProvideURLs(c).Persona("a") == "http://localhost:8080/users/a"
			}, ""},
		{"unknown flag", nil, []string{"--nope"}, nil, "nope"},
		{"stray argument", nil, []string{"extra"}, nil, "unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := bootstrap.LoadConfig(tt.args, env(tt.env), io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(c) {
				t.Fatalf("config %+v, err %v", c, err)
			}
		})
	}
}

func TestAdminTokenNeverPrints(t *testing.T) {
	t.Parallel()
	c, err := bootstrap.LoadConfig(nil, env(map[string]string{"HERALD_ADMIN_TOKEN": "s3cret-token",
		"DATABASE_URL": "postgres://herald:s3cret-pw@db/herald", "MONGODB_URI": "mongodb://herald:s3cret-pw@db"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "cfg", c, "token", c.AdminToken)
	fmt.Fprintf(&buf, "%v %+v %s", c, c, c.AdminToken)
	if strings.Contains(buf.String(), "s3cret") {
		t.Fatalf("secret printed: %s", buf.String())
	}
	if string(c.AdminToken) != "s3cret-token" {
		t.Fatal("token lost")
	}
}
