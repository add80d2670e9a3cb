package security_test

import (
	"errors"
	"testing"

	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/domain"
)

func TestBcrypt(t *testing.T) {
	t.Parallel()
	b := security.Bcrypt{Cost: 4}
	h, err := b.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if h == "correct horse" || b.Verify(h, "correct horse") != nil {
		t.Fatal("hash does not verify")
	}
	if err := b.Verify(h, "wrong"); !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("wrong password: %v", err)
	}
	if err := b.Verify("garbage", "x"); !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("garbage hash: %v", err)
	}
}

func TestRSAKeys(t *testing.T) {
	t.Parallel()
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	if !kp.Valid() {
		t.Fatalf("invalid pair %+v", kp)
	}
	priv, err := domain.ParsePrivateKey(kp.PrivatePEM)
	if err != nil {
		t.Fatal(err)
	}
	if priv.N.BitLen() != 2048 {
		t.Fatalf("%d bits", priv.N.BitLen())
	}
	pub, err := domain.ParsePublicKey(kp.PublicPEM)
	if err != nil || !pub.Equal(&priv.PublicKey) {
		t.Fatalf("public key mismatch: %v", err)
	}
	if _, err := domain.ParsePrivateKey("nope"); err == nil {
		t.Fatal("garbage parsed")
	}
}
