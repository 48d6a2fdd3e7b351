// Package user makes kernel families out of data: a `kernel.yaml` manifest
// beside a user's .cu / .metal sources (docs/own-kernels.md).
// A loaded manifest is a profiler.Family like the built-in ones: schema,
// rules, plan, TGM budget, work model and a reference (a Python function
// over NumPy arrays, a built-in family's reference, another manifest's
// kernel, or none).
package user

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/parser"

	"github.com/mltop/mltop/internal/yamlmsg"
	"github.com/mltop/mltop/profiler/expr"
)

// Load reads a manifest and the files it names and makes a Family of it.
func Load(path string) (*Family, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the manifest: %v", errors.Unwrap(err))}
	}
	return Parse(path, src, os.ReadFile)
}

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// userNameRE is a name the source may see (a knob, dim, flag, value, define,
// the dtype name) or a buffer: a C identifier that may start with one _
// (RWKV's -D_N_, a parameter _r), not with __ (the compiler's own).
var userNameRE = regexp.MustCompile(`^_?[A-Za-z][A-Za-z0-9_]*$`)

// identHint says what is wrong with a name userNameRE refuses.
func identHint(name string) string {
	if strings.HasPrefix(name, "__") {
		return "a name starting with __ is the compiler's: drop the leading underscores"
	}
	return "use letters, digits and _, starting with a letter or one _"
}

// ValidName says whether name may name a kernel, a knob, a dim, a flag or
// a buffer: letters, digits and _, starting with a letter.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Parse is Load on bytes; read reads the files the manifest names (paths
// are relative to the manifest's folder).
func Parse(path string, src []byte, read func(string) ([]byte, error)) (*Family, error) {
	return parse(path, src, read, false)
}

// parse is Parse; nested is true for the manifest a `check: {kernel: …}`
// names, whose own check is not loaded (it is not used, and a pair of
// manifests that name each other would never end).
func parse(path string, src []byte, read func(string) ([]byte, error), nested bool) (*Family, error) {
	var m manifestYAML
	af, _ := parser.ParseBytes(src, 0)
	if err := strictUnmarshal(src, &m); err != nil {
		e := yamlErr(path, err)
		// A value of the wrong type names its field, like the later checks.
		if ue, ok := e.(*Error); ok && ue.Field == "" && ue.Line > 0 && !strings.Contains(ue.Msg, "unknown field") {
			ue.Field = yamlmsg.FieldAt(af, ue.Line, ue.Col)
			ue.Msg = yamlmsg.WithValue(ue.Msg, src, ue.Line, ue.Col)
		} else if ok && ue.Line > 0 {
			if hint, found := unknownKeyHint(af, ue.Msg, ue.Line, ue.Col); found {
				msg, _, _ := strings.Cut(ue.Msg, ": check the spelling") // yamlErr's general hint
				ue.Msg = msg + ": " + hint + " (docs/own-kernels.md)"
			}
		}
		return nil, e
	}
	d := &doc{file: path, ast: af}
	f := &Family{path: path, dir: filepath.Dir(path), doc: d, m: m, nested: nested}
	if err := f.build(read); err != nil {
		return nil, err
	}
	// The version hashes contents and the files' names relative to the
	// manifest, never how the manifest was reached: a session that loaded
	// ./examples/softmax and a worker that loaded its absolute path must
	// agree on it.
	h := sha256.New()
	h.Write(src)
	for _, p := range f.Files()[1:] {
		b, _ := read(p)
		name := p
		if rel, err := filepath.Rel(f.dir, p); err == nil {
			name = filepath.ToSlash(rel)
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	f.version = hex.EncodeToString(h.Sum(nil)[:8])
	return f, nil
}

// builder is the state build's sections share: the expression variables
// (knobs, dims, flags) and the names taken so far.
type builder struct {
	f           *Family
	m           *manifestYAML
	d           *doc
	read        func(string) ([]byte, error)
	vars        expr.Vars
	seen        map[string]string // knob, dim and flag names → what they are
	bufferNames map[string]bool
	loaded      map[string]*prepared // each source, read and scanned by sourceConsts for prepare
}

// build checks the manifest section by section and fills in f.
func (f *Family) build(read func(string) ([]byte, error)) error {
	dn := f.dtypeName()
	bl := &builder{f: f, m: &f.m, d: f.doc, read: read,
		vars:        expr.Vars{dn: expr.DType},
		seen:        map[string]string{dn: "the dtype", "DTYPE": "the dtype code"},
		bufferNames: map[string]bool{},
		loaded:      map[string]*prepared{},
	}
	f.vars = bl.vars
	if !userNameRE.MatchString(dn) {
		return f.doc.err("$.dtype_name", "dtype_name", "%q is not a C identifier: name the element type as the source does, e.g. floatX", dn)
	}
	if msg := reservedError(dn, "dtype_name"); msg != "" {
		return f.doc.err("$.dtype_name", "dtype_name", "%s", msg)
	}
	if msg := builtinNameError(dn); msg != "" {
		return f.doc.err("$.dtype_name", "dtype_name", "%s", msg)
	}
	for _, section := range []func() error{bl.name, bl.sources, bl.dtypes, bl.params, bl.flags, bl.sourceConsts, bl.values, bl.defines, bl.rules, bl.buffers, bl.mlx, bl.prepare, bl.dispatches, bl.symbols, bl.constants, bl.mlxScalars, bl.work} {
		if err := section(); err != nil {
			return err
		}
	}
	return f.parseCheck(read)
}

func (bl *builder) name() error {
	m, d := bl.m, bl.d
	if m.Name == "" {
		return d.err("$", "name", "the manifest has no name: add `name: my_kernel` (the family name in list, sweeps and CSV)")
	}
	if !nameRE.MatchString(m.Name) {
		return d.err("$.name", "name", "%q is not a usable kernel name: use letters, digits and _, starting with a letter", m.Name)
	}
	return nil
}

// compile compiles an expression at path over the knobs, dims and flags.
func (bl *builder) compile(v any, path, field string) (*expr.Program, error) {
	return bl.compileIn(bl.vars, v, path, field)
}

// compileWithDevice compiles a dispatch's grid or scalar arg, which may
// also read the device values (sm_count, max_coresident: coop.go).
func (bl *builder) compileWithDevice(v any, path, field string) (*expr.Program, error) {
	return bl.compileIn(deviceVars(bl.vars), v, path, field)
}

func (bl *builder) compileIn(vars expr.Vars, v any, path, field string) (*expr.Program, error) {
	d := bl.d
	s, err := exprText(v)
	if err != nil {
		return nil, d.err(path, field, "%v", err)
	}
	p, err := bl.compileExpr(s, vars, d.where(path, field))
	var ee *expr.Error
	if err != nil && errors.As(err, &ee) && strings.Count(s, "(") != strings.Count(s, ")") {
		ee.Msg += `: YAML splits [a, b] lists at commas, so quote an expression that has one: ["cdiv(cols, 4)", 1]`
	}
	return p, exprError(err, "") // the message names the field
}

// work reads the work model (flops, bytes).
func (bl *builder) work() error {
	f, m, d, compile := bl.f, bl.m, bl.d, bl.compile
	for k, v := range m.Work {
		if k != "flops" && k != "bytes" {
			return d.err("$.work."+k, "work."+k, "unknown key %q: work has flops and bytes", k)
		}
		p, err := compile(v, "$.work."+k, "work."+k)
		if err != nil {
			return err
		}
		if k == "flops" {
			f.flops = p
		} else {
			f.bytes = p
		}
	}
	return nil
}

func exprText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int, int64, uint64, float64:
		return fmt.Sprint(x), nil
	case nil:
		return "", errors.New("empty value: write a number or an expression")
	}
	return "", fmt.Errorf("want a number or an expression string, got %v", v)
}

