package mslemu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// traceGch collects g++'s -H lines about metal_stdlib.gch while the test
// runs: "! PATH" used, "x PATH" refused.
func traceGch(t *testing.T) func() []string {
	t.Helper()
	var mu sync.Mutex
	var lines []string
	traceIncludes = func(out string) {
		mu.Lock()
		defer mu.Unlock()
		found := false
		for _, l := range strings.Split(out, "\n") {
			if strings.HasSuffix(l, gchName) {
				lines = append(lines, l)
				found = true
			}
		}
		if !found {
			lines = append(lines, "(no .gch)")
		}
	}
	t.Cleanup(func() { traceIncludes = nil })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := lines
		lines = nil
		return out
	}
}

// used says whether every compile traced took the precompiled header.
func used(lines []string) bool {
	for _, l := range lines {
		if !strings.HasPrefix(l, "! ") {
			return false
		}
	}
	return len(lines) > 0
}

func needGxx(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
}

// The precompiled metal_stdlib is used, not silently refused, by each
// path that compiles: CheckUser (mltop check, the bfloat flags), a user
// kernel on a test's Backend, a built-in kernel whose knob macros include
// one the stdlib's leak guard names (WG), and Open's Backend. A flag added
// to one path only, or a knob passed as -D, makes g++ print "x …gch" and
// fails here. (The shared cache: the first test to compile makes it.)
func TestPrecompiledStdlibUsed(t *testing.T) {
	needGxx(t)
	trace := traceGch(t)
	fill := profiler.Program{Entry: "fill", File: "fill.metal", Code: fillKernel}
	if err := CheckUser(context.Background(), fill); err != nil {
		t.Fatal(err)
	}
	if got := trace(); !used(got) {
		t.Errorf("CheckUser: %q", got)
	}
	e := New(t, "../testdata/mslemu", EmulatedDevice())
	if _, err := e.Compile(fill); err != nil {
		t.Fatal(err)
	}
	if got := trace(); !used(got) {
		t.Errorf("user kernel: %q", got)
	}
	transpose := profiler.Program{Source: "transpose", Entry: "transpose", Macros: []profiler.Macro{
		{Name: "TILE", Value: "32"}, {Name: "WG", Value: "256"}, {Name: "VEC", Value: "1"}, {Name: "DTYPE", Value: "0"}}}
	if _, err := e.Compile(transpose); err != nil {
		t.Fatal(err)
	}
	if got := trace(); !used(got) {
		t.Errorf("built-in kernel with knob macros: %q", got)
	}
	o, err := Open(context.Background(), EmulatedDevice())
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.NativeBF16 = true
	if _, err := o.Compile(fill); err != nil {
		t.Fatal(err)
	}
	if got := trace(); !used(got) {
		t.Errorf("Open's Backend, bfloat: %q", got)
	}
}

// The folder's name changes with any shim file's content or name, the
// flag set and the compiler; the variant leads it.
func TestPrecompiledStdlibKey(t *testing.T) {
	files := map[string][]byte{"metal_stdlib": []byte("#pragma once\n"), "emu_types.h": []byte("// types\n")}
	base := pchName("/usr/bin/g++-12\x0012.2.0", files, false)
	if !strings.HasPrefix(base, "plain-") {
		t.Errorf("name %q: want the variant first", base)
	}
	changed := map[string][]byte{"metal_stdlib": []byte("#pragma once\n"), "emu_types.h": []byte("// types, changed\n")}
	renamed := map[string][]byte{"metal_stdlib": []byte("#pragma once\n"), "emu_type.h": []byte("// types\n")}
	for what, name := range map[string]string{
		"a shim file's content": pchName("/usr/bin/g++-12\x0012.2.0", changed, false),
		"a shim file's name":    pchName("/usr/bin/g++-12\x0012.2.0", renamed, false),
		"the compiler":          pchName("/usr/bin/g++-13\x0013.1.0", files, false),
		"the flags (bfloat)":    pchName("/usr/bin/g++-12\x0012.2.0", files, true),
	} {
		if name == base {
			t.Errorf("%s changed, the folder did not: %s", what, name)
		}
	}
	if again := pchName("/usr/bin/g++-12\x0012.2.0", files, false); again != base {
		t.Errorf("the same inputs gave %s and %s", base, again)
	}
}

