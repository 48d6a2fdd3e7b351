package user

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// Family is a kernel family defined by a manifest.
type Family struct {
	path, dir    string
	doc          *doc
	m            manifestYAML
	src          map[string]source // "cuda", "metal"
	includes     map[string]string // by the name the sources include them with
	includePaths []string
	dataPaths    []string // the .npy files inits read
	schema       profiler.Schema
	vars         expr.Vars
	rules        []*expr.Program
	bufs         []ubuf
	disps        []udisp
	values       []uvalue
	flops, bytes *expr.Program
	check        checker
	includeDirs  []string             // the manifest's include_dirs, as paths
	defines      []udefine            // the manifest's defines:
	prep         map[string]*prepared // per source language: the scanned source and how names reach it
	consts       []fconst             // Metal function constants (metal_entry.go)
	mlx          *mlxKernel           // an MLX-style body (mlx.go)
	mlxUnfilled  string               // the written MLX kernel with its {{NAME}} placeholders kept (UnfilledSource)
	version      string               // hash of the manifest and the files it names
	nested       bool                 // loaded as another manifest's check: kernel (its own check is not loaded)
	impliedShape []ImpliedShapeKnob   // knobs a buffer's shape makes shape knobs (shapeknobs.go)
	srcConsts    map[string]*srcConst // the sources' integer constants by name (srcconsts.go)
	usedConsts   []string             // those the manifest's expressions use, in order of first use
}

// Version identifies the family's definition (profiler.Versioned): it
// changes when the manifest, a source, an include or ref.py changes.
func (f *Family) Version() string { return f.version }

var _ profiler.Family = (*Family)(nil)

// Name is the manifest's name.
func (f *Family) Name() string { return f.m.Name }

// Doc is the manifest's description and where it came from.
func (f *Family) Doc() string {
	d := f.m.Description
	if d == "" {
		d = "user kernel"
	}
	return d + " (" + f.path + ")"
}

// Path is the manifest's path.
func (f *Family) Path() string { return f.path }

// Source is the text of the manifest's source in lang ("cuda" or
// "metal"), "" when it names none.
func (f *Family) Source(lang string) string { return f.src[lang].code }

// SourceWithHeaders is lang's source and the local headers it includes as
// one text, the source alone when it includes none: where an entry kept in
// a header (mmcv's nms_cuda in nms_cuda_kernel.cuh) declares its shared
// arrays.
func (f *Family) SourceWithHeaders(lang string) string {
	if p := f.prep[lang]; p != nil && len(p.units) > 1 {
		return joinUnits(p.units).code
	}
	return f.Source(lang)
}

