package e2e_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nginxBin is Debian's nginx, which .ci/run installs.
const nginxBin = "/usr/sbin/nginx"

// siteFile is the nginx site operators install (docs/deploy.md); the test
// runs this very file.
const siteFile = "../../deploy/nginx/herald.conf"

// nginx is a real nginx in front of one Herald, TLS with a certificate the
// test made, on loopback ports of its own.
type nginx struct {
	base  string // https://127.0.0.1:port
	roots *x509.CertPool
	dir   string
	cmd   *exec.Cmd
}

// client is an HTTPS client trusting the test's certificate that connects
// from the loopback address from (127.0.0.2, ...), so that nginx sees
// distinct client addresses.
func (n *nginx) client(from string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DialContext:     d.DialContext,
		TLSClientConfig: &tls.Config{RootCAs: n.roots},
	}}
}

// selfSigned writes a certificate for 127.0.0.1 and localhost and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "herald proxy test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

// siteConfig is deploy/nginx/herald.conf with only its listen addresses,
// upstream and certificate paths replaced; it fails the test if one of
// them is no longer in the file as written, so the test and the file
// cannot drift apart unnoticed.
func siteConfig(t *testing.T, httpsAddr, httpAddr, upstream, cert, key string) string {
	t.Helper()
	b, err := os.ReadFile(siteFile)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for _, r := range []struct{ old, new string }{
		{"    listen [::]:80;\n", ""},
		{"    listen [::]:443 ssl;\n", ""},
		{"listen 80;", "listen " + httpAddr + ";"},
		{"listen 443 ssl;", "listen " + httpsAddr + " ssl;"},
		{"server 127.0.0.1:8080;", "server " + upstream + ";"},
		{"/etc/letsencrypt/live/social.example/fullchain.pem", cert},
		{"/etc/letsencrypt/live/social.example/privkey.pem", key},
	} {
		if strings.Count(conf, r.old) != 1 {
			t.Fatalf("%s: %q is not there exactly once; the proxy test templates it", siteFile, r.old)
		}
		conf = strings.Replace(conf, r.old, r.new, 1)
	}
	return conf
}

