package contract

import (
	"encoding/hex"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// JobID is the job id the suites use for the readable name ("j1",
// "a2"): a job id must be a UUID (domain.JobIDBytes), and this one spells
// the name's bytes, padded with zeros to 16. So ids sort as their names
// do, and JobName reads the name back for a failure message. A name that
// is a job id already (one a store handed back) is returned as it is; a
// name longer than 16 bytes is cut (no suite uses one).
func JobID(name string) string {
	if domain.ValidJobID(name) {
		return name
	}
	var b [16]byte
	copy(b[:], name)
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// JobName is the name JobID spelt in id, or id itself when it spells none
// (a job id made otherwise).
func JobName(id string) string {
	b, err := domain.JobIDBytes(id)
	if err != nil {
		return id
	}
	name := strings.TrimRight(string(b[:]), "\x00")
	for _, c := range []byte(name) {
		if c < 0x21 || c > 0x7e {
			return id
		}
	}
	if name == "" {
		return id
	}
	return name
}