func orderedKeys[V any](order []string, m map[string]V) []string {
	var out []string
	for _, k := range order {
		if _, ok := m[k]; ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(mapsKeys(m)) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Reserved are the names no knob, dim, flag, value, define or dtype_name
// may take, with the reason: the macros mltop defines in every user
// kernel's source (DTYPE, the dtype's code, and the codes it is compared
// with), and dtype, the key under which the Python reference reads the
// spec's dtype. The dtype's name (T unless the manifest's dtype_name says
// otherwise) is taken too, as "the dtype". Names of CSV columns (n, time,
// status, …) are free: such a knob, dim or flag is written to the CSV as
// knob.X, dim.X or flag.X (profiler/sink).
var Reserved = map[string]string{
	"DTYPE":      "a macro mltop defines in the source (the code of the spec's dtype)",
	"DTYPE_F32":  "a macro mltop defines in the source (the code of f32, compared with DTYPE)",
	"DTYPE_F16":  "a macro mltop defines in the source (the code of f16, compared with DTYPE)",
	"DTYPE_BF16": "a macro mltop defines in the source (the code of bf16, compared with DTYPE)",
	"dtype":      `the key under which the Python reference reads the spec's dtype (dims["dtype"])`,
}

// reservedError explains why name, one of Reserved, cannot name a
// manifest's kind of thing ("knob", "define", …); "" for any other name.
func reservedError(name, kind string) string {
	why, ok := Reserved[name]
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s is %s: rename the %s, e.g. %s_", name, why, kind, name)
}

// cudaBuiltins are CUDA's built-in variables. A knob, dim, flag or value of
// such a name would be declared ahead of the source (constexpr int
// blockDim = 256;) and hide the built-in, so blockDim.x no longer compiles.
var cudaBuiltins = map[string]bool{"threadIdx": true, "blockIdx": true, "blockDim": true, "gridDim": true, "warpSize": true, "clusterDim": true, "clusterIdx": true}

// CUDABuiltin says whether name is one of CUDA's built-in variables
// (threadIdx, blockDim, …), which no knob, dim, flag, value, define or
// dtype_name may be named.
func CUDABuiltin(name string) bool { return cudaBuiltins[name] }

// builtinNameError explains why a name that is a CUDA built-in is refused;
// "" for any other name.
func builtinNameError(name string) string {
	if !cudaBuiltins[name] {
		return ""
	}
	return fmt.Sprintf("%s is a CUDA built-in variable: mltop would declare it ahead of the source and hide the built-in (%s.x would not compile); rename it, e.g. %s", name, name, builtinRename(name))
}

func builtinRename(name string) string {
	if name == "blockDim" {
		return "WG (threads per block)"
	}
	return strings.ToLower(name[:1]) + name[1:] + "_"
}