// A new folder removes its variant's older folders that no process has
// used for an hour, not a recently used one (another mltop's) nor the other
// variant's, and a dead process's temporary files only when stale.
func TestPrecompiledStdlibRemovesOlder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plain-0000000000000002")
	unused, recent, other := filepath.Join(root, "plain-0000000000000001"), filepath.Join(root, "plain-0000000000000003"), filepath.Join(root, "bfloat-0000000000000001")
	for _, d := range []string{dir, unused, recent, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fresh, stale := filepath.Join(dir, ".metal_stdlib.gch.tmp-1-aa"), filepath.Join(dir, ".metal_stdlib.gch.tmp-2-bb")
	for _, f := range []string{fresh, stale} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, age := range map[string]time.Duration{stale: 2 * staleTemp, unused: 2 * unusedFolder, other: 2 * unusedFolder, recent: unusedFolder / 2} {
		then := time.Now().Add(-age)
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	removeOlder(root, "plain-0000000000000002", dir)
	for p, want := range map[string]bool{unused: false, recent: true, dir: true, other: true, fresh: true, stale: false} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", p, err == nil, want)
		}
	}
}

// A cache that cannot hold the folder (a file where mltop's cache folder's
// mslemu/, or the folder itself, should be) costs time, not the compile:
// CheckUser compiles against the plain headers, whose messages are named
// mslemu/NAME as before.
func TestPrecompiledStdlibBrokenCache(t *testing.T) {
	needGxx(t)
	gxx, _ := exec.LookPath("g++")
	id, err := gxxIdentity(gxx)
	if err != nil {
		t.Fatal(err)
	}
	files, err := shimFiles(embeddedShim())
	if err != nil {
		t.Fatal(err)
	}
	trace := traceGch(t)
	for i, blocked := range []string{"mslemu", filepath.Join("mslemu", pchName(id, files, true))} {
		root := t.TempDir()
		t.Setenv("MLTOP_CACHE_DIR", root)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, blocked)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, blocked), []byte("not a folder"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := includeDir(gxx, embeddedShim(), true); err == nil {
			t.Errorf("a file at %s: includeDir gave no error", blocked)
		}
		if i == 0 {
			if err := CheckUser(context.Background(), profiler.Program{Entry: "fill", File: "fill.metal", Code: fillKernel}); err != nil {
				t.Errorf("a file at %s: %v", blocked, err)
			}
		} else {
			err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: "k.metal", Code: fooExp})
			if err == nil || !strings.Contains(err.Error(), "mslemu/emu_vecmath.h:") || !strings.Contains(err.Error(), "(from k.metal:5:") {
				t.Errorf("a file at %s, a bad call: %v", blocked, err)
			}
		}
		if got := trace(); len(got) != 1 || got[0] != "(no .gch)" {
			t.Errorf("a file at %s: %q", blocked, got)
		}
	}
}

// A folder another mltop removes after this one found it (a new shim's
// folder replacing an old one) costs the next compiles their speed only:
// each path makes its compile again against the plain headers.
func TestPrecompiledStdlibRemovedMeanwhile(t *testing.T) {
	needGxx(t)
	root := t.TempDir()
	t.Setenv("MLTOP_CACHE_DIR", root)
	e := New(t, "../testdata/mslemu", EmulatedDevice())
	// what includeDir found before the folders went: the memo of each
	// path's headers (the embedded copy, the test's folder)
	for i, src := range []shimSource{embeddedShim(), e.src} {
		f := &pchFolder{dir: filepath.Join(root, "mslemu", fmt.Sprintf("gone-%d", i))}
		f.once.Do(func() {})
		pchFolders.Lock()
		if pchFolders.m == nil {
			pchFolders.m = map[string]*pchFolder{}
		}
		pchFolders.m[pchKey(filepath.Join(root, "mslemu"), e.gxx, src, false)] = f
		pchFolders.m[pchKey(filepath.Join(root, "mslemu"), e.gxx, src, true)] = f
		pchFolders.Unlock()
	}
	fill := profiler.Program{Entry: "fill", File: "fill.metal", Code: fillKernel}
	if err := CheckUser(context.Background(), fill); err != nil {
		t.Errorf("CheckUser after the folder went: %v", err)
	}
	if _, err := e.Compile(fill); err != nil {
		t.Errorf("a Backend's compile after the folder went: %v", err)
	}
}

