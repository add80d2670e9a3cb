package admin_test

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// The operator deletes anyone's persona: 202, its avatar retired and its
// name marked deleted (the servers' deletions' pass does the rest); 404
// for no persona (the instance actor is none), 410 once deleted.
func TestDeletePersonaByOperator(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	ctx := context.Background()
	for _, a := range []domain.Avatar{
		{ID: "a1", RootUserID: "u1", Name: "dora", Keys: contract.Keys, CreatedAt: t0},
		{ID: "inst", Name: "instance", Keys: contract.Keys, CreatedAt: t0},
	} {
		if err := b.accounts.CreateAvatar(ctx, a); err != nil {
			t.Fatal(err)
		}
		kind := domain.NameKindPersona
		if a.RootUserID == "" {
			kind = domain.NameKindInstance
		}
		rn, _ := domain.NewReservedName(a.Name, kind, a.ID, t0)
		if err := b.names.Reserve(ctx, rn); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		path string
		want int
	}{
		{"/admin/api/personas/nobody", 404},
		{"/admin/api/personas/instance", 404},
		{"/admin/api/personas/not%20valid", 404},
	} {
		if code, body, _ := b.call(t, "DELETE", tt.path, "Bearer "+token, ""); code != tt.want {
			t.Fatalf("%s: %d %v, want %d", tt.path, code, body, tt.want)
		}
	}
	code, body, _ := b.call(t, "DELETE", "/admin/api/personas/Dora", "Bearer "+token, "")
	if code != 202 || body["name"] != "dora" || body["uri"] != "https://local.example/users/dora" || body["status"] != "deleting" {
		t.Fatalf("delete: %d %v", code, body)
	}
	if _, err := b.accounts.AvatarByName(ctx, "dora"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("dora after the operator deleted her: %v", err)
	}
	if a, err := b.accounts.AvatarByID(ctx, "a1"); err != nil || a.DeletedAt.IsZero() {
		t.Fatalf("dora retired with her key kept: %+v %v", a, err)
	}
	if rn, err := b.names.Get(ctx, "dora"); err != nil || !rn.Deleted() {
		t.Fatalf("dora's name %+v %v", rn, err)
	}
	if code, _, _ := b.call(t, "DELETE", "/admin/api/personas/dora", "Bearer "+token, ""); code != 410 {
		t.Fatalf("delete again: %d, want 410", code)
	}
	// Neither the operator's release of a system name nor anything else
	// frees it.
	if code, _, _ := b.call(t, "DELETE", "/admin/api/names/dora", "Bearer "+token, ""); code < 400 {
		t.Fatalf("the operator released a deleted persona's name: %d", code)
	}
	if code, _, _ := b.call(t, "POST", "/admin/api/names", "Bearer "+token, `{"name":"dora"}`); code != 409 {
		t.Fatalf("reserve a deleted persona's name as a system name: %d, want 409", code)
	}
}
