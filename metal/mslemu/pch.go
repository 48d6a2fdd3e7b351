package mslemu

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
)

// The emulated metal_stdlib (with the C++ library it includes) is most of
// what g++ parses for a kernel: a compile that takes 2.7 s reading it
// takes 1.2 s with it precompiled (mltop check's syntax-only one 1.9 s and
// 0.5 s). Every process shares one precompiled copy (about 4 s to make,
// 65 MB), in a folder of mltop's cache named by what the .gch depends on:
//
//	profiler.CacheDir("mslemu")/VARIANT-KEY/  the shim's files and metal_stdlib.gch
//
// Compiles pass that folder as -I and `-include metal_stdlib`; g++ takes
// the .gch beside the header when the compile's flags match the ones it was
// made with, and reads the header itself otherwise (slower, same result).

// gxxFlags are the flags every emulated compile starts with, and the ones
// the precompiled metal_stdlib is made with. g++ refuses a .gch for a
// compile whose -O level, -pthread (its _REENTRANT) or -D differ, so
// Backend.build and CheckUser share them and add only flags that keep it
// valid (-I, -include, -o, -fsyntax-only, -fmax-errors). A kernel's knob
// macros are #define lines in its source, after the stdlib (defineLines).
// bf16 is Metal 3.1's native bfloat (__HAVE_BFLOAT__): a .gch of its own.
func gxxFlags(bf16 bool) []string {
	f := []string{"-std=c++20", "-O1", "-pthread", "-w"}
	if bf16 {
		f = append(f, "-D__HAVE_BFLOAT__=1")
	}
	return f
}

// variant names a flag set's folder (the part of the name older folders
// of the same variant are found by).
func variant(bf16 bool) string {
	if bf16 {
		return "bfloat"
	}
	return "plain"
}

// shimSource is where the emulation's headers come from: a folder (New's
// shim) or the copy embedded in mltop (Open, CheckUser).
type shimSource struct {
	id   string // a folder's absolute path, or "embedded"
	fsys fs.FS
}

func dirShim(dir string) shimSource { return shimSource{dir, os.DirFS(dir)} }

func embeddedShim() shimSource {
	sub, err := fs.Sub(metal.EmulationShim, metal.EmulationShimDir)
	if err != nil {
		panic(err) // a constant path into the embedded files
	}
	return shimSource{"embedded", sub}
}

// pchFolders memoises includeDir per cache root, compiler, shim and
// variant: the shim is hashed and the folder checked or made once per
// process.
var pchFolders struct {
	sync.Mutex
	m map[string]*pchFolder
}

type pchFolder struct {
	once    sync.Once
	dir     string
	err     error
	refused bool // pchRefused; under pchFolders' lock
}

// includeDir is the folder with the precompiled metal_stdlib for g++ at
// gxx, the shim src and the variant bf16, made when no process has made
// it yet; "" with the reason when there is none (no cache folder, a file
// in its place, a .gch g++ cannot make): the caller compiles against the
// plain shim then, never failing because of the cache.
func includeDir(gxx string, src shimSource, bf16 bool) (string, error) {
	root, err := profiler.CacheDir("mslemu")
	if err != nil {
		return "", err
	}
	key := pchKey(root, gxx, src, bf16)
	pchFolders.Lock()
	if pchFolders.m == nil {
		pchFolders.m = map[string]*pchFolder{}
	}
	f := pchFolders.m[key]
	if f == nil {
		f = &pchFolder{}
		pchFolders.m[key] = f
	}
	pchFolders.Unlock()
	f.once.Do(func() { f.dir, f.err = makePCH(root, gxx, src, bf16) })
	pchFolders.Lock()
	defer pchFolders.Unlock()
	if f.refused {
		return "", fmt.Errorf("the compiler refused %s, or it was removed", f.dir)
	}
	return f.dir, f.err
}

// pchKey is includeDir's memo key.
func pchKey(root, gxx string, src shimSource, bf16 bool) string {
	return strings.Join([]string{root, gxx, src.id, variant(bf16)}, "\x00")
}

// pchName is the folder's name: the variant and a hash of the compiler's
// identity, the flags and every shim file's name and content, so that a
// new g++, a flag or a changed header gives a new folder.
func pchName(gxxID string, files map[string][]byte, bf16 bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", gxxID)
	for _, f := range gxxFlags(bf16) {
		fmt.Fprintf(h, "%s\x00", f)
	}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(files[n]))
		h.Write(files[n])
	}
	return variant(bf16) + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// gxxIdentity is the compiler's resolved path, size, time, version and