// A failed compile is made again against the plain headers when the
// folder is gone or the compiler's errors are about the .gch (clang checks
// the headers' times, g++ can find only invalid ones); then the process
// stops using the folder. A source's own errors are not retried.
func TestPrecompiledStdlibRefused(t *testing.T) {
	root := t.TempDir()
	t.Setenv("MLTOP_CACHE_DIR", root)
	dir := filepath.Join(root, "mslemu", "plain-0000000000000001")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"metal_stdlib", gchName} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := shimSource{id: "fake"}
	f := &pchFolder{dir: dir}
	f.once.Do(func() {})
	pchFolders.Lock()
	if pchFolders.m == nil {
		pchFolders.m = map[string]*pchFolder{}
	}
	pchFolders.m[pchKey(filepath.Join(root, "mslemu"), "g++", src, false)] = f
	pchFolders.Unlock()
	if got, err := includeDir("g++", src, false); got != dir || err != nil {
		t.Fatalf("includeDir: %q, %v", got, err)
	}
	own := "k.metal:3:1: error: 'x' was not declared in this scope"
	if pchRefused(dir, []byte(own)) {
		t.Errorf("the source's own error retried")
	}
	if !pchRefused(filepath.Join(root, "gone"), []byte(own)) {
		t.Errorf("a removed folder not retried")
	}
	for _, out := range []string{
		"k.cc: error: one or more PCH files were found, but they were invalid",
		"fatal error: file '" + dir + "/emu_types.h' has been modified since the precompiled header '" + dir + "/metal_stdlib.gch' was built",
	} {
		if !pchRefused(dir, []byte(out)) {
			t.Errorf("not retried: %s", out)
		}
	}
	if got, err := includeDir("g++", src, false); got != "" || err == nil {
		t.Errorf("includeDir after a refusal: %q, %v", got, err)
	}
}

// fooExp calls exp on a vector of a struct: g++'s error is inside the
// emulation's emu_vecmath.h, instantiated from line 5.
const fooExp = "using namespace metal;\nstruct Foo { float a; };\nkernel void k(device float* x [[buffer(0)]]) {\n  vec<Foo, 4> v;\n  auto r = exp(v);\n}\n"

// The .gch keeps the paths of the headers it was made from: an error in a
// shim template names the folder it is used from, as mslemu/NAME once
// condensed, never another folder (one renamed after the .gch was made).
func TestPrecompiledStdlibErrorPaths(t *testing.T) {
	needGxx(t)
	root, err := profiler.CacheDir("mslemu")
	if err != nil {
		t.Skip(err)
	}
	trace := traceGch(t)
	err = CheckUser(context.Background(), profiler.Program{Entry: "k", File: "k.metal", Code: fooExp})
	if got := trace(); !used(got) {
		t.Errorf("trace %q", got)
	}
	if err == nil || strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), "mslemu/emu_vecmath.h:") || !strings.Contains(err.Error(), "(from k.metal:5:") {
		t.Errorf("error %v", err)
	}
}

// Knob macros become #define lines with -D's meaning: NAME=VALUE, an empty
// value defined empty; a value across lines is refused by name.
func TestDefineLines(t *testing.T) {
	got, err := defineLines([][2]string{{"BQ", "64"}, {"E", ""}, {"F", "(1 + 2)"}})
	if want := "#define BQ 64\n#define E \n#define F (1 + 2)\n#line 1\n"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if got, err := defineLines(nil); got != "" || err != nil {
		t.Errorf("no macros: %q, %v", got, err)
	}
	if _, err := defineLines([][2]string{{"BQ", "64\n#define X 1"}}); err == nil || !strings.Contains(err.Error(), "BQ") {
		t.Errorf("a value with a line break: %v", err)
	}
}

// mltop_common.h hides the knob macros from Metal's headers: compiled as
// Metal compiles a built-in kernel (-D knobs before any #include), the
// stdlib's leak guard stays quiet; without the hiding it fires. (The
// emulation's own compiles include the stdlib before the knobs, so this
// is where the guard still runs.)
func TestCommonHeaderHidesKnobs(t *testing.T) {
	needGxx(t)
	hdrs, err := shaders.Headers("metal")
	if err != nil {
		t.Fatal(err)
	}
	common := hdrs[metal.CommonHeader]
	hiding := regexp.MustCompile(`(?m)^#(pragma (push|pop)_macro\(.*\)|undef \w+)\n`)
	if !hiding.MatchString(common) {
		t.Fatal("mltop_common.h: no push_macro/#undef lines")
	}
	for _, c := range []struct {
		name, header string
		leak         bool
	}{{"as it is", common, false}, {"without the hiding", hiding.ReplaceAllString(common, ""), true}} {
		cc := filepath.Join(t.TempDir(), "k.cc")
		if err := os.WriteFile(cc, []byte(metal.AssembleSource(c.header, "kernel void k() {}\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-E", "-I", "../testdata/mslemu", "-o", os.DevNull}
		for _, m := range []string{"D", "BQ", "BK", "WM", "WN", "WG", "CAUSAL"} {
			args = append(args, "-D"+m+"=1")
		}
		out, err := exec.Command("g++", append(append(gxxFlags(false), args...), cc)...).CombinedOutput()
		if leaked := strings.Contains(string(out), "a knob macro leaked"); leaked != c.leak || (err != nil) != c.leak {
			t.Errorf("%s: %v\n%s", c.name, err, out)
		}
	}
}
