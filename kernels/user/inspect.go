package user

import (
	"fmt"
	"slices"

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
}

// DispatchInfos lists the manifest's dispatches in order.
func (f *Family) DispatchInfos() []DispatchInfo {
	out := make([]DispatchInfo, len(f.disps))
	for i, d := range f.disps {
		di := DispatchInfo{Index: i, Name: d.name, Entry: d.entry.text}
		for _, t := range d.tgm {
			di.TGM = append(di.TGM, t.name)
		}
		out[i] = di
	}
	return out
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
// at their defaults, each dim lowered to the smallest value (not above its
// default) that its schema allows and for which the rules and the plan
// still hold. changed lists the dims lowered, "N=1024→16".
func (f *Family) TinySpec(dt profiler.DType) (s profiler.Spec, changed []string, err error) {
	s = profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.schema)
	dev := profiler.DeviceInfo{Backend: "cpu", Name: "mltop check"}
	if err := f.Validate(s, dev); err != nil {
		return s, nil, fmt.Errorf("the default spec %s is not valid: %w", s, err)
	}
	for _, p := range f.schema.Dims {
		def := s.Dims[p.Name]
		for _, v := range p.Choices() {
			if v >= def {
				break
			}
			try := s.Clone()
			try.Dims[p.Name] = v
			if f.Validate(try, dev) == nil {
				s = try
				changed = append(changed, fmt.Sprintf("%s=%d→%d", p.Name, def, v))
				break
			}
		}
	}
	return s, changed, nil
}
