package mongo

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/bson"

	"github.com/heraldfed/herald/domain"
	mongomigrations "github.com/heraldfed/herald/migrations/mongo"
)

// readCommands parses a migration file exactly as golang-migrate's mongodb
// driver does (canonical extended JSON, an array of commands).
func readCommands(t *testing.T, name string) []bson.D {
	t.Helper()
	b, err := fs.ReadFile(mongomigrations.FS, name)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []bson.D
	if err := bson.UnmarshalExtJSON(b, true, &cmds); err != nil {
		t.Fatalf("%s does not parse as golang-migrate reads it: %v", name, err)
	}
	if len(cmds) == 0 {
		t.Fatalf("%s has no commands", name)
	}
	return cmds
}

func TestEveryMigrationParsesAndHasADownStep(t *testing.T) {
	t.Parallel()
	entries, err := fs.ReadDir(mongomigrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	ups := 0
	for _, e := range entries {
		name := e.Name()
		readCommands(t, name)
		if base, ok := strings.CutSuffix(name, ".up.json"); ok {
			ups++
			if _, err := fs.Stat(mongomigrations.FS, base+".down.json"); err != nil {
				t.Errorf("%s has no down step", name)
			}
		}
	}
	// Numbers may leave gaps (a number handed to work that did not land),
	// never repeat one: no more up files than the latest number.
	latest, err := LatestMigration()
	if err != nil || ups > int(latest) || ups < 4 {
		t.Fatalf("%d up migrations, latest %d (%v)", ups, latest, err)
	}
}

// The indexes the migrations create must be exactly the ones EnsureIndexes
// keeps, or EnsureIndexes would refuse them at the next start.
func TestMigrationIndexesMatchEnsureIndexes(t *testing.T) {
	t.Parallel()
	specs := make(map[string]indexSpec)
	for _, s := range indexSpecs {
		specs[s.name] = s
	}
	seen := 0
	for _, file := range []string{"002_unique_indexes.up.json", "003_jobs_queue.up.json"} {
		for _, cmd := range readCommands(t, file) {
			m := cmd.Map()
			coll, ok := m["createIndexes"].(string)
			if !ok {
				t.Fatalf("%s: not a createIndexes command: %v", file, cmd)
			}
			for _, raw := range m["indexes"].(bson.A) {
				idx := raw.(bson.D).Map()
				name := idx["name"].(string)
				if name == idxDeliveriesState {
					continue // legacy, for 004 only
				}
				seen++
				s, ok := specs[name]
				if !ok {
					t.Fatalf("%s creates %s, which EnsureIndexes does not know", file, name)
				}
				keys, _ := bson.Marshal(idx["key"])
				unique, _ := idx["unique"].(bool)
				info := indexInfo{Name: name, Key: keys, Unique: unique}
				if s.coll != coll {
					t.Errorf("%s: %s on %s, EnsureIndexes has it on %s", file, name, coll, s.coll)
				}
				if d := info.differs(s); d != "" {
					t.Errorf("%s: %s differs from EnsureIndexes: %s", file, name, d)
				}
			}
		}
	}
	if seen != 11 {
		t.Fatalf("checked %d indexes, want the 11 unique ones", seen)
	}
}

// 001 copies the system names of SPEC §3 by hand; they must stay the valid
// names of domain.FixedReservedNames.
func TestMigration001SystemNamesAreTheFixedList(t *testing.T) {
	t.Parallel()
	var want []string
	for _, n := range domain.FixedReservedNames() {
		if _, err := domain.NormalizeName(n); err == nil {
			want = append(want, n)
		}
	}
	var got []string
	for _, cmd := range readCommands(t, "001_dedupe_and_reserve.up.json") {
		m := cmd.Map()
		if m["update"] != collReservedNames {
			continue
		}
		for _, u := range m["updates"].(bson.A) {
			q := u.(bson.D).Map()["q"].(bson.D).Map()
			got = append(got, q["_id"].(string))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("001 reserves %v, want %v", got, want)
	}
}

// keyHost compares hosts as SQLite's 011 and PostgreSQL's 020 do in SQL.
func TestKeyHost(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ uri, want string }{
		{"https://r.example/users/bob#main-key", "r.example"},
		{"https://R.Example:8443/users/bob", "r.example:8443"},
		{"https://someone@u.example/users/u#key", "u.example"},
		{"https://a@b@c.example/x", "c.example"},
		{"https://frag.example#main-key", "frag.example"},
		{"https://query.example?key=1", "query.example"},
		{"https://host.example", "host.example"},
		{"n.example/users/n#key", ""},
		{"", ""},
	} {
		if got := keyHost(tt.uri); got != tt.want {
			t.Errorf("keyHost(%q) = %q, want %q", tt.uri, got, tt.want)
		}
	}
}
