package activitypub_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/httpapi/activitypub"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/domain"
)

// signatureSeeds are Signature headers as servers send them, and as
// attackers bend them: duplicated and re-cased parameters, commas and
// quotes inside values, missing quotes, empty and huge values.
var signatureSeeds = []string{
	`keyId="https://r.example/users/bob#main-key",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="c2ln"`,
	`keyId="https://r.example/users/bob#main-key",algorithm="hs2019",headers="(request-target) host date digest content-type",signature="c2ln"`,
	`keyId="https://r.example/users/bob/main-key",headers="(request-target) host date digest",signature="c2ln"`,
	`KEYID="k",ALGORITHM="RSA-SHA256",HEADERS="(REQUEST-TARGET) HOST DATE DIGEST",SIGNATURE="c2ln"`,
	`headers="(request-target) host date digest",keyId="k",headers="date",signature="c2ln"`,
	`keyId="k",Headers="(request-target) host date digest",signature="c2ln"`,
	`keyId="a,b=c",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="c2ln"`,
	`keyId=k,algorithm=rsa-sha256,headers=(request-target) host date digest,signature=c2ln`,
	`keyId="k,algorithm="rsa-sha256"`, `keyId="`, `=`, `,,,`, `"`, `keyId`, ` , keyId = "k" , `,
	`keyId="k",algorithm="hmac-sha256",headers="(request-target) host date digest",signature="c2ln"`,
	`keyId="",signature=""`, "keyId=\"\x00\",signature=\"\xff\"", strings.Repeat(`a="b",`, 200),
}

// inboxPost is a POST of body to alice's inbox with the Date (now) and
// the SHA-256 Digest of body that a signature covers, and no signature.
func inboxPost(t *testing.T, body []byte, now time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "https://local.example/users/alice/inbox", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	req.Header.Set("Date", now.Format(http.TimeFormat))
	req.Header.Set("Digest", "SHA-256="+base64.StdEncoding.EncodeToString(sum[:]))
	return req
}

// The parameter splitter never panics, refuses with a 401, reads names
// exactly as given (case and all, as go-fed/httpsig does) and values
// without their quotes, refuses a name given twice, and reads back what
// a sender writes.
func FuzzSignatureParams(f *testing.F) {
	for _, s := range signatureSeeds {
		f.Add(s, "https://r.example/users/bob#main-key")
	}
	f.Add(`signature="x"`, `a,b=c d`)
	f.Fuzz(func(t *testing.T, header, keyID string) {
		params, err := activitypub.SignatureParams(header)
		if err != nil {
			if st := activitypub.Status(err); st != http.StatusUnauthorized {
				t.Fatalf("refusal %v is %d, want 401", err, st)
			}
		}
		for k, v := range params {
			if strings.ContainsAny(k, "=,") || strings.HasPrefix(v, `"`) || strings.HasSuffix(v, `"`) {
				t.Fatalf("parameter %q=%q: a name with = or a comma, or a value with its quotes", k, v)
			}
		}
		if again, _ := activitypub.SignatureParams(header); !reflect.DeepEqual(params, again) {
			t.Fatalf("two parses of %q differ: %v, %v", header, params, again)
		}
		if strings.ContainsAny(keyID, `",`) {
			return
		}
		built := `keyId="` + keyID + `",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="c2ln"`
		p, err := activitypub.SignatureParams(built)
		if err != nil || p["keyId"] != keyID || p["algorithm"] != "rsa-sha256" || p["headers"] != "(request-target) host date digest" || p["signature"] != "c2ln" {
			t.Fatalf("%q parsed as %v, %v", built, p, err)
		}
		if _, err := activitypub.SignatureParams(built + `,keyId="other"`); err == nil {
			t.Fatalf("a second keyId after %q was taken", built)
		}
	})
}

// The key-free checks of a signed POST never panic; every refusal is a
// 401; what they let through names a key id, requires the four headers,
// and does not verify under a key that did not sign it.
func FuzzParseSignature(f *testing.F) {
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range signatureSeeds {
		f.Add(s, []byte(`{"type":"Follow"}`), false)
	}
	f.Add(signatureSeeds[0], []byte{}, true)
	f.Fuzz(func(t *testing.T, header string, body []byte, authorization bool) {
		req := inboxPost(t, body, now)
		req.Header.Set("Content-Type", "application/activity+json")
		if authorization {
			req.Header.Set("Authorization", "Signature "+header)
		} else {
			req.Header.Set("Signature", header)
		}
		keyID, verify, err := activitypub.ParseSignature(req, body, now, time.Hour)
		if err != nil {
			if st := activitypub.Status(err); st != http.StatusUnauthorized {
				t.Fatalf("refusal %v is %d, want 401", err, st)
			}
			return
		}
		if keyID == "" {
			t.Fatalf("accepted %q without a key id", header)
		}
		params, err := activitypub.SignatureParams(header)
		if err != nil {
			t.Fatalf("accepted %q, whose parameters do not parse: %v", header, err)
		}
		covered := strings.Fields(strings.ToLower(params["headers"]))
		for _, h := range []string{"(request-target)", "host", "date", "digest"} {
			found := false
			for _, c := range covered {
				found = found || c == h
			}
			if !found {
				t.Fatalf("accepted %q, which does not cover %s", header, h)
			}
		}
		if verr := verify(kp.PublicPEM); verr == nil {
			t.Fatalf("%q verifies under a key that never signed anything", header)
		} else if st := activitypub.Status(verr); st != http.StatusUnauthorized {
			t.Fatalf("a signature that does not verify is %d, want 401", st)
		}
	})
}

// Whatever the Signature header says, a signature made over the Date alone
// never passes: the list of headers Herald checks must be the list the
// signature is verified over (a parser differential would let a signature
// the victim made for a GET cover any POST). KEY and SIG in the template
// stand for the key id and the signature.
func FuzzSignatureOverTheDateAloneNeverPasses(f *testing.F) {
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		f.Fatal(err)
	}
	priv, err := domain.ParsePrivateKey(kp.PrivatePEM)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`keyId="KEY",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="SIG"`,
		`keyId="KEY",algorithm="rsa-sha256",headers="date",signature="SIG"`,
		`keyId="KEY",signature="SIG"`,
		`keyId="KEY",algorithm="rsa-sha256",Headers="(request-target) host date digest",signature="SIG"`,
		`keyId="KEY",algorithm="rsa-sha256",headers="(request-target) host date digest",headers="date",signature="SIG"`,
		`keyId="KEY",headers="(request-target) host date digest, x",signature="SIG"`,
	} {
		f.Add(s)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"Create"}`)
	sum := sha256.Sum256([]byte("date: " + now.Format(http.TimeFormat)))
	sig, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, sum[:])
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, template string) {
		req := inboxPost(t, body, now)
		header := strings.NewReplacer("KEY", "https://r.example/users/bob#main-key", "SIG", base64.StdEncoding.EncodeToString(sig)).Replace(template)
		req.Header.Set("Signature", header)
		_, verify, err := activitypub.ParseSignature(req, body, now, time.Hour)
		if err != nil {
			return
		}
		if verify(kp.PublicPEM) == nil {
			t.Fatalf("a signature over the Date alone passed as %q", header)
		}
	})
}
