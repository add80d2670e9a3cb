package fake

import (
	"errors"
	"sync/atomic"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.PasswordHasher = Passwords{}
	_ ports.KeyGenerator   = (*Keys)(nil)
)

// Passwords "hashes" by prefixing; only for tests, where bcrypt's cost would
// dominate the run time.
type Passwords struct{}

// Hash implements ports.PasswordHasher.
func (Passwords) Hash(pw string) (string, error) { return "fake:" + pw, nil }

// Verify implements ports.PasswordHasher.
func (Passwords) Verify(hash, pw string) error {
	if hash != "fake:"+pw {
		return domain.ErrUnauthorized
	}
	return nil
}

// Keys returns a fixed, syntactically valid key pair (not a usable key),
// counting calls; Err makes it fail.
type Keys struct {
	Err   error
	calls atomic.Int64
}

// GenerateKeyPair implements ports.KeyGenerator.
func (k *Keys) GenerateKeyPair() (domain.KeyPair, error) {
	k.calls.Add(1)
	if k.Err != nil {
		return domain.KeyPair{}, k.Err
	}
	return domain.KeyPair{
		PublicPEM:  "-----BEGIN PUBLIC KEY-----\nfake\n-----END PUBLIC KEY-----\n",
		PrivatePEM: "-----BEGIN PRIVATE KEY-----\nfake\n-----END PRIVATE KEY-----\n",
	}, nil
}

// Calls is how many key pairs were asked for.
func (k *Keys) Calls() int { return int(k.calls.Load()) }

// ErrInjected is what failing fakes return.
var ErrInjected = errors.New("injected failure")
