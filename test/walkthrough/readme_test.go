package walkthrough_test

import (
	"os"
	"testing"
)

// README's "Try it": make run, then the commands of the second terminal.
// The data directory is a fresh one (HERALD_DATA_DIR), as in a new clone,
// so that alice's name is free and the checkout's herald-data untouched.
func TestReadmeTryIt(t *testing.T) {
	tools(t, "bash", "curl", "make", "go")
	exclusive(t, "127.0.0.1:8080")
	bs := blocks(t, "README.md", "Try it")
	if len(bs) < 2 || !bs[0].server || bs[1].server {
		t.Fatalf("want the make run block, then the commands: %+v", bs)
	}
	warm(t)
	env := environ("HERALD_DATA_DIR=" + t.TempDir())
	log := server(t, bs[0], "127.0.0.1:8080", env)
	newSession(t, env).walk(bs[1])
	// make run says that it builds before it starts (a cold build takes
	// minutes, and a silent terminal looks stuck).
	if !matches(log.String(), "make run: building Herald first…") {
		t.Errorf("make run did not say it builds first:\n%s", log.String())
	}
	if _, err := os.Stat(env[len(env)-1][len("HERALD_DATA_DIR="):] + "/herald.db"); err != nil {
		t.Errorf("make run did not keep its data in HERALD_DATA_DIR: %v", err)
	}
}

// README's operator page demo: herald demo with an admin token, then the
// operator API and the metrics it shows.
func TestReadmeOperatorDemo(t *testing.T) {
	tools(t, "bash", "curl", "grep", "go")
	exclusive(t, "127.0.0.1:8080")
	bs := blocks(t, "README.md", "The operator page")
	var srv, cmds []block
	for _, b := range bs {
		if b.server {
			srv = append(srv, b)
		} else {
			cmds = append(cmds, b)
		}
	}
	if len(srv) != 1 || len(cmds) == 0 {
		t.Fatalf("want one server block and the commands: %+v", bs)
	}
	warm(t)
	env := environ()
	server(t, srv[0], "127.0.0.1:8080", env)
	newSession(t, env).walk(cmds...)
}
