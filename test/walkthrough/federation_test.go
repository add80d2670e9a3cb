package walkthrough_test

import "testing"

// docs/federation.md's demo: two servers started by go run as written,
// then every command of the third terminal.
func TestFederationWalkthrough(t *testing.T) {
	tools(t, "bash", "curl", "jq", "go")
	exclusive(t, "127.0.0.1:8081", "127.0.0.1:8082")
	bs := blocks(t, "docs/federation.md", "Demo: two instances on loopback")
	if len(bs) < 3 || !bs[0].server || !bs[1].server {
		t.Fatalf("want two server blocks, then the commands: %+v", bs)
	}
	warm(t)
	env := environ()
	server(t, bs[0], "127.0.0.1:8081", env)
	server(t, bs[1], "127.0.0.1:8082", env)
	newSession(t, env).walk(bs[2:]...)
}
