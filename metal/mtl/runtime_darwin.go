//go:build darwin

package mtl

// Loading the frameworks, registering the selector table once, and the
// checked sends every wrapper goes through.
//
// Calling pattern (purego/objc): objc.ID.Send(sel, args...) for id and
// void results, objc.Send[T](obj, sel, args...) for typed results (bool,
// float64, uint64, Size, pointers). Arguments are Go values: uint64/int64
// for NSUInteger/NSInteger, bool for BOOL, objc.ID for objects,
// unsafe.Pointer for out-parameters and const void *, and Go structs for
// C structs by value.
//
// Ownership follows Cocoa's rules: alloc/new/copy return +1 objects the
// caller releases; everything else is autoreleased and lives until the
// enclosing AutoreleasePool drains.

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

const (
	metalPath      = "/System/Library/Frameworks/Metal.framework/Metal"
	foundationPath = "/System/Library/Frameworks/Foundation.framework/Foundation"
	iokitPath      = "/System/Library/Frameworks/IOKit.framework/IOKit"
)

// The classes mltop sends class messages to.
type class uint8

const (
	clsAutoreleasePool class = iota
	clsString
	clsDictionary
	clsCompileOptions
	clsComputePassDescriptor
	clsBlitPassDescriptor
	clsCounterSampleBufferDescriptor
	clsFunctionConstantValues
	numClasses
)

var classNames = [numClasses]string{"NSAutoreleasePool", "NSString", "NSDictionary", "MTLCompileOptions",
	"MTLComputePassDescriptor", "MTLBlitPassDescriptor", "MTLCounterSampleBufferDescriptor", "MTLFunctionConstantValues"}

var (
	loadOnce sync.Once
	loadErr  error
	sels     [numMsgs]objc.SEL
	classes  [numClasses]objc.ID
)

// Load dlopens Foundation and Metal, registers every selector of the
// table and looks up the classes mltop uses. Classes are looked up only
// after both frameworks are loaded: objc_getClass finds only classes of
// loaded images. It runs once; later calls return the first result.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

func load() error {
	if runtime.GOARCH != "arm64" {
		return errors.New("Metal needs macOS on Apple Silicon: this Mac is " + runtime.GOARCH)
	}
	if _, err := purego.Dlopen(foundationPath, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		return fmt.Errorf("loading Foundation (%s): %w", foundationPath, err)
	}
	metal, err := purego.Dlopen(metalPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("loading Metal (%s): %w", metalPath, err)
	}
	if err := bindFuncs(metal, "Metal"); err != nil {
		return err
	}
	for i, m := range methods {
		if m.Sel == "" {
			return fmt.Errorf("selector table row %d is empty", i)
		}
		sels[i] = objc.RegisterName(m.Sel)
	}
	for i, n := range classNames {
		c := objc.GetClass(n)
		if c == 0 {
			return fmt.Errorf("Objective-C class %s not found: this macOS is too old for mltop (needs macOS 11 or later)", n)
		}
		classes[i] = objc.ID(c)
	}
	return nil
}

// mustCheck panics when a wrapper's call disagrees with the table: a bug
// in this package that the message would otherwise turn into a crash or
// garbage far from here.
func mustCheck(err error) {
	if err != nil {
		panic("mtl: " + err.Error())
	}
}

// send sends m to obj for an id or void result.
func send(obj objc.ID, m msg, args ...any) objc.ID {
	mustCheck(checkArgs(methods[m], args))
	if k := methods[m].Ret; k != KID && k != KVoid {
		panic(fmt.Sprintf("mtl: %s returns %s: use sendT", methods[m], k))
	}
	return obj.Send(sels[m], args...)
}

// sendT sends m to obj for a typed result.
func sendT[T any](obj objc.ID, m msg, args ...any) T {
	mustCheck(checkArgs(methods[m], args))
	mustCheck(checkRet(methods[m], reflect.TypeFor[T]()))
	return objc.Send[T](obj, sels[m], args...)
}

// sendClass sends a class message (alloc, computePassDescriptor, ...).
func sendClass(c class, m msg, args ...any) objc.ID {
	if !methods[m].Class {
		panic(fmt.Sprintf("mtl: %s is an instance method, sent to class %s", methods[m], classNames[c]))
	}
	return send(classes[c], m, args...)
}

// responds says whether obj implements m; rows with a Since are sent only
// when it does.
func responds(obj objc.ID, m msg) bool {
	if obj == 0 {
		return false
	}
	return sendT[bool](obj, msgRespondsToSelector, sels[m])
}

// bindFuncs binds the cfuncs rows of lib (a framework name) to their Go
// variables, after checking each variable's shape against its row.
func bindFuncs(handle uintptr, lib string) error {
	for _, f := range cfuncs {
		if f.Lib != lib {
			continue
		}
		if err := checkFunc(f); err != nil {
			return fmt.Errorf("mtl: %w", err)
		}
		if _, err := purego.Dlsym(handle, f.Name); err != nil {
			return fmt.Errorf("%s has no %s: %w", lib, f.Name, err)
		}
		purego.RegisterLibFunc(f.fn, handle, f.Name)
	}
	return nil
}
