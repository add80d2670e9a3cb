package walkthrough_test

import "testing"

// docs/operations.md's operator API, tried on the demo.
func TestOperationsAPIWalkthrough(t *testing.T) {
	tools(t, "bash", "curl", "jq", "go")
	exclusive(t, "127.0.0.1:8080")
	bs := blocks(t, "docs/operations.md", "Try it")
	if len(bs) != 2 || !bs[0].server || bs[1].server {
		t.Fatalf("want the demo's server block, then the commands: %+v", bs)
	}
	warm(t)
	env := environ()
	server(t, bs[0], "127.0.0.1:8080", env)
	newSession(t, env).walk(bs[1])
}
