package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/heraldfed/herald/domain"
)

func TestProfileCleaningAndLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, display, bio string
		wantDisplay        string
		wantBio            string
		wantErr            string
	}{
		{name: "trimmed", display: "  Vera  ", bio: "\n hello \n", wantDisplay: "Vera", wantBio: "hello"},
		{name: "name on one line", display: "a\nb\tc\x00d", wantDisplay: "a b c d"},
		{name: "bio newlines kept, other controls dropped", bio: "one\r\ntwo\rthree\x00\x07\tfour", wantBio: "one\ntwo\nthree\tfour"},
		{name: "invalid UTF-8 replaced", display: "a\xffb", bio: "c\xfed", wantDisplay: "a\uFFFDb", wantBio: "c\uFFFDd"},
		{name: "30 code points", display: strings.Repeat("ü", 30), wantDisplay: strings.Repeat("ü", 30)},
		{name: "31 code points", display: strings.Repeat("ü", 31), wantErr: "limit is 30"},
		{name: "500 code points", bio: strings.Repeat("語", 500), wantBio: strings.Repeat("語", 500)},
		{name: "501 code points", bio: strings.Repeat("語", 501), wantErr: "limit is 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, b := domain.CleanDisplayName(tc.display), domain.CleanBio(tc.bio)
			err := domain.CheckProfile(d, b)
			if tc.wantErr != "" {
				if !errors.Is(err, domain.ErrInvalidInput) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want ErrInvalidInput naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || d != tc.wantDisplay || b != tc.wantBio {
				t.Fatalf("got %q %q %v, want %q %q", d, b, err, tc.wantDisplay, tc.wantBio)
			}
		})
	}
}