// target: a .gch is valid for one compiler only (g++ ignores another's; a
// g++ that is clang (macOS) refuses it: pchRefused).
func gxxIdentity(gxx string) (string, error) {
	path, err := filepath.EvalSymlinks(gxx)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	out, err := exec.Command(gxx, "-dumpfullversion", "-dumpmachine").Output()
	if err != nil {
		if out, err = exec.Command(gxx, "-dumpversion", "-dumpmachine").Output(); err != nil {
			return "", fmt.Errorf("%s -dumpversion -dumpmachine: %w", gxx, err)
		}
	}
	return fmt.Sprintf("%s\x00%d\x00%d\x00%s", path, st.Size(), st.ModTime().UnixNano(), strings.TrimSpace(string(out))), nil
}

// shimFiles reads the shim's files (its folder has no subfolders).
func shimFiles(src shimSource) (map[string][]byte, error) {
	ents, err := fs.ReadDir(src.fsys, ".")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := fs.ReadFile(src.fsys, e.Name())
		if err != nil {
			return nil, err
		}
		files[e.Name()] = b
	}
	if files["metal_stdlib"] == nil {
		return nil, fmt.Errorf("the MSL emulation's headers (%s) have no metal_stdlib", src.id)
	}
	return files, nil
}

const gchName = "metal_stdlib.gch"

// pchReady says whether dir holds a finished precompiled header (it is
// renamed in last, after the headers it was made from).
func pchReady(dir string) bool {
	st, err := os.Lstat(filepath.Join(dir, gchName))
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return false
	}
	st, err = os.Lstat(filepath.Join(dir, "metal_stdlib"))
	return err == nil && st.Mode().IsRegular()
}

// pchError is a compiler's error about a precompiled header: g++'s
// "one or more PCH files were found, but they were invalid", clang's
// "… has been modified since the precompiled header … was built".
var pchError = regexp.MustCompile(`(?im)error:.*(\.gch\b|precompiled header|\bPCH\b)`)

// pchRefused says whether a compile against the folder dir that failed
// with out should be made again against the plain headers: the folder is
// gone (another mltop removed it) or the compiler refused its .gch. Such a
// folder is not used again by this process.
func pchRefused(dir string, out []byte) bool {
	if pchReady(dir) && !pchError.Match(out) {
		return false
	}
	pchFolders.Lock()
	defer pchFolders.Unlock()
	for _, f := range pchFolders.m {
		if f.dir == dir {
			f.refused = true
		}
	}
	return true
}

