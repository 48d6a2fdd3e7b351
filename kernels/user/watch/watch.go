// Package watch reloads a user kernel's manifest when it or the files it
// names change (`mltop watch`, the session's live reload).
package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mltop/mltop/kernels/user"
)

// Reload is what a Watcher reports after the files of a manifest changed:
// the reloaded Family (already installed in the registry, replacing the old
// one), or the error that stopped it (a manifest error names file:line:col;
// the old family stays registered).
type Reload struct {
	Path    string       // the manifest
	Family  *user.Family // nil on error
	Err     error        // nil on success
	Changed []string     // the files whose change triggered it
	// Renamed is the kernel's name before this reload when the manifest's
	// name changed ("" otherwise): that name is no longer registered.
	Renamed string
}

// Watcher watches a manifest, its sources, includes and Python reference,
// and reloads the manifest when any of them changes. It watches the files'
// folders, not the files, so editors that save by writing a new file and
// renaming it over the old one are seen too.
type Watcher struct {
	path     string
	debounce time.Duration
	install  bool
	w        *fsnotify.Watcher
	events   chan Reload
	files    []string // absolute paths that matter
	dirs     []string
	// mtimes are the files' modification times when last seen: a touch or
	// a save of the same content changes only that (a Chmod event), and
	// reruns; a chmod alone does not.
	mtimes map[string]time.Time
	name   string // the kernel's name as last loaded
}

// Options tune a Watcher.
type Options struct {
	// Debounce is how long the files must be quiet before a reload (an
	// editor's save is often several events). Default 150 ms.
	Debounce time.Duration
	// NoInstall leaves the registry alone (the caller installs the family).
	NoInstall bool
}

// Start starts watching the manifest at path. The first load happens now:
// its error (if any) is returned, and nothing is watched.
func Start(ctx context.Context, path string, opt Options) (*Watcher, *user.Family, error) {
	f, err := user.Load(path)
	if err != nil {
		return nil, nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, err
	}
	if opt.Debounce <= 0 {
		opt.Debounce = 150 * time.Millisecond
	}
	w := &Watcher{path: path, debounce: opt.Debounce, install: !opt.NoInstall, w: fw, events: make(chan Reload, 4), name: f.Name()}
	if w.install {
		if err := user.Install(f); err != nil {
			fw.Close()
			return nil, nil, err
		}
	}
	if err := w.track(f.Files()); err != nil {
		fw.Close()
		return nil, nil, err
	}
	go w.loop(ctx)
	return w, f, nil
}

// Events delivers one Reload per settled burst of changes; it is closed
// when the context ends.
func (w *Watcher) Events() <-chan Reload { return w.events }

// Files are the files watched now.
func (w *Watcher) Files() []string { return slices.Clone(w.files) }

func (w *Watcher) track(files []string) error {
	w.files = w.files[:0]
	w.mtimes = map[string]time.Time{}
	want := map[string]bool{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return err
		}
		abs = filepath.Clean(abs)
		w.files = append(w.files, abs)
		w.mtimes[abs] = modTime(abs)
		want[filepath.Dir(abs)] = true
	}
	for _, d := range w.dirs {
		if !want[d] {
			_ = w.w.Remove(d)
		}
	}
	var dirs []string
	for d := range want {
		if !slices.Contains(w.dirs, d) {
			if err := w.w.Add(d); err != nil {
				return err
			}
		}
		dirs = append(dirs, d)
	}
	w.dirs = dirs
	return nil
}

func (w *Watcher) loop(ctx context.Context) {
	defer close(w.events)
	defer w.w.Close()
	var timer *time.Timer
	var fire <-chan time.Time
	var changed []string
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			name := filepath.Clean(ev.Name)
			if !slices.Contains(w.files, name) || !w.touched(name, ev.Op) {
				continue
			}
			if !slices.Contains(changed, name) {
				changed = append(changed, name)
			}
			if timer == nil {
				timer = time.NewTimer(w.debounce)
			} else {
				timer.Reset(w.debounce)
			}
			fire = timer.C
		case <-w.w.Errors:
			// overflow and similar: reload to be safe
			if timer == nil {
				timer = time.NewTimer(w.debounce)
			} else {
				timer.Reset(w.debounce)
			}
			fire = timer.C
		case <-fire:
			fire = nil
			r := Reload{Path: w.path, Changed: changed}
			changed = nil
			f, err := user.Load(w.path)
			if err == nil && w.install {
				err = user.Install(f)
			}
			if err != nil {
				r.Err = err
			} else {
				r.Family = f
				if f.Name() != w.name {
					r.Renamed, w.name = w.name, f.Name()
				}
				if terr := w.track(f.Files()); terr != nil {
					r.Err = terr
				}
			}
			select {
			case w.events <- r:
			case <-ctx.Done():
				return
			}
		}
	}
}

// touched says whether an event on a watched file is a change: any write,
// create, rename or remove, and an attribute change that moved the
// modification time (touch, or a save that wrote the same bytes); not a
// chmod alone.
func (w *Watcher) touched(name string, op fsnotify.Op) bool {
	if op != fsnotify.Chmod {
		w.mtimes[name] = modTime(name)
		return true
	}
	t := modTime(name)
	if t.Equal(w.mtimes[name]) {
		return false
	}
	w.mtimes[name] = t
	return true
}

// modTime is a file's modification time (zero when it cannot be read).
func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}
