package domain

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// EncodeKeyPair PEM-encodes an RSA key as a PKIX public and a PKCS#8
// private key, the forms ActivityPub servers publish and store.
func EncodeKeyPair(key *rsa.PrivateKey) (KeyPair, error) {
	priv, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{
		PublicPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
		PrivatePEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: priv})),
	}, nil
}

// ParsePrivateKey reads a PKCS#8 (or PKCS#1) PEM RSA private key.
func ParsePrivateKey(pemText string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, fmt.Errorf("%w: private key is not PEM", ErrInvalidInput)
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: private key is not RSA", ErrInvalidInput)
		}
		return rk, nil
	}
	k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: private key: %v", ErrInvalidInput, err)
	}
	return k, nil
}

// ParsePublicKey reads a PKIX (or PKCS#1) PEM RSA public key, as remote
// actors publish them in publicKey.publicKeyPem.
func ParsePublicKey(pemText string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, fmt.Errorf("%w: public key is not PEM", ErrInvalidInput)
	}
	if k, err := x509.ParsePKIXPublicKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%w: public key is not RSA", ErrInvalidInput)
		}
		return rk, nil
	}
	k, err := x509.ParsePKCS1PublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: public key: %v", ErrInvalidInput, errors.Unwrap(err))
	}
	return k, nil
}

// previousSigner marks a job's sender as the actor's previous key pair.
const previousSigner = "#previous-key"

// PreviousKeySigner names, as the sender of a job, the key pair actorID
// had before its last rotation. The Update{Person} announcing a new key
// is signed with it: the followers' servers know only the old key until
// they read that Update (GoToSocial never refetches a key whose signature
// fails, and refuses a changed key on a plain refetch).
func PreviousKeySigner(actorID string) string { return actorID + previousSigner }

// SignerOf splits a job's sender into the actor and whether the job is
// signed with the actor's previous key pair.
func SignerOf(senderID string) (actorID string, previous bool) {
	if a, ok := strings.CutSuffix(senderID, previousSigner); ok {
		return a, true
	}
	return senderID, false
}