// makePCH finds or makes the folder. The .gch keeps the paths of the
// headers it was made from (g++'s messages about a shim line name them),
// so it is made in the folder it is used from, not in one renamed later:
// each file is written under a temporary name and renamed, the .gch last,
// so a process that sees the .gch sees every header; processes making it
// at once write the same bytes, and the last rename wins. A new folder
// removes the older ones of its variant (another shim or compiler) that
// no process has used for a while (removeOlder).
func makePCH(root, gxx string, src shimSource, bf16 bool) (string, error) {
	files, err := shimFiles(src)
	if err != nil {
		return "", err
	}
	id, err := gxxIdentity(gxx)
	if err != nil {
		return "", err
	}
	name := pchName(id, files, bf16)
	dir := filepath.Join(root, name)
	if pchReady(dir) {
		now := time.Now()
		os.Chtimes(dir, now, now) // used: see removeOlder
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for n, b := range files {
		if old, err := os.ReadFile(filepath.Join(dir, n)); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := writeRenamed(filepath.Join(dir, n), func(tmp string) error { return os.WriteFile(tmp, b, 0o644) }); err != nil {
			return "", err
		}
	}
	err = writeRenamed(filepath.Join(dir, gchName), func(tmp string) error {
		args := append(gxxFlags(bf16), "-x", "c++-header", "-o", tmp, filepath.Join(dir, "metal_stdlib"))
		if out, err := exec.Command(gxx, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("g++ %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	removeOlder(root, name, dir)
	return dir, nil
}

// writeRenamed has write make a temporary file beside path and renames it
// to path; the temporary file is removed when write fails.
func writeRenamed(path string, write func(tmp string) error) error {
	var r [6]byte
	rand.Read(r[:])
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.tmp-%d-%x", filepath.Base(path), os.Getpid(), r))
	if err := write(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// staleTemp is how old a temporary file of a process that died while
// making a .gch (65 MB) must be to be removed.
const staleTemp = 30 * time.Minute

// unusedFolder is how long no process has started using a folder (its
// modification time, set at each process's first use) before a new
// folder of its variant removes it: an mltop of another version (another
// worktree, a long session) may be compiling with it. One removed while
// in use costs that process its speed, not its compiles (build, CheckUser).
const unusedFolder = time.Hour

// removeOlder removes root's folders of name's variant other than name
// (made for another shim or compiler) unused for unusedFolder and, in dir,
// temporary files left by a process that died while making them. Errors
// are ignored: the cache stays usable.
func removeOlder(root, name, dir string) {
	prefix := name[:strings.IndexByte(name, '-')+1]
	old := func(e fs.DirEntry, age time.Duration) bool {
		info, err := e.Info()
		return err == nil && time.Since(info.ModTime()) > age
	}
	if ents, err := os.ReadDir(root); err == nil {
		for _, e := range ents {
			if e.IsDir() && strings.HasPrefix(e.Name(), prefix) && e.Name() != name && old(e, unusedFolder) {
				os.RemoveAll(filepath.Join(root, e.Name()))
			}
		}
	}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") && old(e, staleTemp) {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// traceIncludes, when set (tests), gets g++'s -H output of every emulated
// compile: "! PATH.gch" when the precompiled header was used, "x PATH.gch"
// when g++ refused it.
var traceIncludes func(out string)

// withTrace adds -H to args when traceIncludes is set.
func withTrace(args []string) []string {
	if traceIncludes != nil {
		return append([]string{"-H"}, args...)
	}
	return args
}

// gxxEmulated runs g++ at gxx (made by command) with gxxFlags(bf16), -I
// a folder of the emulation's headers, `-include metal_stdlib` and args:
// the folder with the precompiled metal_stdlib for src when there is one,
// else — or when the compiler refused it or it was removed meanwhile
// (pchRefused), unless stopped says the compile was cancelled — the plain
// headers' folder plain gives. It returns g++'s output, the folder it
// compiled against ("" only when plain failed, with plain's error) and
// g++'s error. Backend.build and CheckUser compile through it.
func gxxEmulated(command func(name string, args ...string) *exec.Cmd, gxx string, src shimSource, bf16 bool, plain func() (string, error), stopped func() error, args ...string) (out []byte, inc string, err error) {
	run := func(inc string) ([]byte, error) {
		full := append(gxxFlags(bf16), withTrace(append([]string{"-I", inc, "-include", "metal_stdlib"}, args...))...)
		out, err := command(gxx, full...).CombinedOutput()
		if traceIncludes != nil {
			traceIncludes(string(out))
		}
		return out, err
	}
	if inc, _ = includeDir(gxx, src, bf16); inc != "" {
		out, err = run(inc)
		if err == nil || stopped() != nil || !pchRefused(inc, out) {
			return out, inc, err
		}
	}
	if inc, err = plain(); err != nil {
		return nil, "", err
	}
	out, err = run(inc)
	return out, inc, err
}

// defineLines are a built-in kernel's knob macros as #define lines, which
// its source gets after the forced `-include metal_stdlib` and before its
// own text: a -D would be seen by the stdlib, and g++ refuses a .gch when
// a macro it mentions (N, T, the knob-leak guard's BQ, BK…) is defined
// differently than when it was made. The kernel sees them as it saw -D:
// defined before its first line (its own #include <metal_stdlib> is a
// no-op under #pragma once). A #line 1 keeps its line numbers.
func defineLines(macros [][2]string) (string, error) {
	if len(macros) == 0 {
		return "", nil
	}
	var b strings.Builder
	for _, m := range macros {
		if strings.ContainsAny(m[1], "\r\n") {
			return "", fmt.Errorf("macro %s: its value %q has a line break; a knob's value must be one line", m[0], m[1])
		}
		fmt.Fprintf(&b, "#define %s %s\n", m[0], m[1])
	}
	b.WriteString("#line 1\n")
	return b.String(), nil
}
