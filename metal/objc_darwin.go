//go:build darwin

package metal

// The Objective-C layer: framework loading, selectors, NSString, NSError,
// NSDictionary, NSArray, NSData, autorelease pools and reference counting.
//
// Calling pattern (purego/objc): a message is objc.ID.Send(sel, args...)
// for id/void/integer-sized results, and objc.Send[T](obj, sel, args...) for
// typed results (bool, float64, uint64, MTLSize, string). Arguments are Go
// values: uint64/int for NSUInteger/NSInteger, bool for BOOL, objc.ID for
// objects, unsafe.Pointer for out-parameters (NSError **, MTLTimestamp *),
// []byte for const void *, and Go structs for C structs by value (see
// MTLSize in encode.go for the arm64 rule purego applies).
//
// Ownership follows Cocoa's rules: methods named alloc/new/copy/mutableCopy
// return +1 objects the caller releases; everything else is autoreleased
// and lives until the enclosing NSAutoreleasePool drains. Every operation
// on the Metal thread runs inside its own pool (worker.do).

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

const (
	metalPath      = "/System/Library/Frameworks/Metal.framework/Metal"
	foundationPath = "/System/Library/Frameworks/Foundation.framework/Foundation"
)

// rt holds the loaded frameworks and the selector cache. It is used only
// from the Metal thread, so the map needs no lock.
type rt struct {
	metal, foundation uintptr
	createDevice      uintptr // MTLCreateSystemDefaultDevice
	sels              map[string]objc.SEL
	classes           map[string]objc.Class
}

// loadRuntime dlopens Metal and Foundation; classes are looked up only after
// both are loaded, because objc_getClass finds only classes of loaded images.
func loadRuntime() (*rt, error) {
	if runtime.GOARCH != "arm64" {
		return nil, errors.New("Metal needs macOS on Apple Silicon: this Mac is " + runtime.GOARCH)
	}
	r := &rt{sels: map[string]objc.SEL{}, classes: map[string]objc.Class{}}
	var err error
	if r.foundation, err = purego.Dlopen(foundationPath, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		return nil, fmt.Errorf("loading Foundation (%s): %w", foundationPath, err)
	}
	if r.metal, err = purego.Dlopen(metalPath, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		return nil, fmt.Errorf("loading Metal (%s): %w", metalPath, err)
	}
	if r.createDevice, err = purego.Dlsym(r.metal, "MTLCreateSystemDefaultDevice"); err != nil {
		return nil, fmt.Errorf("Metal has no MTLCreateSystemDefaultDevice: %w", err)
	}
	for _, c := range []string{"NSAutoreleasePool", "NSString", "NSMutableDictionary", "MTLCompileOptions",
		"MTLComputePassDescriptor", "MTLBlitPassDescriptor", "MTLCounterSampleBufferDescriptor"} {
		cls := objc.GetClass(c)
		if cls == 0 {
			return nil, fmt.Errorf("Objective-C class %s not found: this macOS is too old for mltop (needs macOS 11 or later)", c)
		}
		r.classes[c] = cls
	}
	return r, nil
}

func (r *rt) sel(name string) objc.SEL {
	s, ok := r.sels[name]
	if !ok {
		s = objc.RegisterName(name)
		r.sels[name] = s
	}
	return s
}

func (r *rt) class(name string) objc.ID { return objc.ID(r.classes[name]) }

// send is a message with an id (or no) result.
func (r *rt) send(obj objc.ID, sel string, args ...any) objc.ID {
	return obj.Send(r.sel(sel), args...)
}

func (r *rt) responds(obj objc.ID, sel string) bool {
	return objc.Send[bool](obj, r.sel("respondsToSelector:"), r.sel(sel))
}

func (r *rt) uint(obj objc.ID, sel string, args ...any) uint64 {
	return objc.Send[uint64](obj, r.sel(sel), args...)
}

func (r *rt) float(obj objc.ID, sel string) float64 {
	return objc.Send[float64](obj, r.sel(sel))
}

func (r *rt) boolean(obj objc.ID, sel string, args ...any) bool {
	return objc.Send[bool](obj, r.sel(sel), args...)
}

func (r *rt) release(obj objc.ID) {
	if obj != 0 {
		r.send(obj, "release")
	}
}

func (r *rt) retain(obj objc.ID) objc.ID {
	if obj != 0 {
		r.send(obj, "retain")
	}
	return obj
}

// pushPool creates an NSAutoreleasePool; pop drains it.
func (r *rt) pushPool() objc.ID { return r.send(r.class("NSAutoreleasePool"), "new") }
func (r *rt) popPool(p objc.ID) { r.send(p, "drain") }

// nsString makes an autoreleased NSString (copied, so the Go bytes may go).
func (r *rt) nsString(s string) objc.ID {
	b := append([]byte(s), 0)
	return r.send(r.class("NSString"), "stringWithUTF8String:", &b[0])
}

// goString reads an NSString; "" for nil.
func (r *rt) goString(s objc.ID) string {
	if s == 0 {
		return ""
	}
	p := objc.Send[*byte](s, r.sel("UTF8String"))
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// nsError converts an NSError to a Go error with its localizedDescription
// (for the Metal compiler, the full log) and, when present, the failure
// reason.
func (r *rt) nsError(e objc.ID, what string) error {
	if e == 0 {
		return fmt.Errorf("%s failed without an NSError", what)
	}
	msg := r.goString(r.send(e, "localizedDescription"))
	if reason := r.goString(r.send(e, "localizedFailureReason")); reason != "" && !strings.Contains(msg, reason) {
		msg += ": " + reason
	}
	code := int64(r.uint(e, "code"))
	return fmt.Errorf("%s: %s (NSError code %d)", what, strings.TrimSpace(msg), code)
}

// dictionary makes an autoreleased NSMutableDictionary of NSString pairs.
func (r *rt) dictionary(pairs [][2]string) objc.ID {
	d := r.send(r.class("NSMutableDictionary"), "dictionary")
	for _, kv := range pairs {
		r.send(d, "setObject:forKey:", r.nsString(kv[1]), r.nsString(kv[0]))
	}
	return d
}

// arrayItems lists an NSArray's objects.
func (r *rt) arrayItems(a objc.ID) []objc.ID {
	if a == 0 {
		return nil
	}
	n := r.uint(a, "count")
	out := make([]objc.ID, n)
	for i := range out {
		out[i] = r.send(a, "objectAtIndex:", uint64(i))
	}
	return out
}

// dataBytes copies an NSData's bytes.
func (r *rt) dataBytes(d objc.ID) []byte {
	if d == 0 {
		return nil
	}
	n := r.uint(d, "length")
	if n == 0 {
		return nil
	}
	p := objc.Send[unsafe.Pointer](d, r.sel("bytes"))
	if p == nil {
		return nil
	}
	return append([]byte(nil), unsafe.Slice((*byte)(p), n)...)
}
