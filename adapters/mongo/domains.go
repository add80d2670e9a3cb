package mongo

import (
	"net"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/bson/primitive"
)

// coversFilter is domain.DomainCovers(d, host) as a filter on the string
// field host (d normalized: ports.CheckDomain). A server runs no Go, so
// the rule is spelled out in regular expressions on the host as stored,
// in the three forms ports.CheckDomain's comment names: a "[H]:P", an
// "H:P" (not tried when d has colons, an IPv6 address, which an "H:P"
// never ends in), and anything else (neither of those shapes, the $not
// filters) once its trailing dot and the brackets at either end are
// dropped, each covered when its H is d or ends in "." + d. d is quoted
// (regexp.QuoteMeta: its dots are dots), the letters compared without
// case (option i), \z is the very end (a $ would allow a newline before
// it), and no lookaround is used (FerretDB v1 runs Go's regexp, which
// has none). A d that names a port (not an IP address) covers that host
// alone, with or without the trailing dot. test/contract's
// OnDomainCoversWhatDomainCoversCovers and
// EndDomainJobsEndsExactlyWhatDomainCoversCovers hold the filter to
// DomainCovers' answers on hosts that walk every form.
func coversFilter(field, d string) bson.D {
	q := regexp.QuoteMeta(d)
	match := func(pattern string) bson.D {
		return bson.D{{Key: field, Value: primitive.Regex{Pattern: pattern, Options: "i"}}}
	}
	if strings.Contains(d, ":") && net.ParseIP(d) == nil {
		return match(`^` + q + `\.?\z`)
	}
	not := func(pattern string) bson.D {
		return bson.D{{Key: field, Value: bson.D{{Key: "$not", Value: primitive.Regex{Pattern: pattern}}}}}
	}
	forms := bson.A{match(`^\[(?:[^\[\]]*\.)?` + q + `\]:[^:\[\]]*\z`)}
	if !strings.Contains(d, ":") {
		forms = append(forms, match(`^(?:[^:\[\]]*\.)?`+q+`:[^:\[\]]*\z`))
	}
	forms = append(forms, bson.D{{Key: "$and", Value: bson.A{
		not(`^\[[^\[\]]*\]:[^:\[\]]*\z`),
		not(`^[^:\[\]]*:[^:\[\]]*\z`),
		match(`^[\[\]]*(?:[\s\S]*\.)?` + q + `[\[\]]*\.?\z`),
	}}})
	return bson.D{{Key: "$or", Value: forms}}
}
