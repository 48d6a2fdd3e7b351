package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

type fieldKind int

const (
	kindKnob fieldKind = iota
	kindDType
	kindDim
	kindFlag
)

func (k fieldKind) String() string {
	return [...]string{"knob", "dtype", "dim", "flag"}[k]
}

// field is one editable line of the editor, built from the family's schema.
type field struct {
	kind  fieldKind
	name  string
	param profiler.Param     // knobs and dims
	flag  profiler.FlagParam // flags
	types []profiler.DType   // dtype
}

// fieldsOf lists a schema's editable values: knobs first (the reason the
// tool exists), then dtype, dims and flags.
func fieldsOf(sc profiler.Schema) []field {
	var fs []field
	for _, p := range sc.Knobs {
		fs = append(fs, field{kind: kindKnob, name: p.Name, param: p})
	}
	if len(sc.DTypes) > 0 {
		fs = append(fs, field{kind: kindDType, name: "dtype", types: sc.DTypes})
	}
	for _, p := range sc.Dims {
		fs = append(fs, field{kind: kindDim, name: p.Name, param: p})
	}
	for _, f := range sc.Flags {
		fs = append(fs, field{kind: kindFlag, name: f.Name, flag: f})
	}
	return fs
}

// value renders the field's current value in s.
func (f field) value(s profiler.Spec) string {
	switch f.kind {
	case kindKnob:
		return strconv.Itoa(s.Knobs[f.name])
	case kindDim:
		return strconv.Itoa(s.Dims[f.name])
	case kindDType:
		return string(s.DType)
	default:
		if s.Flags[f.name] {
			return "on"
		}
		return "off"
	}
}

// allowed describes what the field accepts, for the status line.
func (f field) allowed() string {
	switch f.kind {
	case kindKnob, kindDim:
		return f.param.Describe()
	case kindDType:
		var ts []string
		for _, t := range f.types {
			ts = append(ts, string(t))
		}
		return "{" + strings.Join(ts, ", ") + "}"
	}
	return "on/off"
}

func (f field) doc() string {
	if f.kind == kindFlag {
		return f.flag.Doc
	}
	if f.kind == kindDType {
		return "storage type of the buffers (math in f32)"
	}
	return f.param.Doc
}

// sweepable fields step through a list of values.
func (f field) sweepable() bool { return f.kind == kindKnob || f.kind == kindDim }

// sweepValues are the values `s` measures: the allowed choices.
func (f field) sweepValues() []int { return f.param.Choices() }

// step moves the field's value by dir (−1 or +1) through its allowed values.
// A value not in the list (typed by hand) steps to the nearest one in dir.
// A dim goes through the schema's Set, so the dims that follow it and were
// tied to it (Hkv follows H) move along.
func (f field) step(s *profiler.Spec, dir int, sc profiler.Schema) {
	switch f.kind {
	case kindFlag:
		s.Flags[f.name] = !s.Flags[f.name]
	case kindDType:
		i := slices.Index(f.types, s.DType)
		i = clamp(i+dir, 0, len(f.types)-1)
		if len(f.types) > 0 {
			s.DType = f.types[i]
		}
	case kindKnob:
		s.Knobs[f.name] = stepInt(f.param.Choices(), s.Knobs[f.name], dir)
	case kindDim:
		_ = s.Set(sc, f.name, stepInt(f.param.Choices(), s.Dims[f.name], dir))
	}
}

// stepInt returns the next value after cur in dir within the sorted choices,
// staying at the ends.
func stepInt(choices []int, cur, dir int) int {
	if len(choices) == 0 {
		return cur
	}
	if dir > 0 {
		for _, c := range choices {
			if c > cur {
				return c
			}
		}
		return choices[len(choices)-1]
	}
	for i := len(choices) - 1; i >= 0; i-- {
		if choices[i] < cur {
			return choices[i]
		}
	}
	return choices[0]
}

// setTyped assigns a typed value. The value is kept even when the schema
// rejects it, so the editor can show it in red with the reason.
func (f field) setTyped(s *profiler.Spec, text string, sc profiler.Schema) error {
	text = strings.TrimSpace(text)
	switch f.kind {
	case kindFlag:
		switch strings.ToLower(text) {
		case "1", "on", "true", "yes", "y":
			s.Flags[f.name] = true
		case "0", "off", "false", "no", "n":
			s.Flags[f.name] = false
		default:
			return fmt.Errorf("%s=%q: type on or off", f.name, text)
		}
		return nil
	case kindDType:
		for _, t := range f.types {
			if string(t) == text {
				s.DType = t
				return nil
			}
		}
		return fmt.Errorf("dtype %q is not supported here: use one of %s", text, f.allowed())
	}
	v, err := strconv.Atoi(text)
	if err != nil {
		return fmt.Errorf("%s=%q is not a whole number: type a value in %s", f.name, text, f.allowed())
	}
	if f.kind == kindDim {
		_ = s.Set(sc, f.name, v) // a tied follower moves along
	} else {
		s.Knobs[f.name] = v
	}
	return nil
}

