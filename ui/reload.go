package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/watch"
	"github.com/mltop/mltop/profiler"
)

// This file is live reload: the Events a user kernel's watcher sends, what
// the session does with them (new definition in the list and the editor,
// rerun of the spec in the editor, the failed reload in the error panel),
// and where a compiler's or a manifest's error points (file:line).

// Origins of a run, shown in the history's "via" column.
const (
	originRun    = "r"
	originSweep  = "sweep"
	originYAML   = "yaml"
	originReload = "reload"
	originEvent  = "event"
)

// loadError is a reload that failed: the kernel as loaded before stays.
type loadError struct {
	source string // the manifest
	text   string
	runs   int // the history's length when it happened: a newer run takes the panel back
}

// onEvent handles an Event from outside the session.
func (m Model) onEvent(ev Event) (Model, tea.Cmd) {
	if ev.LoadError != "" {
		m.loadErr = &loadError{source: ev.Source, text: ev.LoadError, runs: m.hist.len()}
		m.setMsg(true, ev.Text)
		return m, nil
	}
	rerun := ev.Rerun
	if ev.Family != nil {
		if m.loadErr != nil && (ev.Source == "" || m.loadErr.source == ev.Source) {
			m.loadErr = nil
		}
		m.list.replace(ev.Family, ev.Renamed)
		m.editor.replaceFamily(ev.Family, ev.Renamed)
		if m.family() == nil || m.family().Name() != ev.Family.Name() {
			rerun = false
			if ev.Rerun {
				ev.Text += " · not rerun: it is not the selected kernel"
			}
		}
	}
	m.setMsg(ev.Bad, ev.Text)
	if !rerun || m.family() == nil {
		return m, nil
	}
	origin := originEvent
	if ev.Family != nil {
		origin = originReload
	}
	if m.running() {
		if m.batch.origin == originReload && origin == originReload && len(m.batch.specs) == 1 {
			e := ev
			m.pendingReload = &e // saved again during the rerun: rerun once more
			m.msg += " · reruns when the run in flight ends"
			return m, nil
		}
		m.msg += " · not rerun: a run is in flight (r reruns once it ends)"
		return m, nil
	}
	if err := m.editor.preview.Err; err != nil {
		m.setMsg(true, ev.Text+" · not rerun: "+err.Error())
		return m, nil
	}
	mm, cmd := m.startRun()
	if mm.running() {
		mm.batch.note, mm.batch.origin, mm.batch.saved = ev.Text, origin, ev.Saved
	}
	mm.setMsg(ev.Bad, ev.Text)
	return mm, cmd
}

// replace puts a new definition of a family in place of the one of the
// same name, or of the name renamed (its manifest renamed it; "" if not),
// appended when the list has neither, keeping the selection.
func (l *kernelList) replace(f profiler.Family, renamed string) {
	at := -1
	for i := 0; i < len(l.fams); i++ {
		if n := l.fams[i].Name(); n != f.Name() && (renamed == "" || n != renamed) {
			continue
		}
		if at < 0 {
			at = i
			l.fams[i] = f
			continue
		}
		// both names listed: the later entry goes
		l.fams = slices.Delete(l.fams, i, i+1)
		if l.sel == i {
			l.sel = at
		} else if l.sel > i {
			l.sel--
		}
		i--
	}
	if at < 0 {
		l.fams = append(l.fams, f)
	}
	l.longest = max(l.longest, len(f.Name()))
	l.setFilter(l.filter)
}

// replaceFamily takes a new definition of a family (called renamed before,
// when its manifest renamed it): its edited spec keeps every value the new
// schema still allows (others take the defaults), and when it is the
// family in the editor, the fields are rebuilt from the new schema with
// the cursor on the same field where it still exists.
func (e *editor) replaceFamily(f profiler.Family, renamed string) {
	sc := f.Schema()
	if old, ok := e.specs[renamed]; ok && renamed != "" {
		delete(e.specs, renamed)
		old.Kernel = f.Name()
		e.specs[f.Name()] = old
	}
	if old, ok := e.specs[f.Name()]; ok {
		e.specs[f.Name()] = carrySpec(old, sc)
	}
	if e.fam == nil || (e.fam.Name() != f.Name() && (renamed == "" || e.fam.Name() != renamed)) {
		return
	}
	name := ""
	if fd, ok := e.field(); ok {
		name = fd.name
	}
	e.fam = f
	e.fields = fieldsOf(sc)
	e.cur = clamp(e.cur, 0, max(0, len(e.fields)-1))
	for i, fd := range e.fields {
		if fd.name == name {
			e.cur = i
		}
	}
	e.refresh()
}

