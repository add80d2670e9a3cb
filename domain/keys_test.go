package domain_test

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"

	"github.com/heraldfed/herald/domain"
)

func TestKeyPairRoundTrip(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 1024) // size is irrelevant to the encoding
	if err != nil {
		t.Fatal(err)
	}
	kp, err := domain.EncodeKeyPair(key)
	if err != nil || !kp.Valid() {
		t.Fatalf("%+v %v", kp, err)
	}
	priv, err := domain.ParsePrivateKey(kp.PrivatePEM)
	if err != nil || !priv.Equal(key) {
		t.Fatalf("private key round trip: %v", err)
	}
	pub, err := domain.ParsePublicKey(kp.PublicPEM)
	if err != nil || !pub.Equal(&key.PublicKey) {
		t.Fatalf("public key round trip: %v", err)
	}
	for _, bad := range []string{"", "not pem", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"} {
		if _, err := domain.ParsePublicKey(bad); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("ParsePublicKey(%q): %v", bad, err)
		}
		if _, err := domain.ParsePrivateKey(bad); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("ParsePrivateKey(%q): %v", bad, err)
		}
	}
}

func TestSignerOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sender, actor string
		previous      bool
	}{
		{"a1", "a1", false},
		{domain.PreviousKeySigner("a1"), "a1", true},
		{"", "", false},
	} {
		actor, previous := domain.SignerOf(tt.sender)
		if actor != tt.actor || previous != tt.previous {
			t.Errorf("SignerOf(%q) = %q, %v; want %q, %v", tt.sender, actor, previous, tt.actor, tt.previous)
		}
	}
}