// blames reports whether an error message names this field ("BQ=…"), so the
// editor can paint the culprit red. The name must start a word: "B=" must not
// match inside "BQ=" or "WB=".
func (f field) blames(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	needle := f.name + "="
	if f.kind == kindDType {
		needle = "dtype"
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], needle)
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 || !isWordByte(msg[at-1]) {
			return true
		}
		i = at + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// editor edits the selected family's spec: one line per field, the
// preview (budget and occupancy summary, or the reason the family rejects
// the spec, never cut) on top. Each family keeps its own edited spec.
type editor struct {
	th      theme
	dev     profiler.DeviceInfo
	fam     profiler.Family
	specs   map[string]profiler.Spec // the edited spec of each family
	fields  []field
	cur     int
	edited  string // the field changed last: blamed when an error names none
	preview run.Preview
	// fixed are, per family, the knobs `f` fixed: T (tune) leaves them at
	// their values and searches the others.
	fixed map[string]map[string]bool
}

// editorAction is what a key asks of the root beyond the editor's state.
type editorAction int

const (
	actionNone editorAction = iota
	actionType              // open the value prompt on the current field
)

func newEditor(th theme, dev profiler.DeviceInfo) editor {
	return editor{th: th, dev: dev, specs: map[string]profiler.Spec{}, fixed: map[string]map[string]bool{}}
}

// isFixed says whether `f` fixed the selected family's knob name.
func (e editor) isFixed(name string) bool {
	return e.fam != nil && e.fixed[e.fam.Name()][name]
}

// toggleFixed fixes the selected family's knob name, or frees it again;
// it returns whether the knob is fixed now.
func (e *editor) toggleFixed(name string) bool {
	fam := e.fam.Name()
	if e.fixed[fam] == nil {
		e.fixed[fam] = map[string]bool{}
	}
	e.fixed[fam][name] = !e.fixed[fam][name]
	return e.fixed[fam][name]
}

// tuneKnobs splits the selected family's knobs into those T searches
// (free) and those it keeps (fixed), in schema order.
func (e editor) tuneKnobs() (free []profiler.Param, fixed []string) {
	if e.fam == nil {
		return nil, nil
	}
	for _, p := range e.fam.Schema().Knobs {
		if e.isFixed(p.Name) {
			fixed = append(fixed, p.Name)
		} else {
			free = append(free, p)
		}
	}
	return free, fixed
}

// loadSpec makes s the edited spec of its family (a tuning's winner:
// its shape as tuned, its knobs as found), whether or not that family is
// the one selected now, so the next run of it is s.
func (e *editor) loadSpec(s profiler.Spec) {
	e.specs[s.Kernel] = s.Clone()
	if e.fam != nil && e.fam.Name() == s.Kernel {
		e.refresh()
	}
}

func (e *editor) setFamily(f profiler.Family) {
	if f == nil || (e.fam != nil && e.fam.Name() == f.Name()) {
		return
	}
	e.fam = f
	sc := f.Schema()
	if _, ok := e.specs[f.Name()]; !ok {
		e.specs[f.Name()] = profiler.Spec{Kernel: f.Name()}.WithDefaults(sc)
	}
	e.fields = fieldsOf(sc)
	e.cur = clamp(e.cur, 0, max(0, len(e.fields)-1))
	e.refresh()
}

func (e editor) spec() profiler.Spec {
	if e.fam == nil {
		return profiler.Spec{}
	}
	return e.specs[e.fam.Name()]
}

func (e editor) field() (field, bool) {
	if len(e.fields) == 0 {
		return field{}, false
	}
	return e.fields[e.cur], true
}

func (e *editor) setSpec(s profiler.Spec) {
	if f, ok := e.field(); ok {
		e.edited = f.name
	}
	if e.fam != nil {
		e.specs[e.fam.Name()] = s
		e.refresh()
	}
}

func (e *editor) refresh() { e.preview = run.MakePreview(e.spec(), e.dev) }

// setTyped sets the current field to a typed value.
func (e *editor) setTyped(text string) error {
	f, ok := e.field()
	if !ok {
		return nil
	}
	s := e.spec().Clone()
	if err := f.setTyped(&s, text, e.fam.Schema()); err != nil {
		return err
	}
	e.setSpec(s)
	return nil
}

// Update moves between fields and steps or resets values.
func (e editor) Update(k tea.KeyPressMsg, keys keyMap) (editor, editorAction) {
	f, ok := e.field()
	if !ok {
		return e, actionNone
	}
	switch {
	case key.Matches(k, keys.Up):
		e.cur = clamp(e.cur-1, 0, len(e.fields)-1)
	case key.Matches(k, keys.Down):
		e.cur = clamp(e.cur+1, 0, len(e.fields)-1)
	case key.Matches(k, keys.Left), key.Matches(k, keys.Right):
		dir := 1
		if key.Matches(k, keys.Left) {
			dir = -1
		}
		s := e.spec().Clone()
		f.step(&s, dir, e.fam.Schema())
		e.setSpec(s)
	case key.Matches(k, keys.Reset):
		s := e.spec().Clone()
		switch f.kind {
		case kindKnob:
			s.Knobs[f.name] = f.param.Default
		case kindDim:
			_ = s.Set(e.fam.Schema(), f.name, f.param.DefaultFor(s.DType))
		case kindFlag:
			s.Flags[f.name] = f.flag.Default
		case kindDType:
			s.DType = f.types[0]
		}
		e.setSpec(s)
	case key.Matches(k, keys.Enter):
		if f.kind == kindFlag {
			s := e.spec().Clone()
			f.step(&s, 1, e.fam.Schema())
			e.setSpec(s)
			return e, actionNone
		}
		// Start empty with the current value as placeholder: typing
		// replaces it, enter alone keeps it.
		return e, actionType
	}
	return e, actionNone
}

