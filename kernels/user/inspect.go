package user

import (
	"fmt"
	"slices"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// This file is what `mltop check` (kernels/user/lint) reads of a loaded
// manifest beyond the profiler.Family methods.

// DispatchInfo is one dispatch as the manifest writes it.
type DispatchInfo struct {
	Index int      // position in dispatches:
	Name  string   // the dispatch's name (its entry when unnamed)
	Entry string   // the kernel's name in the sources
	TGM   []string // the names of its tgm: items
	// DynamicTGM: the dispatch sets dynamic_tgm (an extern shared array's size)
	DynamicTGM bool
}

// DispatchInfos lists the manifest's dispatches in order.
func (f *Family) DispatchInfos() []DispatchInfo {
	out := make([]DispatchInfo, len(f.disps))
	for i, d := range f.disps {
		di := DispatchInfo{Index: i, Name: d.name, Entry: d.entry.text, DynamicTGM: d.dynTGM != nil}
		for _, t := range d.tgm {
			di.TGM = append(di.TGM, t.name)
		}
		out[i] = di
	}
	return out
}

// EntryAt is dispatch i's entry in lang's source as the manifest bound
// it: its signature and the file that defines it (the source, or one of
// the local headers it includes); ok is false when there is none.
func (f *Family) EntryAt(lang string, i int) (sig csrc.Signature, file string, ok bool) {
	if i < 0 || i >= len(f.disps) {
		return sig, "", false
	}
	b, ok := f.disps[i].bind[lang]
	if !ok || b.file == "" {
		return sig, "", false
	}
	return b.sig, b.file, true
}

// SourcePath is the path of the manifest's source in lang ("cuda" or
// "metal"), "" when it names none.
func (f *Family) SourcePath(lang string) string { return f.src[lang].path }

// Languages are the source languages the manifest names, sorted.
func (f *Family) Languages() []string { return slices.Sorted(mapsKeys(f.src)) }

// Pos is the line and column of a YAML path ("$.dispatches[0].tgm[1]") in
// the manifest; 0, 0 when unknown.
func (f *Family) Pos(yamlPath string) (line, col int) {
	if f.doc == nil {
		return 0, 0
	}
	l, c, _ := f.doc.pos(yamlPath)
	return l, c
}

// TinySpec is the spec `mltop check` runs the reference on: knobs and flags
// at their defaults, each dim (in schema order) lowered, not above its
// default, to the smallest value ≥ 2 that its schema allows, that no dim
// before it took, and for which the rules and the plan still hold; failing
// that to a value ≥ 2 another dim took, and only then (from a default
// above 64) to 1. Dims move one at a time: a rule tying two dims keeps
// them at their defaults. Distinct dims
// make a transposed result or a reduction over the wrong axis come back
// in the wrong shape. changed lists the dims lowered, "N=1024→3".
func (f *Family) TinySpec(dt profiler.DType) (s profiler.Spec, changed []string, err error) {
	s = profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.schema)
	dev := profiler.DeviceInfo{Backend: "cpu", Name: "mltop check"}
	if err := f.Validate(s, dev); err != nil {
		return s, nil, fmt.Errorf("the default spec %s is not valid: %w", s, err)
	}
	used := map[int]bool{}
	for _, p := range f.schema.Dims {
		def := s.Dims[p.Name]
		for _, v := range tinyCandidates(p, def, used) {
			try := s.Clone()
			try.Dims[p.Name] = v
			if f.Validate(try, dev) == nil {
				s = try
				changed = append(changed, fmt.Sprintf("%s=%d→%d", p.Name, def, v))
				break
			}
		}
		used[s.Dims[p.Name]] = true
	}
	return s, changed, nil
}

// tinyCandidates are the values below def that p allows, in the order
// TinySpec tries them: ≥ 2 and not used, ≥ 2 and used, then 1 (when def
// is above 64). At most 64
// of each kind (each try plans the spec).
func tinyCandidates(p profiler.Param, def int, used map[int]bool) []int {
	var fresh, taken []int
	one := false
	consider := func(v int) {
		switch {
		case v >= def || p.Check(v) != nil:
		case v == 1:
			one = true
		case used[v]:
			if len(taken) < 64 {
				taken = append(taken, v)
			}
		case len(fresh) < 64:
			fresh = append(fresh, v)
		}
	}
	if len(p.Values) > 0 {
		for _, v := range slices.Sorted(slices.Values(p.Values)) {
			consider(v)
		}
	} else {
		step := max(p.Multiple, 1)
		for v := max(p.Min, 1); v < def && len(fresh) < 64; v++ {
			if v%step == 0 || v == 1 {
				consider(v)
			}
		}
	}
	out := append(fresh, taken...)
	if one && def > 64 { // a small default keeps its shape rather than collapse to 1
		out = append(out, 1)
	}
	return out
}

// DTypeName is the name the sources and buffers give the spec's dtype
// ("T" unless the manifest's dtype_name says otherwise).
func (f *Family) DTypeName() string { return f.dtypeName() }

// DTypeBuffers are the buffers whose dtype is the spec's (dtype: T, the
// dtype's name, or none given), in manifest order.
func (f *Family) DTypeBuffers() []string {
	var out []string
	for _, b := range f.bufs {
		if b.dtype == "" {
			out = append(out, b.name)
		}
	}
	return out
}
