package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/mltop/mltop/backends"
	"github.com/mltop/mltop/internal/yamlmsg"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// The list types of an entry are shared with kernel manifests
// (internal/yamlmsg): one value or a list of values.
type (
	IntList    = yamlmsg.IntList
	StringList = yamlmsg.StringList
	BoolList   = yamlmsg.BoolList
)

// MeasureYAML are the measurement settings of a defaults: or options:
// block, by key: the keys of profiler.Settings, each value read by its
// setting as the command line reads its flag (checkShape refuses other keys).
// A key without a value (or ~) is nil: ignored, as before the table.
type MeasureYAML map[string]*SettingText

// SettingText is a setting's value as the file writes it.
type SettingText struct {
	Text string
}

// UnmarshalYAML keeps a scalar's text (unquoted); a list or a mapping is
// refused: a setting takes one value.
func (v *SettingText) UnmarshalYAML(n ast.Node) error {
	if sn, ok := n.(ast.ScalarNode); ok {
		if tk := sn.GetToken(); tk != nil {
			*v = SettingText{Text: tk.Value}
			return nil
		}
	}
	tk := n.GetToken()
	return fmt.Errorf("[%d:%d] want one value here, got %s", tk.Position.Line, tk.Position.Column, strings.TrimSpace(n.String()))
}

// SweepYAML is one entry of `sweeps:`.
type SweepYAML struct {
	Kernel  string              `yaml:"kernel"`
	DTypes  StringList          `yaml:"dtypes"` // one value or a list, as every list of an entry
	Knobs   map[string]IntList  `yaml:"knobs"`
	Dims    map[string]IntList  `yaml:"dims"`
	Flags   map[string]BoolList `yaml:"flags"`
	Where   StringList          `yaml:"where"`
	Options MeasureYAML         `yaml:"options"`
}

// FileYAML is a whole sweep file.
type FileYAML struct {
	Backend      string                     `yaml:"backend"`
	Defaults     MeasureYAML                `yaml:"defaults"`
	DeviceLimits *profiler.DeviceLimitsYAML `yaml:"device_limits"`
	Sweeps       []SweepYAML                `yaml:"sweeps"`
	Search       *SearchYAML                `yaml:"search"` // see search.go
}

// Sweep is a loaded, expanded sweep file.
type Sweep struct {
	File         string
	Backend      string // "" when the file does not say
	DeviceLimits *profiler.DeviceLimitsYAML
	Jobs         []profiler.Job
	// Search is the file's search: block (nil: measure every spec).
	Search *Search
	// Duplicates counts the jobs dropped from Jobs because an earlier job
	// has the same spec and options (a value repeated in a list, e.g.
	// `BQ: [32, 32]`, or two entries that expand to one spec): each spec
	// runs once, and a CSV holds one row of it.
	Duplicates int
}

// KnownBackends are the names --backend and `backend:` accept: auto and
// the registry's backends (adding a backend is one registry entry).
var KnownBackends = backends.Names()

var posRE = regexp.MustCompile(`^\[(\d+):(\d+)\]\s*(.*)$`)

// Load reads and expands a sweep file. Any unknown key, kernel, dtype,
// knob, dim or backend fails the whole file with an InputError that names
// file:line:col and the field. Values the family's rules reject are not
// errors here: they become `invalid` rows when run.
func Load(path string, base profiler.Options) (*Sweep, error) {
	return LoadWith(path, base, Options{})
}

// LoadWith is Load with options (a resolver for `kernel:` paths).
func LoadWith(path string, base profiler.Options, o Options) (*Sweep, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, readError(path, err)
	}
	return ParseWith(path, src, base, o)
}

// readError is the InputError of a sweep file that cannot be read.
func readError(path string, err error) error {
	hint := ""
	if errors.Is(err, os.ErrNotExist) {
		hint = ": check the path (relative to the current folder); configs/quick.yaml in the repository is a sweep to start from"
	}
	return &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot read the sweep file: %v%s", errors.Unwrap(err), hint)}
}

// Parse is Load on bytes.
func Parse(name string, src []byte, base profiler.Options) (*Sweep, error) {
	return ParseWith(name, src, base, Options{})
}

