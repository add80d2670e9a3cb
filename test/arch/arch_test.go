// Package arch_test checks the layering of docs/architecture.md on the
// real import graph, so a wrong import fails `make test`, not a review.
package arch_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/heraldfed/herald"

type pkg struct {
	ImportPath string
	Imports    []string
}

func packages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var ps []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// layer names the layer of a package of this module.
func layer(path string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	first, rest, _ := strings.Cut(rel, "/")
	if first == "adapters" {
		tech, _, _ := strings.Cut(rest, "/")
		return "adapters/" + tech
	}
	if first == "application" && (rest == "engine" || strings.HasPrefix(rest, "engine/")) {
		return "application/engine"
	}
	return first
}

// allowed lists, for each layer, the layers of this module it may import
// (production code only; tests are free to import fixtures).
var allowed = map[string][]string{
	"domain":      {},
	"ports":       {"domain"},
	"application": {"domain", "ports"},
	// The delivery engine is a layer of the core of its own: it knows the
	// domain and the ports, never the use cases (they reach it through
	// their own small interfaces, Waker and KeyRotations) nor an adapter.
	"application/engine": {"domain", "ports"},
	"migrations":         {},
	"bootstrap":          {"*"},
	"cmd":                {"bootstrap"},
	"test":               {"*"}, // shared fixtures and suites
}

func TestLayering(t *testing.T) {
	for _, p := range packages(t) {
		from := layer(p.ImportPath)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			to := layer(imp)
			if to == from {
				continue
			}
			if strings.HasPrefix(from, "adapters/") {
				// An adapter implements ports for the core: it may use
				// domain, ports, application (inbound adapters call use
				// cases) and migrations, never another adapter.
				if strings.HasPrefix(to, "adapters/") || to == "bootstrap" || to == "cmd" {
					t.Errorf("%s imports %s: adapters must not import other adapters or the composition root", p.ImportPath, imp)
				}
				// The checks in front of the stores are put there by the
				// composition root, once: a store that wrapped itself would
				// check twice, and one that did not would not know it.
				if imp == module+"/ports/checked" {
					t.Errorf("%s imports %s: only bootstrap puts the checks in front of a store", p.ImportPath, imp)
				}
				continue
			}
			rules, ok := allowed[from]
			if !ok {
				t.Errorf("%s: no layering rule for %q; add one to docs/architecture.md and this test", p.ImportPath, from)
				continue
			}
			ok = false
			for _, r := range rules {
				if r == "*" || r == to {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s (%s) imports %s (%s): not allowed", p.ImportPath, from, imp, to)
			}
		}
	}
}

func TestDomainImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+"/domain").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != module+"/domain" {
			t.Errorf("domain depends on %s", dep)
		}
	}
}
