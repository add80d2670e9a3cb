// Package security adapts bcrypt and RSA key generation to the core's
// PasswordHasher and KeyGenerator ports.
package security

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.PasswordHasher = Bcrypt{}
	_ ports.KeyGenerator   = RSAKeys{}
)

// Bcrypt hashes passwords with bcrypt at Cost (bcrypt.DefaultCost if 0).
type Bcrypt struct{ Cost int }

// Hash implements ports.PasswordHasher.
func (b Bcrypt) Hash(pw string) (string, error) {
	cost := b.Cost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		return "", fmt.Errorf("bcrypt: %w", err)
	}
	return string(h), nil
}

// Verify implements ports.PasswordHasher.
func (Bcrypt) Verify(hash, pw string) error {
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw))
	if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		return domain.ErrUnauthorized
	}
	if err != nil {
		return fmt.Errorf("%w: %v", domain.ErrUnauthorized, err)
	}
	return nil
}

// RSAKeys makes RSA key pairs of Bits bits (2048 if 0), as SPEC §1 asks.
type RSAKeys struct{ Bits int }

// GenerateKeyPair implements ports.KeyGenerator.
func (k RSAKeys) GenerateKeyPair() (domain.KeyPair, error) {
	bits := k.Bits
	if bits == 0 {
		bits = 2048
	}
	key, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return domain.KeyPair{}, fmt.Errorf("rsa: %w", err)
	}
	return domain.EncodeKeyPair(key)
}
