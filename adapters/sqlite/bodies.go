package sqlite

import (
	"database/sql/driver"
	"fmt"
	"sync"

	msqlite "modernc.org/sqlite"

	"github.com/heraldfed/herald/domain"
)

// registerSHA256 makes herald_sha256_hex(blob), domain.BodyOf in SQL, for
// migration 007, which moves each job's payload into bodies under its
// content address. The driver's function registry is process-wide and a
// name can be registered only once, so this is the one piece of
// package-level state here: a sync.Once around that registration.
var registerSHA256 = sync.OnceValue(func() error {
	return msqlite.RegisterDeterministicScalarFunction("herald_sha256_hex", 1,
		func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case []byte:
				return domain.BodyOf(v), nil
			case string:
				return domain.BodyOf([]byte(v)), nil
			case nil:
				return "", nil
			default:
				return nil, fmt.Errorf("herald_sha256_hex: %T is not a blob", v)
			}
		})
})
