package activitypub

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-fed/httpsig"

	"github.com/heraldfed/herald/domain"
)

// requiredHeaders must be covered by the signature of an inbox POST: the
// target (so it cannot be replayed to another inbox), the host, the date
// (so it cannot be replayed later) and the digest (so the body cannot be
// swapped).
var requiredHeaders = []string{"(request-target)", "host", "date", "digest"}

// acceptedAlgorithms are the draft-cavage algorithm names Herald verifies
// as RSASSA-PKCS1-v1_5 with SHA-256: "rsa-sha256", and "hs2019" (the name
// go-fed, GoToSocial and newer Mastodons send for the same signature).
// Absent is allowed too: the algorithm is derived from the key.
var acceptedAlgorithms = map[string]bool{"": true, "rsa-sha256": true, "hs2019": true}

// signature is a parsed request signature whose headers, date and digest
// have been checked; the cryptographic check waits for the signer's key.
type signature struct {
	keyID    string
	verifier httpsig.Verifier
}

// parseSignature checks everything about a signed request that does not
// need the signer's key. Every error wraps errSignature.
func parseSignature(r *http.Request, body []byte, now time.Time, maxSkew time.Duration) (*signature, error) {
	value := r.Header.Get("Signature")
	if value == "" {
		if auth := r.Header.Get("Authorization"); len(auth) > 10 && strings.EqualFold(auth[:10], "signature ") {
			value = auth[10:]
		}
	}
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("%w: no Signature header", errSignature)
	}
	params, err := signatureParams(value)
	if err != nil {
		return nil, err
	}
	if alg := strings.ToLower(params["algorithm"]); !acceptedAlgorithms[alg] {
		return nil, fmt.Errorf("%w: algorithm %q is not rsa-sha256 or hs2019", errSignature, clip(alg))
	}
	signed := strings.Fields(strings.ToLower(params["headers"]))
	for _, h := range requiredHeaders {
		if !slices.Contains(signed, h) {
			return nil, fmt.Errorf("%w: the signature does not cover %q", errSignature, h)
		}
	}
	date, err := http.ParseTime(r.Header.Get("Date"))
	if err != nil {
		return nil, fmt.Errorf("%w: Date %q is not an HTTP date", errSignature, clip(r.Header.Get("Date")))
	}
	if skew := now.Sub(date); skew > maxSkew || skew < -maxSkew {
		return nil, fmt.Errorf("%w: Date %s is more than %s from our clock", errSignature, date.UTC().Format(time.RFC3339), maxSkew)
	}
	if err := checkDigest(r.Header.Values("Digest"), body); err != nil {
		return nil, err
	}
	v, err := httpsig.NewVerifier(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSignature, err)
	}
	return &signature{keyID: v.KeyId(), verifier: v}, nil
}

// verify checks the signature with the signer's PEM public key.
func (s *signature) verify(publicKeyPEM string) error {
	pub, err := domain.ParsePublicKey(publicKeyPEM)
	if err != nil {
		return fmt.Errorf("%w: the signer's key: %v", errSignature, err)
	}
	if err := s.verifier.Verify(pub, httpsig.RSA_SHA256); err != nil {
		return fmt.Errorf("%w: does not verify with key %s", errSignature, clip(s.keyID))
	}
	return nil
}

// signatureParams reads the Signature header's parameters exactly as
// go-fed/httpsig, which verifies the signature, reads them: split at every
// comma, each a name=value with case-sensitive names ("Headers" is not
// "headers", " headers" after a space is neither) and the value's quotes
// trimmed. Any other reading would let a request pass the checks here on
// one header list while the signature is verified over another (go-fed's
// default, the Date alone). A name given twice is refused outright (go-fed
// keeps the last).
func signatureParams(v string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range strings.Split(v, ",") {
		key, val, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%w: malformed parameter %q", errSignature, clip(p))
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%w: parameter %q given twice", errSignature, clip(key))
		}
		out[key] = strings.Trim(val, `"`)
	}
	return out, nil
}

// checkDigest verifies the Digest header (RFC 3230) against the body: at
// least one SHA-256 or SHA-512 value, and every such value matching.
func checkDigest(values []string, body []byte) error {
	var known int
	for _, header := range values {
		for _, item := range strings.Split(header, ",") {
			alg, val, ok := strings.Cut(strings.TrimSpace(item), "=")
			if !ok {
				continue
			}
			var h hash.Hash
			switch strings.ToLower(alg) {
			case "sha-256":
				h = sha256.New()
			case "sha-512":
				h = sha512.New()
			default:
				continue
			}
			known++
			h.Write(body)
			want := base64.StdEncoding.EncodeToString(h.Sum(nil))
			if subtle.ConstantTimeCompare([]byte(want), []byte(strings.TrimSpace(val))) != 1 {
				return fmt.Errorf("%w: Digest does not match the body", errSignature)
			}
		}
	}
	if known == 0 {
		return fmt.Errorf("%w: no SHA-256 Digest of the body", errSignature)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