// ParseWith is LoadWith on bytes; name is the file's path (`kernel:`
// paths are relative to its folder). It expands every spec: a sweep that
// may be large is a Stream (ParseStream).
func ParseWith(name string, src []byte, base profiler.Options, o Options) (*Sweep, error) {
	st, err := ParseStream(name, src, base, o)
	if err != nil {
		return nil, err
	}
	jobs, c, err := st.Jobs(context.Background())
	if err != nil {
		return nil, err
	}
	return &Sweep{File: name, Backend: st.Backend, DeviceLimits: st.DeviceLimits, Jobs: jobs, Search: st.Search, Duplicates: c.Duplicates}, nil
}

// ParseStream is LoadStream on bytes.
func ParseStream(name string, src []byte, base profiler.Options, o Options) (*Stream, error) {
	src = stripBOM(src)
	if err := checkShape(name, src); err != nil {
		return nil, err
	}
	var f FileYAML
	astFile, _ := parser.ParseBytes(src, 0)
	if err := strictUnmarshal(src, &f); err != nil {
		e := yamlError(name, err)
		// A value of the wrong type ("abc" for a dim, "maybe" for a flag)
		// names its field too, like every later check.
		if ie, ok := e.(*profiler.InputError); ok && ie.Field == "" && ie.Line > 0 && !strings.Contains(ie.Msg, "unknown field") {
			ie.Field = yamlmsg.FieldAt(astFile, ie.Line, ie.Col)
			ie.Msg = yamlmsg.WithValue(ie.Msg, src, ie.Line, ie.Col)
		}
		return nil, e
	}
	at := func(path, field, msg string) error {
		e := &profiler.InputError{File: name, Field: field, Msg: msg}
		if n := nodeAt(astFile, path); n != nil && n.GetToken() != nil {
			tk := n.GetToken()
			e.Line, e.Col = tk.Position.Line, tk.Position.Column
		}
		return e
	}
	if f.Backend != "" && !slices.Contains(KnownBackends, f.Backend) {
		return nil, at("$.backend", "backend", fmt.Sprintf("unknown backend %q: use one of %s", f.Backend, strings.Join(KnownBackends, ", ")))
	}
	if len(f.Sweeps) == 0 {
		return nil, at("$", "sweeps", "the file has no sweeps: add a `sweeps:` list with at least one `kernel:` entry")
	}
	defaults, err := applyMeasure(base, f.Defaults, func(field, msg string) error { return at("$.defaults."+field, "defaults."+field, msg) })
	if err != nil {
		return nil, err
	}
	defaults.Limits = f.DeviceLimits
	st := &Stream{File: name, Backend: f.Backend, DeviceLimits: f.DeviceLimits}
	searchAt := func(field, msg string) error { return at("$.search."+field, "search."+field, msg) }
	if st.Search, err = parseSearch(f.Search, searchAt); err != nil {
		return nil, err
	}
	var unknown []error // the unknown names of every entry, reported together
	for i, s := range f.Sweeps {
		p := fmt.Sprintf("$.sweeps[%d]", i)
		field := fmt.Sprintf("sweeps[%d]", i)
		sx := sweepCtx{
			file: name,
			at: func(sub, msg string) error {
				return at(p+"."+sub, field+"."+sub, msg)
			},
			pos:   func(sub string) exprPos { return exprStart(astFile, p+"."+sub) },
			field: func(sub string) string { return field + "." + sub },
			item: func(list string, i int) string {
				if _, one := nodeAt(astFile, p+"."+list).(ast.ScalarNode); one {
					return list // one value written without a list
				}
				return fmt.Sprintf("%s[%d]", list, i)
			},
		}
		kernel, err := resolveKernel(name, s.Kernel, o)
		if err != nil {
			return nil, cmp.Or(inFileOrder(unknown), sx.at("kernel", err.Error()))
		}
		s.Kernel = kernel
		es, err := compileSearchEntries(s, st.Search, defaults, sx, st.entries, searchAt)
		var names *namesError
		if errors.As(err, &names) {
			unknown = append(unknown, names.errs...)
			continue
		}
		if err != nil { // after the names found so far: they are the first to fix
			return nil, cmp.Or(inFileOrder(unknown), err)
		}
		st.entries = append(st.entries, es...)
	}
	if len(unknown) > 0 {
		return nil, inFileOrder(unknown)
	}
	return st, nil
}