// carrySpec keeps old's values that sc still allows.
func carrySpec(old profiler.Spec, sc profiler.Schema) profiler.Spec {
	s := profiler.Spec{Kernel: old.Kernel, Knobs: map[string]int{}, Dims: map[string]int{}, Flags: map[string]bool{}}
	for _, p := range sc.Knobs {
		if v, ok := old.Knobs[p.Name]; ok && p.Check(v) == nil {
			s.Knobs[p.Name] = v
		}
	}
	for _, p := range sc.Dims {
		if v, ok := old.Dims[p.Name]; ok && p.Check(v) == nil {
			s.Dims[p.Name] = v
		}
	}
	for _, fl := range sc.Flags {
		if v, ok := old.Flags[fl.Name]; ok {
			s.Flags[fl.Name] = v
		}
	}
	for _, t := range sc.DTypes {
		if t == old.DType {
			s.DType = t
		}
	}
	return s.WithDefaults(sc)
}

// WatchKernels watches the user kernels that paths name (manifests, or
// folders of them, as --kernel takes) and sends an Event for each reload:
// the new family (installed in the registry by the watcher) with Rerun, or
// the error that kept the old one, naming file:line. The channel closes
// when ctx ends. It also returns the families as first loaded (for
// Options.Select). The first load's error is returned and nothing is watched.
func WatchKernels(ctx context.Context, paths []string, debounce time.Duration) (<-chan Event, []profiler.Family, error) {
	var ws []*watch.Watcher
	var fams []profiler.Family
	var broken []Event // a manifest that does not load hides neither the others nor its error
	for _, p := range paths {
		ms, err := user.Manifests(p)
		if err != nil {
			return nil, nil, err
		}
		for _, mf := range ms {
			w, f, err := watch.Start(ctx, mf, watch.Options{Debounce: debounce})
			if err != nil {
				broken = append(broken, Event{Text: err.Error(), Bad: true})
				continue
			}
			ws = append(ws, w)
			fams = append(fams, f)
		}
	}
	if len(ws) == 0 && len(broken) > 0 {
		return nil, nil, errors.New(broken[0].Text)
	}
	out := make(chan Event, 4+len(broken))
	for _, e := range broken {
		out <- e
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range w.Events() {
				select {
				case out <- reloadEvent(r):
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out, fams, nil
}

// selectName selects the family called name, if listed.
func (l *kernelList) selectName(name string) {
	for i, f := range l.fams {
		if f.Name() == name {
			l.sel = i
			l.setFilter(l.filter)
			return
		}
	}
}

// reloadEvent says what a reload did, for the status line and the session.
func reloadEvent(r watch.Reload) Event {
	var changed []string
	var saved time.Time
	for _, c := range r.Changed {
		changed = append(changed, filepath.Base(c))
		if st, err := os.Stat(c); err == nil && st.ModTime().After(saved) {
			saved = st.ModTime()
		}
	}
	what := strings.Join(changed, ", ")
	if what == "" {
		what = filepath.Base(r.Path)
	}
	if r.Err != nil {
		at := profiler.SiteLabel(r.Err.Error())
		if at == "" {
			at = filepath.Base(r.Path)
		}
		return Event{
			Text:      fmt.Sprintf("manifest error in %s — fix and save to reload (the kernel as loaded before stays)", at),
			Bad:       true,
			Source:    r.Path,
			LoadError: r.Err.Error(),
			Saved:     saved,
		}
	}
	text := fmt.Sprintf("%s reloaded (%s saved)", r.Family.Name(), what)
	if r.Renamed != "" {
		text = fmt.Sprintf("%s reloaded as %s (%s saved)", r.Renamed, r.Family.Name(), what)
	}
	return Event{
		Text:    text,
		Rerun:   true,
		Family:  r.Family,
		Renamed: r.Renamed,
		Source:  r.Path,
		Saved:   saved,
	}
}
