package postgres

import (
	"net"
	"strings"
)

// coversSQL is domain.DomainCovers(d, host) as an SQL condition on the
// column host, with its two text parameters p1 and p2 and the values to
// bind to them (d normalized: ports.CheckDomain). Go cannot run inside
// PostgreSQL, so the rule is spelled out on the lower-cased host in the
// three forms ports.CheckDomain's comment names, with string functions
// only (no LIKE and no regular expression, so nothing of d is a pattern):
// a "[H]:P", an "H:P", anything else with one trailing dot and the
// brackets at either end dropped, each covered when its H is d or ends in
// "." + d (p2). strpos first: a host that does not contain d is passed
// over at the cost of one call. A d that names a port (not an IP address:
// an IPv6 one has colons of its own) covers that host alone, or with the
// trailing dot DomainCovers drops (p2), as DomainCovers has it.
// test/contract's OnDomainCoversWhatDomainCoversCovers and
// EndDomainJobsEndsExactlyWhatDomainCoversCovers hold the two to the same
// answers on hosts that walk every form.
func coversSQL(d, host, p1, p2 string) (cond, v1, v2 string) {
	h := "lower(" + host + ")"
	if strings.Contains(d, ":") && net.ParseIP(d) == nil {
		return "(" + h + " = " + p1 + " OR " + h + " = " + p2 + ")", d, d + "."
	}
	ends := func(x string) string {
		return "(" + x + " = " + p1 + " OR right(" + x + ", length(" + p2 + ")) = " + p2 + ")"
	}
	return strings.NewReplacer("{h}", h).Replace(`(strpos({h}, ` + p1 + `) > 0 AND CASE
	WHEN left({h}, 1) = '[' AND strpos({h}, ']:') > 0 AND strpos({h}, ']:') = strpos({h}, ']')
		AND strpos(substr({h}, 2), '[') = 0
		AND strpos(substr({h}, strpos({h}, ']') + 1), ']') = 0
		AND strpos(substr({h}, strpos({h}, ']') + 2), ':') = 0
	THEN ` + ends("substr({h}, 2, strpos({h}, ']') - 2)") + `
	WHEN strpos({h}, '[') = 0 AND strpos({h}, ']') = 0 AND strpos({h}, ':') > 0
		AND strpos(substr({h}, strpos({h}, ':') + 1), ':') = 0
	THEN ` + ends("left({h}, strpos({h}, ':') - 1)") + `
	ELSE ` + ends("btrim(CASE WHEN right({h}, 1) = '.' THEN left({h}, -1) ELSE {h} END, '[]')") + `
END)`), d, "." + d
}
