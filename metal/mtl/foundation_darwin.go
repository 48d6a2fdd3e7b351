//go:build darwin

package mtl

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego/objc"
)

// Object is any Objective-C object: the methods every wrapper shares.
type Object struct{ id objc.ID }

// ID is the raw object pointer (for passing to another wrapper).
func (o Object) ID() objc.ID { return o.id }

// Nil says whether the object is nil.
func (o Object) Nil() bool { return o.id == 0 }

// Release drops a +1 reference; releasing nil does nothing.
func (o Object) Release() {
	if o.id != 0 {
		send(o.id, msgRelease)
	}
}

// Retain takes a reference.
func (o Object) Retain() {
	if o.id != 0 {
		send(o.id, msgRetain)
	}
}

// alloc+init of a class: a +1 object.
func newObject(c class) objc.ID {
	return send(sendClass(c, msgAlloc), msgInit)
}

// AutoreleasePool is an NSAutoreleasePool.
type AutoreleasePool struct{ Object }

// NewAutoreleasePool pushes a pool; Drain pops it.
func NewAutoreleasePool() AutoreleasePool {
	return AutoreleasePool{Object{newObject(clsAutoreleasePool)}}
}

// Drain releases the pool and everything autoreleased into it.
func (p AutoreleasePool) Drain() {
	if p.id != 0 {
		send(p.id, msgDrain)
	}
}

// nsUTF8StringEncoding is NSUTF8StringEncoding.
const nsUTF8StringEncoding uint64 = 4

// String makes an autoreleased NSString (copied, so the Go bytes may go).
func String(s string) objc.ID {
	b := append([]byte(s), 0)
	return sendClass(clsString, msgStringWithCString, &b[0], nsUTF8StringEncoding)
}

// GoString reads an NSString; "" for nil.
func GoString(s objc.ID) string {
	if s == 0 {
		return ""
	}
	p := sendT[*byte](s, msgUTF8String)
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// ErrorFrom converts an NSError to a Go error with its
// localizedDescription (for the Metal compiler, the full log), the failure
// reason when it adds something, and the code.
func ErrorFrom(e objc.ID, what string) error {
	if e == 0 {
		return fmt.Errorf("%s failed without an NSError", what)
	}
	msg := GoString(send(e, msgLocalizedDescription))
	if reason := GoString(send(e, msgLocalizedFailureReason)); reason != "" && !strings.Contains(msg, reason) {
		msg += ": " + reason
	}
	code := sendT[int64](e, msgErrorCode)
	return fmt.Errorf("%s: %s (NSError code %d)", what, strings.TrimSpace(msg), code)
}

// StringDictionary makes an autoreleased NSDictionary of NSString pairs
// (key, value).
func StringDictionary(pairs [][2]string) objc.ID {
	if len(pairs) == 0 {
		return sendClass(clsDictionary, msgDictionaryWithObjects, unsafe.Pointer(nil), unsafe.Pointer(nil), uint64(0))
	}
	keys := make([]objc.ID, len(pairs))
	vals := make([]objc.ID, len(pairs))
	for i, kv := range pairs {
		keys[i], vals[i] = String(kv[0]), String(kv[1])
	}
	return sendClass(clsDictionary, msgDictionaryWithObjects, unsafe.Pointer(&vals[0]), unsafe.Pointer(&keys[0]), uint64(len(pairs)))
}

// arrayItems lists an NSArray's objects.
func arrayItems(a objc.ID) []objc.ID {
	if a == 0 {
		return nil
	}
	n := sendT[uint64](a, msgArrayCount)
	out := make([]objc.ID, n)
	for i := range out {
		out[i] = send(a, msgArrayObjectAtIndex, uint64(i))
	}
	return out
}

// dataBytes copies an NSData's bytes.
func dataBytes(d objc.ID) []byte {
	if d == 0 {
		return nil
	}
	n := sendT[uint64](d, msgDataLength)
	if n == 0 {
		return nil
	}
	p := sendT[unsafe.Pointer](d, msgDataBytes)
	if p == nil {
		return nil
	}
	return append([]byte(nil), unsafe.Slice((*byte)(p), n)...)
}