// DuplicatesNote is the line that tells how many duplicate jobs were
// dropped ("" when none), for the sweep's banner.
func (s *Sweep) DuplicatesNote() string {
	if s.Duplicates == 0 {
		return ""
	}
	return duplicatesNote(profiler.Plural(s.Duplicates, "duplicate spec", "duplicate specs"), s.File)
}

// duplicatesNote is the line of Sweep.DuplicatesNote and
// Stream.DuplicatesNote, count in words.
func duplicatesNote(count, file string) string {
	return fmt.Sprintf("mltop: dropped %s from %s (a value repeated in a list, or sweeps that overlap): each spec runs once\n", count, file)
}

// strictUnmarshal decodes rejecting unknown keys. The YAML library has
// panicked on some malformed inputs (found by FuzzParseSweep, e.g. a bare
// tag "sweeps: ! "): that is bad input too, not a crash.
func strictUnmarshal(src []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the file is not valid YAML for a sweep (the parser failed: %v)", p)
		}
	}()
	return yaml.UnmarshalWithOptions(src, v, yaml.Strict())
}

func yamlError(name string, err error) error {
	msg := err.Error()
	first, rest, _ := strings.Cut(msg, "\n")
	e := &profiler.InputError{File: name, Msg: first, Snippet: rest}
	if m := posRE.FindStringSubmatch(first); m != nil {
		// a nested "[l:c]" from unmarshalList is the more precise position
		if inner := posRE.FindStringSubmatch(m[3]); inner != nil {
			m = inner
		}
		fmt.Sscan(m[1], &e.Line)
		fmt.Sscan(m[2], &e.Col)
		e.Msg = m[3]
	}
	if strings.Contains(e.Msg, "unknown field") {
		e.Msg += ": check the spelling; the keys are in docs/sweeps.md"
	}
	e.Msg = yamlmsg.Plain(e.Msg)
	return e
}

// applyMeasure applies a block's settings to o; at places an error at a
// key's value.
func applyMeasure(o profiler.Options, m MeasureYAML, at func(field, msg string) error) (profiler.Options, error) {
	var given []profiler.SettingValue
	for _, key := range profiler.SettingKeys() { // table order: the first bad key is reported first
		v, ok := m[key]
		if !ok || v == nil {
			continue
		}
		st, _ := profiler.SettingByKey(key)
		given = append(given, profiler.SettingValue{Setting: st, Text: v.Text})
	}
	if err := profiler.ApplySettings(&o, given); err != nil {
		var se *profiler.SettingError
		if !errors.As(err, &se) {
			return o, err
		}
		return o, at(se.Setting.Key, se.Message(func(s profiler.Setting) string { return s.Key }))
	}
	return o, nil
}