// startNginx runs nginx in the foreground (one process, no daemon) with a
// prefix and configuration of its own in a temporary directory, in front
// of the Herald at upstream, listening on httpsAddr.
func startNginx(t *testing.T, httpsAddr, upstream string) *nginx {
	t.Helper()
	dir := t.TempDir()
	cert, key, roots := selfSigned(t, dir)
	site := siteConfig(t, httpsAddr, freeAddr(t), upstream, cert, key)
	if err := os.WriteFile(filepath.Join(dir, "herald.conf"), []byte(site), 0o600); err != nil {
		t.Fatal(err)
	}
	// One process without a master: it dies with the test (Pdeathsig) and
	// runs as the test's user, owning its temporary directories.
	main := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 128; }
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/herald.conf;
}
`, dir)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(nginxBin, "-t", "-p", dir, "-c", conf, "-e", "stderr").CombinedOutput(); err != nil {
		t.Fatalf("nginx -t refuses the site file: %v\n%s", err, out)
	}
	n := &nginx{base: "https://" + httpsAddr, roots: roots, dir: dir}
	n.cmd = exec.Command(nginxBin, "-p", dir, "-c", conf, "-e", "stderr")
	var out bytes.Buffer
	n.cmd.Stdout, n.cmd.Stderr = &out, &out
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.cmd.Wait() }()
	t.Cleanup(func() {
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = n.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			access, _ := os.ReadFile(filepath.Join(dir, "access.log"))
			t.Logf("nginx output:\n%s\nerror.log:\n%s\naccess.log:\n%s", out.String(), logs, access)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", httpsAddr, time.Second)
		if err == nil {
			_ = c.Close()
			return n
		}
		select {
		case err := <-done:
			t.Fatalf("nginx exited: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not listen on %s: %v", httpsAddr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Herald behind a real nginx that ends TLS, configured with the site file
// of deploy/: signed activities verify through it (Host and
// (request-target) as the sender signed them), actor URIs are https, the
// login limit counts each client apart, large bodies get 413, and no
// answer is a 5xx.
func TestBehindNginx(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(nginxBin); err != nil {
		t.Skipf("no nginx at %s (.ci/run installs Debian's package): Herald behind a real reverse proxy stays unverified: "+
			"signatures through it, https actor URIs, the rate limit per forwarded client, 413 on large bodies", nginxBin)
	}
	front := freeAddr(t)
	h := startHerald(t, "herald", map[string]string{
		"HERALD_DOMAIN": front, "HERALD_SCHEME": "https",
		"HERALD_TRUSTED_PROXIES": "127.0.0.1/32",
	})
	upstream := strings.TrimPrefix(h.base, "http://")
	n := startNginx(t, front, upstream)
	h.api = api{t: t, base: n.base, client: n.client("")}

	token := h.signUp("alice")
	alice := n.base + "/users/alice"
	if status, out := h.call(http.MethodGet, "/.well-known/webfinger?resource=acct:alice@"+front, "", nil); status != 200 ||
		!strings.Contains(fmt.Sprint(out), alice) {
		t.Fatalf("webfinger through the proxy: %d %v, want %s", status, out, alice)
	}
	req, _ := http.NewRequest(http.MethodGet, alice, nil)
	req.Header.Set("Accept", "application/activity+json")
	resp, err := n.client("").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var actor map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&actor)
	resp.Body.Close()
	if actor["id"] != alice || actor["inbox"] != alice+"/inbox" {
		t.Fatalf("actor through the proxy: %d %v, want https URIs", resp.StatusCode, actor)
	}

	// A remote server (plain HTTP on loopback; Herald delivers to it
	// directly) follows alice through the proxy and fetches her key through
	// it to verify the Accept.
	rm := newRemote(t, true, time.Now, "bob")
	rm.client = n.client("")
	bob := rm.actor("bob")
	rm.follow(bob, alice, alice+"/inbox")
	eventually(t, "the Accept", func() bool { return len(rm.received("Accept")) == 1 })
	if g := rm.received("Accept")[0]; g.verifyErr != nil || g.keyID != alice+"#main-key" {
		t.Fatalf("Accept through the proxy: key %s, verify %v", g.keyID, g.verifyErr)
	}
	if status, out := h.call(http.MethodGet, "/api/v1/personas/alice/followers?state=accepted", token, nil); status != 200 || out["total"] != 1.0 {
		t.Fatalf("followers: %d %v", status, out)
	}
	// alice's post reaches bob, signed by her https key id.
	pub := h.post(token, map[string]any{"as": "alice", "content": "hello through nginx"})
	eventually(t, "the Create", func() bool { return len(rm.received("Create")) == 1 })
	if g := rm.received("Create")[0]; g.verifyErr != nil || g.keyID != alice+"#main-key" || g.activity["actor"] != alice {
		t.Fatalf("Create %v: key %s verify %v", pub["uri"], g.keyID, g.verifyErr)
	}
	// bob's post delivered to alice through the proxy verifies too, on
	// both inboxes.
	note := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": bob.uri + "/activities/1", "type": "Create", "actor": bob.uri,
		"to": []string{alice}, "object": map[string]any{"id": bob.uri + "/notes/1", "type": "Note", "attributedTo": bob.uri, "to": []string{alice}, "content": "hi alice"}}
	for _, inbox := range []string{alice + "/inbox", n.base + "/inbox"} {
		if status, body := rm.send(bob, inbox, note); status != http.StatusAccepted {
			t.Fatalf("bob's Create to %s through the proxy: %d %s", inbox, status, body)
		}
	}

	// Unsigned and tampered activities are refused through the proxy.
	follow, _ := json.Marshal(map[string]any{"id": bob.uri + "/follows/2", "type": "Follow", "actor": bob.uri, "object": alice})
	unsigned, _ := http.NewRequest(http.MethodPost, alice+"/inbox", bytes.NewReader(follow))
	unsigned.Header.Set("Content-Type", "application/activity+json")
	if status, body := rm.do(unsigned); status != http.StatusUnauthorized {
		t.Fatalf("unsigned through the proxy: %d %s", status, body)
	}
	tampered := rm.signed(bob, alice+"/inbox", follow)
	evil := bytes.Replace(follow, []byte("follows/2"), []byte("follows/3"), 1)
	tampered.Body, tampered.ContentLength = nopCloser{bytes.NewReader(evil)}, int64(len(evil))
	if status, body := rm.do(tampered); status != http.StatusUnauthorized {
		t.Fatalf("tampered body through the proxy: %d %s", status, body)
	}
	// Signed for another path: (request-target) must be what was signed.
	// The signer is one Herald has not met: a key fetched within the last
	// minute that does not verify is answered 503 instead (Herald cannot
	// tell a forgery from a key rotated since, and asks for a retry), and
	// this test also wants no 5xx through the proxy.
	dan := rm.addActor("dan")
	danFollow, _ := json.Marshal(map[string]any{"id": dan.uri + "/follows/1", "type": "Follow", "actor": dan.uri, "object": alice})
	moved := rm.signed(dan, alice+"/inbox", danFollow)
	moved.URL.Path = "/inbox"
	if status, body := rm.do(moved); status != http.StatusUnauthorized {
		t.Fatalf("signature for another path through the proxy: %d %s", status, body)
	}

	// Large bodies: 413 from Herald past 1 MiB, from nginx past 2 MiB.
	for _, size := range []int{3 << 19, 2 << 20} {
		big := map[string]any{"type": "Create", "actor": bob.uri, "content": strings.Repeat("x", size)}
		if status, _ := rm.send(bob, n.base+"/inbox", big); status != http.StatusRequestEntityTooLarge {
			t.Fatalf("%d byte body through the proxy: %d, want 413", size, status)
		}
	}

	// 20 failed logins from 127.0.0.2 end in 429, whatever it puts in
	// X-Forwarded-For, while 127.0.0.3 still signs in.
	one := api{t: t, base: n.base, client: n.client("127.0.0.2")}
	two := api{t: t, base: n.base, client: n.client("127.0.0.3")}
	limited := 0
	for i := 0; i < 20; i++ {
		req, _ := http.NewRequest(http.MethodPost, n.base+"/api/v1/sessions", strings.NewReader(`{"username":"alice","password":"wrong horse"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1)) // a made-up client each time
		resp, err := one.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Fatalf("failed login %d: %d", i+1, resp.StatusCode)
		}
	}
	if limited == 0 {
		t.Fatal("20 failed logins from one client address were never limited")
	}
	if status, out := two.call(http.MethodPost, "/api/v1/sessions", "", map[string]string{"username": "alice", "password": "correct horse"}); status != http.StatusCreated {
		t.Fatalf("another client address signing in: %d %v", status, out)
	}
	// Nothing above was a 5xx in nginx's eyes either. nginx writes a
	// request's log line after it has sent the response, so the last
	// sign-in's line may not be there yet when the client has its answer:
	// read until it is (bounded), then judge every line.
	var access []byte
	for try := 0; try < 50; try++ {
		var err error
		if access, err = os.ReadFile(filepath.Join(n.dir, "access.log")); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(access), "127.0.0.3") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, line := range strings.Split(string(access), "\n") {
		if f := strings.Fields(line); len(f) > 8 && strings.HasPrefix(f[8], "5") {
			t.Fatalf("a 5xx through the proxy: %s", line)
		}
	}
	if !strings.Contains(string(access), "127.0.0.2") || !strings.Contains(string(access), "127.0.0.3") {
		t.Fatalf("nginx did not see the two client addresses:\n%s", access)
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
