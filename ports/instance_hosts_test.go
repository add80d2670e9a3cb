package ports_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

func TestInstanceHosts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		hosts []string
		want  string
		err   error
	}{
		{"none", nil, "[]", nil},
		{"lower case, distinct, sorted", []string{"B.example", "a.example:8443", "b.EXAMPLE", "a.example:8443"}, "[a.example:8443 b.example]", nil},
		{"one empty refuses all", []string{"a.example", ""}, "", domain.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ports.InstanceHosts(tt.hosts)
			if !errors.Is(err, tt.err) || err == nil && fmt.Sprint(got) != tt.want {
				t.Fatalf("InstanceHosts(%q) = %v, %v; want %s, %v", tt.hosts, got, err, tt.want, tt.err)
			}
		})
	}
}
