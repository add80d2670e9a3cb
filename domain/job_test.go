package domain_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestNewJob(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	payload := []byte(`{"type":"Create"}`)
	tests := []struct {
		name     string
		inbox    string
		activity string
		payload  []byte
		wantHost string
		wantErr  error
	}{
		{"https inbox", "https://Mastodon.Example/inbox", "https://h/a/1", payload, "mastodon.example", nil},
		{"port is part of the host", "http://127.0.0.1:9000/users/x/inbox", "https://h/a/1", payload, "127.0.0.1:9000", nil},
		{"ftp inbox", "ftp://x/inbox", "https://h/a/1", payload, "", domain.ErrInvalidInput},
		{"relative inbox", "/inbox", "https://h/a/1", payload, "", domain.ErrInvalidInput},
		{"garbage inbox", "http://[::1", "https://h/a/1", payload, "", domain.ErrInvalidInput},
		{"no activity id", "https://x/inbox", "", payload, "", domain.ErrInvalidInput},
		{"no payload", "https://x/inbox", "https://h/a/1", nil, "", domain.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j, err := domain.NewJob("0190f2a4-7b1c-7d2e-8f3a-4b5c6d7e8f90", tt.activity, tt.inbox, "actor1", "https://h/users/a#main-key", tt.payload, now)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if j.Host != tt.wantHost || j.State != domain.JobQueued || !j.RunAt.Equal(now) || j.Attempts != 0 ||
				j.DedupeKey != domain.DedupeKey(tt.activity, tt.inbox) || !j.Leasable(now) || j.Leasable(now.Add(-time.Second)) {
				t.Fatalf("job %+v", j)
			}
		})
	}
}

func TestDedupeKey(t *testing.T) {
	t.Parallel()
	a := domain.DedupeKey("https://h/a/1", "https://r/inbox")
	if a != domain.DedupeKey("https://h/a/1", "https://r/inbox") {
		t.Fatal("not deterministic")
	}
	if a == domain.DedupeKey("https://h/a/2", "https://r/inbox") || a == domain.DedupeKey("https://h/a/1", "https://r/other") {
		t.Fatal("different deliveries share a key")
	}
	if domain.DedupeKey("ab", "c") == domain.DedupeKey("a", "bc") {
		t.Fatal("concatenation collides")
	}
	if len(a) != 64 {
		t.Fatalf("key length %d", len(a))
	}
}

func TestDedupeKeyBytes(t *testing.T) {
	t.Parallel()
	key := domain.DedupeKey("https://h/a/1", "https://r/inbox")
	b, err := domain.DedupeKeyBytes(key)
	if err != nil || hex.EncodeToString(b) != key {
		t.Fatalf("DedupeKeyBytes(%q) = %x, %v", key, b, err)
	}
	for _, bad := range []string{"", "k1", key[:62], key + "00", strings.ToUpper(key), "zz" + key[2:]} {
		if _, err := domain.DedupeKeyBytes(bad); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("DedupeKeyBytes(%q): %v, want ErrInvalidInput", bad, err)
		}
	}
}

func TestJobStates(t *testing.T) {
	t.Parallel()
	for _, s := range domain.JobStates() {
		if !s.Valid() {
			t.Errorf("%s invalid", s)
		}
	}
	if domain.JobState("running").Valid() {
		t.Error("unknown state valid")
	}
	if !domain.JobDead.Finished() || !domain.JobSucceeded.Finished() || domain.JobQueued.Finished() || domain.JobLeased.Finished() {
		t.Error("Finished wrong")
	}
}

func TestJobIDBytes(t *testing.T) {
	t.Parallel()
	const id = "0190f2a4-7b1c-7d2e-8f3a-4b5c6d7e8f90"
	b, err := domain.JobIDBytes(id)
	if err != nil || hex.EncodeToString(b[:]) != "0190f2a47b1c7d2e8f3a4b5c6d7e8f90" {
		t.Fatalf("JobIDBytes(%s) = %x, %v", id, b, err)
	}
	for _, bad := range []string{
		"", "j1", strings.ToUpper(id), "{" + id + "}", strings.ReplaceAll(id, "-", ""),
		id[:35], id + "0", "0190f2a4-7b1c-7d2e-8f3a-4b5c6d7e8fzz", "0190f2a47-b1c-7d2e-8f3a-4b5c6d7e8f90",
		"+190f2a4-7b1c-7d2e-8f3a-4b5c6d7e8f90",
	} {
		if _, err := domain.JobIDBytes(bad); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("JobIDBytes(%q) = %v, want ErrInvalidInput", bad, err)
		}
		if domain.ValidJobID(bad) {
			t.Errorf("ValidJobID(%q)", bad)
		}
		if _, err := domain.NewJob(bad, "https://h/a/1", "https://r/inbox", "s", "k", []byte("{}"), time.Now()); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("NewJob with id %q: %v", bad, err)
		}
	}
}