// splitNames lets one key set several dims to the same value: "Lq,Lk: [512, 1024]".
func splitNames(key string) []string {
	parts := strings.Split(key, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

type axis struct {
	kind   string   // knob, dim or flag
	key    string   // as the file writes it: knobs.BQ, dims.Lq,Lk
	names  []string // one axis may set several names to the same value
	values []int
}

// sweepCtx is how expand names places in the file.
type sweepCtx struct {
	file  string
	at    func(sub, msg string) error     // an InputError at the sweep's sub-path
	pos   func(sub string) exprPos        // where an expression starts
	field func(sub string) string         // "sweeps[0]." + sub
	item  func(list string, i int) string // the sub-path of a list's item i: "where[1]", or "where" for one value written alone
}

// exprStart is the line and column of the first character of the string
// at path (after its opening quote).
func exprStart(f *ast.File, path string) exprPos {
	n := nodeAt(f, path)
	if n == nil || n.GetToken() == nil {
		return exprPos{}
	}
	tk := n.GetToken()
	at := exprPos{line: tk.Position.Line, col: tk.Position.Column}
	if sn, ok := n.(*ast.StringNode); ok && sn.Token != nil && strings.Contains(sn.Token.Type.String(), "Quote") {
		at.col++
	}
	return at
}

// nodeAt is the node at path in f, or nil.
func nodeAt(f *ast.File, path string) ast.Node {
	if f == nil {
		return nil
	}
	p, err := yaml.PathString(path)
	if err != nil {
		return nil
	}
	n, err := p.FilterFile(f)
	if err != nil {
		return nil
	}
	return n
}

// checkEntry checks one item of `sweeps:` against its family's schema and
// compiles its filters.
func checkEntry(s SweepYAML, base profiler.Options, sx sweepCtx) (*entry, error) {
	at := sx.at
	f, err := profiler.Lookup(s.Kernel)
	if err != nil {
		if s.Kernel == "" {
			return nil, at("kernel", "missing `kernel:`: name one of the kernels `mltop list` prints")
		}
		return nil, at("kernel", err.Error())
	}
	sc := f.Schema()
	opt, err := applyMeasure(base, s.Options, func(field, msg string) error { return at("options."+field, msg) })
	if err != nil {
		return nil, err
	}
	if s.DTypes != nil && len(s.DTypes) == 0 { // `dtypes: []`; no value at all (nil) is the family's first
		return nil, at("dtypes", fmt.Sprintf("empty list: give at least one value (%s), or leave dtypes out for %s's first, %s", profiler.JoinDTypes(sc.DTypes), s.Kernel, sc.DTypes[0]))
	}
	var dtypes []profiler.DType
	for i, d := range s.DTypes {
		dt, err := profiler.ParseDType(d)
		if err == nil && !slices.Contains(sc.DTypes, dt) {
			err = fmt.Errorf("%s does not support dtype %q: use one of %s", s.Kernel, d, profiler.JoinDTypes(sc.DTypes))
		}
		if err != nil {
			return nil, at(sx.item("dtypes", i), err.Error())
		}
		dtypes = append(dtypes, dt)
	}
	if len(dtypes) == 0 {
		dtypes = []profiler.DType{sc.DTypes[0]}
	}
	if err := checkNames(s, sc, at); err != nil {
		return nil, err
	}
	// Dims outermost and knobs innermost, so consecutive specs share a
	// shape and reuse the inputs and the reference.
	var axes []axis
	for _, key := range slices.Sorted(maps.Keys(s.Dims)) {
		ax, err := intAxis("dim", key, s.Dims[key], s.Kernel, sc, at)
		if err != nil {
			return nil, err
		}
		axes = append(axes, ax)
	}
	for _, key := range slices.Sorted(maps.Keys(s.Flags)) {
		if len(s.Flags[key]) == 0 {
			return nil, at("flags."+key, "empty list: give at least one value (true, false or [false, true])")
		}
		var vals []int
		for _, b := range s.Flags[key] {
			vals = append(vals, map[bool]int{false: 0, true: 1}[b])
		}
		axes = append(axes, axis{kind: "flag", key: "flags." + key, names: []string{key}, values: vals})
	}
	// Off-schema knob values fail the file like dims; values the family's
	// rules reject in combination become invalid rows when run.
	for _, key := range slices.Sorted(maps.Keys(s.Knobs)) {
		ax, err := intAxis("knob", key, s.Knobs[key], s.Kernel, sc, at)
		if err != nil {
			return nil, err
		}
		axes = append(axes, ax)
	}
	var filters []*expr.Program
	for i, w := range s.Where {
		sub := sx.item("where", i)
		e, err := compileWhere(sx.file, sx.field(sub), w, s.Kernel, sc, sx.pos(sub))
		if err != nil {
			return nil, err
		}
		filters = append(filters, e)
	}

	return &entry{kernel: s.Kernel, sc: sc, opt: opt, dtypes: dtypes, axes: axes, filters: filters, sx: sx}, nil
}

// intAxis checks one `dims:` or `knobs:` entry (a key may name several
// params, "Lq,Lk") against the schema and makes it a sweep axis.
func intAxis(kind, key string, vals IntList, kernel string, sc profiler.Schema, at func(sub, msg string) error) (axis, error) {
	field := kind + "s." + key
	params := sc.Knobs
	if kind == "dim" {
		params = sc.Dims
	}
	names := splitNames(key)
	for _, n := range names {
		p, ok := profiler.FindParam(params, n)
		if !ok { // checkNames reports these first, all of them
			return axis{}, at(field, unknownParam(kind, n, kernel, sc))
		}
		for _, v := range vals {
			if err := p.Check(v); err != nil {
				return axis{}, at(field, err.Error())
			}
		}
	}
	if len(vals) == 0 {
		return axis{}, at(field, "empty list: give at least one value")
	}
	return axis{kind: kind, key: field, names: names, values: vals}, nil
}