func (e editor) title() string {
	if e.fam != nil {
		return e.fam.Name()
	}
	return "editor"
}

// View is the editor boxed to w×h; typing is the value prompt's line while
// the user types the current field's value.
func (e editor) View(w, h int, focused bool, typing string) []string {
	iw, ih := w-2, h-2
	if e.fam == nil {
		return box(e.th, e.title(), []string{e.th.dim.Render("pick a kernel on the left")}, w, h, focused)
	}
	var head []string
	if err := e.preview.Err; err != nil {
		// The reason is the point of a red value: wrap it, never cut it,
		// and give the fields what is left (at least the current one).
		for _, l := range wrap("✗ "+err.Error(), iw) {
			head = append(head, e.th.bad.Render(l))
		}
		if len(head) > ih-2 {
			head = append(head[:max(1, ih-3)], e.th.bad.Render("… the full reason is in the status line"))
		}
	} else if needsGPU(e.preview.Plan, e.dev) {
		// Rules and budget pass, but this backend can never run the
		// kernel: no green ✓ for a run that will be invalid.
		for i, l := range wrap("✗ needs a GPU backend ("+profiler.UserBackendFlag(e.spec().Kernel)+") · "+e.previewSummary(iw < 30), iw) {
			if i == 2 {
				break
			}
			head = append(head, e.th.warn.Render(l))
		}
	} else {
		for i, l := range wrap("✓ "+e.previewSummary(iw < 30), iw) {
			if i == 2 {
				break
			}
			head = append(head, l)
		}
	}
	head = append(head, e.th.dim.Render(strings.Repeat("─", iw)))
	s := e.spec()
	named := false
	for _, fd := range e.fields {
		named = named || fd.blames(e.preview.Err)
	}
	start, end := window(len(e.fields), e.cur, ih-len(head))
	var rows []string
	for i := start; i < end; i++ {
		fd := e.fields[i]
		val := fd.value(s)
		cur := i == e.cur
		bad := fd.blames(e.preview.Err) || (!named && e.preview.Err != nil && fd.name == e.edited)
		switch {
		case cur && typing != "":
			val = typing
		case cur && fd.kind != kindFlag:
			val = "◂ " + val + " ▸"
		case cur:
			val = "[" + val + "]"
		}
		mark := "  "
		if cur {
			mark = "▸ "
		}
		name := fit(fd.name, 7)
		if bad {
			val = e.th.bad.Render(val + " ✗")
		}
		line := mark + name + " " + val
		tag := e.th.dim.Render(fd.kind.String())
		if fd.kind == kindKnob && e.isFixed(fd.name) {
			tag = e.th.warn.Render("fixed") // T keeps it: the one tag that is not dim
		}
		if lipgloss.Width(line)+1+lipgloss.Width(tag) <= iw {
			line = fit(line, iw-lipgloss.Width(tag)) + tag
		}
		if cur && focused && typing == "" {
			line = e.th.sel.Render(fit(line, iw))
		}
		rows = append(rows, line)
	}
	out := append(head, scrollMarks(e.th, rows, start, end, len(e.fields))...)
	return box(e.th, e.title(), out, w, h, focused)
}

// previewSummary is the one-line budget and occupancy preview: the largest
// dispatch's budget (the budget panel shows every one).
func (e editor) previewSummary(narrow bool) string {
	p := e.preview
	if len(p.Budget) == 0 {
		return "no threadgroup memory"
	}
	b := p.Budget[0]
	for _, x := range p.Budget[1:] {
		if x.Total > b.Total {
			b = x
		}
	}
	s := "TGM " + fmtKiBPair(b.Total, b.Limit)
	if narrow {
		s = "TGM " + fmtKiBShort(b.Total, b.Limit)
	}
	if o, ok := minOcc(p.Occupancy); ok {
		s += fmt.Sprintf(" · ~%d/%s", o.GroupsPerUnit, unitLabel(e.dev)) // ~: a limits-table estimate
	}
	return s
}

func minOcc(os []profiler.Occupancy) (profiler.Occupancy, bool) {
	r := profiler.Result{Occupancy: os}
	return r.MinOccupancy()
}

func unitLabel(d profiler.DeviceInfo) string {
	if d.UnitName != "" {
		return d.UnitName
	}
	return "unit"
}
