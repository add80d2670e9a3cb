package bootstrap_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldfed/herald/bootstrap"
)

// HERALD_REGISTRATIONS reaches every part that needs it: sign-up, NodeInfo
// and the operator's queue of pending sign-ups.
func TestRegistrationsWired(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode   string
		signUp int
		open   bool
	}{
		{"open", 201, true},
		{"approval", 202, false},
		{"closed", 403, false},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			cfg, err := bootstrap.LoadConfig([]string{"--herald-addr=127.0.0.1:0", "--herald-bcrypt-cost=4", "--herald-store=memory",
				"--herald-admin-token=adm", "--herald-registrations=" + tt.mode}, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			srv, _ := startServer(t, cfg)
			addr, err := srv.Addr(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			base := "http://" + addr.String()
			call := func(method, path, token, body string) (int, map[string]any) {
				t.Helper()
				req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var m map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&m)
				return resp.StatusCode, m
			}
			if code, body := call("GET", "/nodeinfo/2.0", "", ""); code != 200 || body["openRegistrations"] != tt.open {
				t.Fatalf("nodeinfo %d openRegistrations %v, want %v", code, body["openRegistrations"], tt.open)
			}
			code, body := call("POST", "/api/v1/accounts", "", `{"username":"alice","password":"correct horse","reason":"hello"}`)
			if code != tt.signUp {
				t.Fatalf("sign-up %d %v, want %d", code, body, tt.signUp)
			}
			_, pending := call("GET", "/admin/api/registrations", "adm", "")
			if pending["mode"] != tt.mode {
				t.Fatalf("the operator sees registrations %v", pending)
			}
			if tt.mode != "approval" {
				return
			}
			list, _ := pending["registrations"].([]any)
			if len(list) != 1 {
				t.Fatalf("pending %v", pending)
			}
			id := list[0].(map[string]any)["id"].(string)
			if code, _ := call("POST", "/api/v1/sessions", "", `{"username":"alice","password":"correct horse"}`); code != 403 {
				t.Fatalf("login while pending: %d", code)
			}
			if code, body := call("POST", "/admin/api/registrations/"+id+"/approve", "adm", ""); code != 200 {
				t.Fatalf("approve %d %v", code, body)
			}
			if code, body := call("POST", "/api/v1/sessions", "", `{"username":"alice","password":"correct horse"}`); code != 201 || body["token"] == nil {
				t.Fatalf("login once approved: %d %v", code, body)
			}
		})
	}
}
