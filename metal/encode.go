// Package metal is mltop's Metal backend for Apple Silicon: a small typed
// binding over purego/objc (darwin only) and the profiler.Backend on top of
// it. Everything that does not need a Mac — timestamp validation and
// conversion, the occupancy table, macro and scalar encoding, struct layouts,
// source assembly — lives in files without a build tag and is tested on
// Linux; the objc calls live in *_darwin.go files.
package metal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mltop/mltop/metal/mtl"
	"github.com/mltop/mltop/profiler"
)

// MTLSize is Metal's MTLSize (metal/mtl.Size: three NSUIntegers, 24
// bytes, passed by value as AAPCS64 rule B.4 says).
type MTLSize = mtl.Size

// NSRange is Foundation's NSRange (metal/mtl.Range: 16 bytes, two integer
// registers on arm64).
type NSRange = mtl.Range

// Constants from the Metal headers that mltop passes as integers.
const (
	// MTLResourceStorageModeShared is MTLStorageModeShared (0) shifted by
	// MTLResourceStorageModeShift (4): CPU and GPU share the memory.
	MTLResourceStorageModeShared uint64 = 0 << 4
	// MTLStorageModeShared for descriptors that take an MTLStorageMode.
	MTLStorageModeShared uint64 = 0

	// MTLCounterSamplingPointAtStageBoundary: Apple GPUs sample counters
	// only at the start and end of a pass, not per dispatch.
	MTLCounterSamplingPointAtStageBoundary    uint64 = 0
	MTLCounterSamplingPointAtDispatchBoundary uint64 = 2

	// MTLCounterErrorValue is what a sample that could not be taken holds.
	MTLCounterErrorValue uint64 = ^uint64(0)
	// MTLCounterDontSample leaves a sample-buffer attachment index unused.
	MTLCounterDontSample uint64 = ^uint64(0)

	// MTLMathMode (macOS 15+): Relaxed allows unsafe reassociation but
	// honours Inf and NaN, which the attention kernel's -inf masks need.
	MTLMathModeSafe    uint64 = 0
	MTLMathModeRelaxed uint64 = 1
	MTLMathModeFast    uint64 = 2

	// MTLCommandBufferStatus values.
	MTLCommandBufferStatusCompleted uint64 = 4
	MTLCommandBufferStatusError     uint64 = 5
)

// LanguageVersion encodes an MTLLanguageVersion: (major << 16) | minor.
// 3.1 is the first with a native bfloat type.
func LanguageVersion(major, minor int) uint64 { return uint64(major)<<16 | uint64(minor) }

// MacroPairs turns a Program's macros into the key/value strings of the
// NSDictionary handed to MTLCompileOptions.preprocessorMacros. Keys must be
// C identifiers and appear once; values are passed as NSStrings (an empty
// value defines the macro as empty, like -DNAME=).
func MacroPairs(ms []profiler.Macro) ([][2]string, error) {
	seen := map[string]bool{}
	out := make([][2]string, 0, len(ms))
	for _, m := range ms {
		if !isIdent(m.Name) {
			return nil, fmt.Errorf("macro name %q is not a C identifier: use letters, digits and _ only, not starting with a digit", m.Name)
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("macro %s is defined twice: each knob must be baked once", m.Name)
		}
		seen[m.Name] = true
		out = append(out, [2]string{m.Name, m.Value})
	}
	return out, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// PackScalars packs a dispatch's scalars, in order, as the C struct of
// little-endian fields that the kernels read at buffer(n): each field at
// its natural alignment (a multiple of its size), the whole padded to the
// largest. The built-in kernels' i32 and f32 fields have no padding (the
// size is 4·len); a user's struct of int32_t, uint64_t and float fields
// (ggml's kernel args) gets the padding its compiler puts in.
func PackScalars(ss []profiler.Scalar) ([]byte, error) {
	var out []byte
	maxAlign := 1
	for _, s := range ss {
		if s.Kind == profiler.ScalarF64 {
			return nil, fmt.Errorf("scalar %s has kind %q: Metal has no double; take it as float", s.Name, s.Kind)
		}
		if s.Kind == profiler.ScalarI32 && (s.I < math.MinInt32 || s.I > math.MaxInt32) {
			return nil, fmt.Errorf("scalar %s = %d does not fit in i32: shrink the dimension", s.Name, s.I)
		}
		size := s.Size()
		if size == 0 {
			return nil, fmt.Errorf("scalar %s has kind %q, which Metal cannot take", s.Name, s.Kind)
		}
		for len(out)%size != 0 { // C's natural alignment: a field at a multiple of its size
			out = append(out, 0)
		}
		maxAlign = max(maxAlign, size)
		out = append(out, s.Bytes()...)
	}
	for len(out)%maxAlign != 0 { // the struct's size is a multiple of its alignment
		out = append(out, 0)
	}
	return out, nil
}

// CompileOptions are the MTLCompileOptions mltop sets.
type CompileOptions struct {
	Macros          [][2]string
	MathMode        uint64 // MTLMathMode*; applied with setMathMode: where it exists, else setFastMathEnabled:(mode == Fast)
	LanguageVersion uint64 // 0: the OS default (the newest it supports)
	// Constants specialise the entry (newFunctionWithName:constantValues:error:);
	// none: newFunctionWithName:.
	Constants []ConstantValue
}

// DefaultMathMode keeps Inf/NaN semantics (masks use -inf) while letting the
// compiler reassociate, which is also Apple's default on Apple silicon.
const DefaultMathMode = MTLMathModeRelaxed

// CommonHeader is the header every Metal kernel source includes.
const CommonHeader = "mltop_common.h"

// AssembleSource prepends the common header to a kernel source, because
// newLibraryWithSource: has no include path. The kernel's own
// `#include "mltop_common.h"` line is replaced by a comment so the header is
// not pasted twice; its #pragma once would also hold, but a missing file
// would be a compile error.
func AssembleSource(header, kernel string) string {
	const inc = `#include "` + CommonHeader + `"`
	out := "// ---- " + CommonHeader + " (prepended by mltop) ----\n"
	for _, l := range strings.Split(strings.TrimSuffix(header, "\n"), "\n") {
		// In the pasted main file #pragma once would only draw a warning.
		if strings.TrimSpace(l) == "#pragma once" {
			l = "// " + l
		}
		out += l + "\n"
	}
	out += "// ---- kernel ----\n"
	for _, l := range strings.Split(strings.TrimSuffix(kernel, "\n"), "\n") {
		if strings.TrimSpace(l) == inc {
			out += "// " + l + " (prepended above)\n"
			continue
		}
		out += l + "\n"
	}
	return out
}

// CacheKey identifies a compiled pipeline: the assembled source, the entry
// point, the compile options and the function-constant values (macros and
// constants sorted, so their order does not split the cache).
func CacheKey(source, entry string, opt CompileOptions) string {
	h := sha256.New()
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write([]byte(entry))
	ms := append([][2]string(nil), opt.Macros...)
	sort.Slice(ms, func(i, j int) bool { return ms[i][0] < ms[j][0] })
	for _, m := range ms {
		fmt.Fprintf(h, "\x00%s=%s", m[0], m[1])
	}
	fmt.Fprintf(h, "\x00math=%d\x00lang=%d", opt.MathMode, opt.LanguageVersion)
	cs := append([]ConstantValue(nil), opt.Constants...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Index < cs[j].Index })
	for _, c := range cs {
		fmt.Fprintf(h, "\x00fc%d:%d=%x", c.Index, c.DataType, c.Bytes)
	}
	return hex.EncodeToString(h.Sum(nil))
}
