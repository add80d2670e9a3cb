package sqlite

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	msqlite "modernc.org/sqlite"

	"github.com/heraldfed/herald/domain"
)

// registerFunctions makes Herald's SQL functions, Go code that SQLite
// calls, for every connection opened after it:
//
//   - herald_sha256_hex(blob), domain.BodyOf in SQL, for migration 007,
//     which moves each job's payload into bodies under its content
//     address;
//   - herald_domain_covers(d, host), domain.DomainCovers in SQL, for
//     ForeignActorStore.OnDomain and JobAdmin.EndDomainJobs: the same
//     function the memory store calls, so a host is covered here exactly
//     when the policy says so, without a second spelling of the rule.
//
// The driver's function registry is process-wide and a name can be
// registered only once, so this is the one piece of package-level state
// here: a sync.Once around that registration.
var registerFunctions = sync.OnceValue(func() error {
	return errors.Join(
		msqlite.RegisterDeterministicScalarFunction("herald_sha256_hex", 1,
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
			}),
		msqlite.RegisterDeterministicScalarFunction("herald_domain_covers", 2,
			func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
				d, dok := args[0].(string)
				host, hok := args[1].(string)
				if !dok || !hok {
					return nil, fmt.Errorf("herald_domain_covers: %T and %T are not text", args[0], args[1])
				}
				if domain.DomainCovers(d, host) {
					return int64(1), nil
				}
				return int64(0), nil
			}),
	)
})
