package activitypub

import (
	"net/http"
	"time"
)

// What the black-box fuzz tests of signature parsing (signature_fuzz_test.go)
// reach inside for: the parameter splitter and the key-free checks of a
// signed request, as the inbox runs them.

// SignatureParams is signatureParams.
var SignatureParams = signatureParams

// ParseSignature runs parseSignature; on success it returns the key id and
// the check of the signature against a PEM public key.
func ParseSignature(r *http.Request, body []byte, now time.Time, maxSkew time.Duration) (string, func(publicKeyPEM string) error, error) {
	s, err := parseSignature(r, body, now, maxSkew)
	if err != nil {
		return "", nil, err
	}
	return s.keyID, s.verify, nil
}
