package profiler

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
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