// Files are the files the family was built from: the manifest, its
// sources and includes (what a watcher watches).
func (f *Family) Files() []string {
	out := []string{f.path}
	for _, lang := range []string{"cuda", "metal"} {
		if s, ok := f.src[lang]; ok {
			out = append(out, s.path)
		}
	}
	out = append(out, f.includePaths...)
	out = append(out, f.dataPaths...)
	for _, h := range f.localHeaders() {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return append(out, f.check.files()...)
}

// Schema is the manifest's knobs, dims, flags and dtypes.
func (f *Family) Schema() profiler.Schema { return f.schema }

// Tolerance is the default for the dtype; buffers' `tol:` override it.
func (f *Family) Tolerance(d profiler.DType) profiler.Tolerance {
	return profiler.DefaultTolerances[d]
}

// valuesOf names the values the expressions' names have in e, each once,
// in order: "cols=1001, WG=256" ("" when they name none).
func valuesOf(e map[string]any, ps ...*expr.Program) string {
	var parts []string
	seen := map[string]bool{}
	for _, p := range ps {
		for _, n := range p.Names() {
			if !seen[n] {
				seen[n] = true
				parts = append(parts, fmt.Sprintf("%s=%v", n, e[n]))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// forValues is " for N=16" naming the values the programs read, "" when none.
func forValues(e map[string]any, ps ...*expr.Program) string {
	if v := valuesOf(e, ps...); v != "" {
		return " for " + v
	}
	return ""
}

// Validate applies the manifest's rules, then the limits every plan must
// respect (positive grids, threads and TGM within the device's limits).
func (f *Family) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := f.rulesHold(s); err != nil {
		return err
	}
	_, err := f.plan(s, dev)
	return err
}

// rulesHold says which of the manifest's rules does not hold at spec s.
func (f *Family) rulesHold(s profiler.Spec) error {
	e, err := f.env(s)
	if err != nil {
		return err
	}
	for _, r := range f.rules {
		ok, err := r.Bool(e)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("rule '%s' (%s) does not hold%s", r.Source(), r.Where(), forValues(e, r))
		}
	}
	return nil
}

// Plan evaluates buffers, dispatches, TGM items and the work model.
func (f *Family) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	return f.plan(s, dev)
}

func (f *Family) plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	e, err := f.env(s)
	if err != nil {
		return nil, err
	}
	p := &profiler.Plan{Notes: slices.Clone(f.m.Notes)}
	switch f.check.kind() {
	case "none":
		p.Notes = append(p.Notes, "check: none — outputs are not verified (status unchecked)")
	case "kernel":
		p.Notes = append(p.Notes, fmt.Sprintf("check: kernel %s (%s), run at f32 on the same device and inputs", f.check.kernel.Name(), f.check.kernel.path))
	}
	if f.check.kind() == "python" {
		if c, err := f.pyCall(e, s.DType, 0, 0); err == nil {
			if note := f.pythonNote(c); note != "" {
				p.Notes = append(p.Notes, note)
			}
		}
	}
	for _, b := range f.bufs {
		bs, err := f.bufferSpec(b, s, e)
		if err != nil {
			return nil, err
		}
		if b.growth != nil {
			if _, err := reductionLength(b, e); err != nil {
				return nil, err
			}
		}
		p.Buffers = append(p.Buffers, bs)
	}
	lang := sourceFor(dev)
	if err := f.symbolsOn(lang); err != nil {
		return nil, err
	}
	_, ok := f.src[lang]
	if !ok && dev.Backend == "cpu" {
		for _, l := range []string{"cuda", "metal"} { // the CPU backend refuses either with a clear message
			if _, ok = f.src[l]; ok {
				lang = l
				break
			}
		}
	}
	if !ok {
		return nil, &profiler.BackendRefusal{Msg: fmt.Sprintf("%s has no %s source for the %s backend: add `sources: {%s: kernel.%s}` to %s", f.Name(), lang, dev.Backend, lang, map[string]string{"cuda": "cu", "metal": "metal"}[lang], f.path)}
	}
	if err := f.typesOn(lang, p.Buffers); err != nil {
		return nil, err
	}
	prog, err := f.program(s, lang)
	if err != nil {
		return nil, err
	}
	p.Notes = append(p.Notes, f.injectionNotes(lang)...)
	p.Notes = append(p.Notes, f.StructNotes(lang)...)
	var consts []profiler.FunctionConstant
	if lang == "metal" {
		if f.mlx != nil {
			if prog, err = f.mlxProgram(s, e); err != nil {
				return nil, err
			}
		}
		if consts, err = f.functionConstants(e, prog); err != nil {
			return nil, err
		}
	}
	for _, d := range f.disps {
		pd, err := f.dispatch(d, s, e, dev, lang, prog)
		if err != nil {
			return nil, err
		}
		pd.Program.Constants = consts
		if standIn(dev) && d.usesDevice(f) {
			p.Notes = append(p.Notes, StandInNote(d.name))
		}
		if d.timed {
			p.Dispatches = append(p.Dispatches, pd)
		} else {
			p.Setup = append(p.Setup, pd)
		}
	}
	if f.flops != nil {
		v, err := f.flops.Float(e)
		if err != nil {
			return nil, err
		}
		p.FLOPs = v
	}
	if f.bytes != nil {
		v, err := f.bytes.Float(e)
		if err != nil {
			return nil, err
		}
		p.Bytes = v
	} else {
		var note string
		p.Bytes, note = defaultBytes(p.Buffers)
		p.Notes = append(p.Notes, note+symbolsNotCounted(p))
	}
	return p, nil
}

// sourceFor picks the source language for a device: Metal's on Metal,
// CUDA's elsewhere.
func sourceFor(dev profiler.DeviceInfo) string {
	if dev.Backend == "metal" {
		return "metal"
	}
	return "cuda"
}

func (f *Family) bufferSpec(b ubuf, s profiler.Spec, e map[string]any) (profiler.BufferSpec, error) {
	dt := b.dtype
	if dt == "" {
		dt = s.DType
	}
	n := int64(1)
	for _, p := range b.shape {
		v, err := p.Int(e)
		if err != nil {
			return profiler.BufferSpec{}, err
		}
		if v <= 0 {
			return profiler.BufferSpec{}, fmt.Errorf("buffer %s: shape %s '%s' (%s) is %d%s: every extent must be positive", b.name, p.Where().Field, p.Source(), p.Where(), v, forValues(e, p))
		}
		if n > (1<<62)/v {
			return profiler.BufferSpec{}, fmt.Errorf("buffer %s: the shape overflows", b.name)
		}
		n *= v
	}
	bs := profiler.BufferSpec{Name: b.name, Role: b.role(), Type: dt, Elems: n, Init: b.init.kind, IntBits: slotBits(dt, b.init.kind)}
	if b.symbol != nil {
		bs.Symbol = b.symbol.name
		if err := b.checkSymbolSize(bs, e); err != nil {
			return bs, err
		}
	}
	if b.init.kind == profiler.InitArange {
		if err := exactInts(dt, 0, float64(n-1)); err != nil {
			return bs, fmt.Errorf("buffer %s: arange over %d elements: %v", b.name, n, err)
		}
	}
	lo, hi, err := b.init.values(e)
	if err != nil {
		return bs, fmt.Errorf("buffer %s: %w", b.name, err)
	}
	switch b.init.kind {
	case profiler.InitNormal:
		bs.Mean, bs.Scale = lo, hi
		bs.Outliers, bs.OutlierScale = b.init.outliers, b.init.outlierScale
		if bs.Scale == 0 { // N(m, 0) is the constant m (Fill reads Scale 0 as 1)
			bs.Init, bs.Lo, bs.Hi = profiler.InitUniform, bs.Mean, bs.Mean
		}
	case profiler.InitData:
		sh, err := f.shapeOf(b, e)
		if err != nil {
			return bs, err
		}
		if !slices.Equal(sh, b.init.shape) {
			return bs, fmt.Errorf("buffer %s: %s holds an array of shape %v, but the buffer's shape is %v for %s: save an array of the buffer's shape, or change the spec", b.name, b.init.path, b.init.shape, sh, shapeValues(b, e))
		}
		bs.Data = b.init.data
	case profiler.InitUniform, profiler.InitInts:
		bs.Lo, bs.Hi = lo, hi
	}
	return bs, nil
}

// typesOn refuses buffers whose type language lang has none of: Apple
// GPUs have no double, so an f64 buffer cannot run on Metal.
func (f *Family) typesOn(lang string, bufs []profiler.BufferSpec) error {
	for _, b := range bufs {
		if lang == "metal" && b.Type == profiler.F64 {
			return fmt.Errorf("buffer %s is f64, and Metal has no double (Apple GPUs have no 64-bit float): run the CUDA source, or give the buffer `dtype: f32` and a Metal kernel that takes float", b.Name)
		}
	}
	return nil
}

// CTypes are the C types the dtype name (T) stands for per dtype and language.
var CTypes = map[string]map[profiler.DType]string{
	"cuda":  {profiler.F32: "float", profiler.F16: "__half", profiler.BF16: "__nv_bfloat16"},
	"metal": {profiler.F32: "float", profiler.F16: "half", profiler.BF16: "bfloat"},
}

// DTypeCodes are the values of DTYPE.
var DTypeCodes = map[profiler.DType]int{profiler.F32: 0, profiler.F16: 1, profiler.BF16: 2}

func (f *Family) dispatch(d udisp, s profiler.Spec, e map[string]any, dev profiler.DeviceInfo, lang string, prog profiler.Program) (profiler.Dispatch, error) {
	entry, err := d.entry.render(e, f.dtypeName(), f.cType(lang, s.DType))
	if err != nil {
		return profiler.Dispatch{}, fmt.Errorf("dispatch %s: %w", d.name, err)
	}
	b, entry, err := overloadFor(d.bind[lang], s.DType, entry)
	if err != nil {
		return profiler.Dispatch{}, fmt.Errorf("dispatch %s: %w", d.name, err)
	}
	prog.Entry = entry
	pd := profiler.Dispatch{Name: d.name, Program: prog, Cooperative: d.cooperative}
	if d.cooperative && lang == "metal" {
		return pd, coopMetalError(d.name)
	}
	// threads and threadgroup memory first: max_coresident, which the
	// grid and the args may read, follows from them
	if err := extents(&pd.Group, d.threads, d.name, e); err != nil {
		return pd, err
	}
	if dev.MaxThreadsPerGroup > 0 && pd.Threads() > dev.MaxThreadsPerGroup {
		return pd, fmt.Errorf("dispatch %s: %d threads per group (threads %v) but %s allows %d: lower the threads expression", d.name, pd.Threads(), pd.Group, dev.Name, dev.MaxThreadsPerGroup)
	}
	if err := f.threadgroupMemory(&pd, d, e, dev); err != nil {
		return pd, err
	}
	e = withDevice(e, dev, &pd)
	if err := f.bindArgs(&pd, d, b, s.DType, e); err != nil {
		return pd, err
	}
	if lang == "metal" {
		if err := metalFits(pd, d.bind[lang].sig, f.dtypeName(), CTypes[lang][s.DType]); err != nil {
			return pd, err
		}
		if err := metalTemplateFits(prog, entry); err != nil {
			return pd, fmt.Errorf("dispatch %s: %w (entry: %s)", d.name, err, d.entry.text)
		}
	}
	if err := extents(&pd.Grid, d.grid, d.name, e); err != nil {
		return pd, err
	}
	return pd, nil
}

// extents evaluates a dispatch's grid or threads: each at least 1 and
// within a 32-bit launch extent.
func extents(dst *[3]int, ps [3]*expr.Program, name string, e map[string]any) error {
	for k, p := range ps {
		v, err := p.Int(e)
		if err != nil {
			return err
		}
		if v <= 0 {
			return fmt.Errorf("dispatch %s: %s '%s' (%s) is %d%s: a launch needs at least 1 in every dimension", name, p.Where().Field, p.Source(), p.Where(), v, forValues(e, p))
		}
		if v > 1<<31-1 {
			return fmt.Errorf("dispatch %s: %s '%s' (%s) is %d, beyond a 32-bit launch extent", name, p.Where().Field, p.Source(), p.Where(), v)
		}
		dst[k] = int(v)
	}
	return nil
}

// dynamicTGMItem names the budget line of a dispatch's dynamic_tgm.
const dynamicTGMItem = "dynamic"

// threadgroupMemory sets the dispatch's TGM items and dynamic TGM and
// holds their sum against the device's limit. The dynamic_tgm bytes are
// a budget item of their own (dynamicTGMItem), beside the tgm: items (the
// static arrays), so that the budget, the occupancy estimate and the CSV's
// tgm figures count what the launch asks for.
func (f *Family) threadgroupMemory(pd *profiler.Dispatch, d udisp, e map[string]any, dev profiler.DeviceInfo) error {
	var progs []*expr.Program
	for _, t := range d.tgm {
		v, err := t.bytes.Int(e)
		if err != nil {
			return err
		}
		if v < 0 {
			return fmt.Errorf("dispatch %s: TGM item %s is %d bytes", d.name, t.name, v)
		}
		pd.TGM = append(pd.TGM, profiler.TGMItem{Name: t.name, Bytes: int(v), Note: t.note})
		progs = append(progs, t.bytes)
	}
	var fixes []string
	if len(d.tgm) > 0 {
		fixes = append(fixes, "the tgm: items' bytes")
	}
	if d.dynTGM != nil {
		v, err := d.dynTGM.Int(e)
		if err != nil {
			return err
		}
		if v < 0 {
			return fmt.Errorf("dispatch %s: dynamic_tgm '%s' (%s) is %d bytes%s: it must be 0 or more", d.name, d.dynTGM.Source(), d.dynTGM.Where(), v, forValues(e, d.dynTGM))
		}
		pd.DynamicTGM = int(v)
		if v > 0 {
			pd.TGM = append(pd.TGM, profiler.TGMItem{Name: dynamicTGMItem, Bytes: int(v), Note: "dynamic_tgm: " + d.dynTGM.Source()})
		}
		progs = append(progs, d.dynTGM)
		fixes = append(fixes, fmt.Sprintf("dynamic_tgm '%s'", d.dynTGM.Source()))
	}
	limit := dev.TGMPerGroupOptIn
	if limit == 0 {
		limit = dev.TGMPerGroup
	}
	tot := pd.TGMBytes()
	if limit <= 0 || tot <= limit {
		return nil
	}
	fix := "lower " + strings.Join(fixes, " or ")
	if knobs := valuesOf(e, progs...); knobs != "" {
		what := "it depends"
		if len(fixes) > 1 {
			what = "they depend"
		}
		fix += fmt.Sprintf(", or what %s on (%s)", what, knobs)
	}
	return fmt.Errorf("dispatch %s: threadgroup memory %d B (%s) is over %s's %d B per group: %s", d.name, tot, pd.TGMParts(), dev.Name, limit, fix)
}

// Rules are the manifest's rules as written (mltop list shows them).
func (f *Family) Rules() []string { return slices.Clone(f.m.Rules) }
