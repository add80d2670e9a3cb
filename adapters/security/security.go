// Package security adapts bcrypt and RSA key generation to the core's
// PasswordHasher and KeyGenerator ports.
package security

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
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
	return EncodeKeyPair(key)
}

// EncodeKeyPair PEM-encodes a key as PKIX public and PKCS#8 private key.
func EncodeKeyPair(key *rsa.PrivateKey) (domain.KeyPair, error) {
	priv, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return domain.KeyPair{}, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return domain.KeyPair{}, err
	}
	return domain.KeyPair{
		PublicPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
		PrivatePEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: priv})),
	}, nil
}

// ParsePrivateKey reads a PKCS#8 (or PKCS#1) PEM RSA private key.
func ParsePrivateKey(pemText string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("private key: no PEM block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("private key: not RSA")
		}
		return rk, nil
	}
	return x509.ParsePKCS1PrivateKey(block.Bytes)
}

// ParsePublicKey reads a PKIX (or PKCS#1) PEM RSA public key.
func ParsePublicKey(pemText string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("public key: no PEM block")
	}
	if k, err := x509.ParsePKIXPublicKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, errors.New("public key: not RSA")
		}
		return rk, nil
	}
	return x509.ParsePKCS1PublicKey(block.Bytes)
}
