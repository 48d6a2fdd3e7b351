package profiler

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ErrCannotRun marks a program that a backend cannot execute at all (the
// CPU backend and a user kernel's own source): the spec is invalid on that
// backend, not a compile error.
var ErrCannotRun = errors.New("this backend cannot run the program")

// userSources are the languages user kernel name has sources in
// (sorted) and its manifest's folder; nil and "DIR" when name is no user
// kernel mltop knows.
func userSources(name string) (langs []string, dir string) {
	dir = "DIR"
	if f, err := Lookup(name); err == nil {
		if s, ok := f.(interface {
			Languages() []string
			Path() string
		}); ok {
			langs, dir = s.Languages(), filepath.Dir(s.Path())
		}
	}
	return langs, dir
}

// UserBackendFlag is the --backend that runs user kernel name's own
// sources, for every message that says a backend cannot: "--backend cuda"
// for a kernel with only a CUDA source, "--backend metal" for only a
// Metal one, else (both, or a kernel mltop does not know) "--backend cuda
// or metal".
func UserBackendFlag(name string) string {
	langs, _ := userSources(name)
	if len(langs) == 1 && (langs[0] == "cuda" || langs[0] == "metal") {
		return "--backend " + langs[0]
	}
	return "--backend cuda or metal"
}

// CPUCannotRunUser is the CPU backend's refusal of user kernel name, with
// exactly what can run it: the backend of each language its manifest has a
// source in (UserBackendFlag), and, on a machine without the GPU,
// `mltop check --run`: on the MSL emulation for a Metal source, on the
// CUDA emulation for a CUDA-only one.
func CPUCannotRunUser(name string) string {
	msg := "the CPU backend cannot run user kernel " + name + ": it runs only built-in families' Go code"
	langs, dir := userSources(name)
	emulated := fmt.Sprintf("`mltop check --run %s --set …` (a small shape) runs it on the MSL emulation", dir)
	switch {
	case slices.Equal(langs, []string{"metal"}):
		return msg + fmt.Sprintf("; its only source is Metal: %s runs it on a Mac; without one, %s; CUDA cannot run it", UserBackendFlag(name), emulated)
	case slices.Equal(langs, []string{"cuda"}):
		return msg + "; its only source is CUDA: " + UserBackendFlag(name) + " runs it on an NVIDIA GPU; without one, " + strings.Replace(emulated, "MSL", "CUDA", 1)
	case slices.Contains(langs, "metal"):
		return msg + fmt.Sprintf("; use --backend cuda (an NVIDIA GPU) or metal (a Mac); without either, %s", strings.Replace(emulated, "runs it", "runs its Metal source", 1))
	}
	return msg + "; use " + UserBackendFlag(name)
}

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
