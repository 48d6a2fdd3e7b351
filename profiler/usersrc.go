package profiler

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// ErrCannotRun marks a program that a backend cannot execute at all (the
// CPU backend and a user kernel's own source): the spec is invalid on that
// backend, not a compile error.
var ErrCannotRun = errors.New("this backend cannot run the program")

// SourceKey identifies a program's own source text and includes, so
// that an edited user kernel is compiled again under the same name.
func (p Program) SourceKey() string {
	h := sha256.New()
	h.Write([]byte(p.File))
	h.Write([]byte{0})
	h.Write([]byte(p.Code))
	for _, n := range slices.Sorted(maps.Keys(p.Includes)) {
		h.Write([]byte{0})
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write([]byte(p.Includes[n]))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// compilingPrefix is the runner's "compiling NAME (ENTRY): " in front of
// a compile step's error.
var compilingPrefix = regexp.MustCompile(`^compiling [^ ]+ \([^)]*\): `)

// CannotRun says the spec is invalid because the backend cannot execute
// its program at all (ErrCannotRun, e.g. a user kernel on the CPU): no
// compile log, and nothing a save or a retry on this backend can change.
func (r Result) CannotRun() bool {
	return r.Status == StatusInvalid && strings.HasSuffix(r.Error, ": "+ErrCannotRun.Error())
}

// Reason is what a result's error says to a person: for an invalid spec,
// without the runner's "compiling NAME (ENTRY): " prefix and
// ErrCannotRun's text after the backend's own words (both are for
// errors.Is and the status, and only push the reason out of a line).
// Other statuses keep their error whole: a compile log starts there. The
// CSV's error column keeps Error as it is.
func (r Result) Reason() string {
	msg := r.Error
	if r.Status != StatusInvalid {
		return msg
	}
	msg = compilingPrefix.ReplaceAllString(msg, "")
	msg, _ = strings.CutSuffix(msg, ": "+ErrCannotRun.Error())
	return msg
}
