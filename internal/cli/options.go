package cli

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sweep"
)

// errHelp is returned after -h printed the help: exit 0.
var errHelp = errors.New("help shown")

// options are the flags shared by the interactive session, sweeps and run.
type options struct {
	backend string
	csv     string
	resume  string
	json    bool
	bench   bool
	phases  bool
	isolate string
	noColor bool
	quiet   bool
	devices string // --devices (sweeps): "" for one device
	shard   string // --shard (sweeps)
	claims  string // --claims DIR (sweeps, with --shard)
	dryRun  bool   // --dry-run (sweeps): count and estimate, run nothing
	yes     bool
	set     map[string]bool // flags given explicitly on the command line
	kernels kernelPaths     // --kernel PATH: user manifests
	// settings are the flags of profiler.Settings, by flag name: their
	// text goes through the setting's Parse, as a sweep file's does.
	settings map[string]flag.Value
	// partialKernels: --kernel folders may hold manifests that do not load
	// (the interactive session shows their errors and runs the others).
	partialKernels bool
}

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.backend, "backend", "auto", "backend: auto (Metal on macOS, else CUDA where libcuda.so.1 loads, else CPU), metal, cuda or cpu")
	fs.StringVar(&o.csv, "csv", "", "write one CSV row per spec to `file`, flushed as each spec finishes")
	fs.StringVar(&o.resume, "resume", "", "append to CSV `file` and skip specs already in it (implies --csv file)")
	fs.BoolVar(&o.json, "json", false, "print results as JSON lines on stdout instead of the table")
	fs.BoolVar(&o.bench, "bench", false, "print results in Go benchmark format on stdout (for benchstat)")
	fs.BoolVar(&o.phases, "phases", false, "print where each spec's wall time went (plan, compile, inputs, reference, verify, warm-up, measure, …) on stderr")
	o.settings = registerSettings(fs)
	fs.StringVar(&o.isolate, "isolate", "auto", "run specs in a worker subprocess: auto (on for GPU backends and the interactive session), on, off")
	fs.BoolVar(&o.noColor, "no-color", false, "plain output without colour (also NO_COLOR=1)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar on stderr")
	fs.Var(&o.kernels, "kernel", "add the user kernel(s) of `PATH` (a kernel.yaml or a folder of them; repeatable)")
	fs.BoolVar(&o.yes, "yes", false, fmt.Sprintf("start a sweep of more than %d specs without asking (in a terminal)", bigSweep))
}

// validate checks flag values.
func (o *options) validate(s *session) error {
	if o.partialKernels {
		// The session lists the manifests that load and shows the others'
		// errors (ui.WatchKernels).
		s.loadUserKernelsReporting(o.kernels)
	} else if err := s.loadUserKernels(o.kernels); err != nil {
		return err
	}
	if !slices.Contains(sweep.KnownBackends, o.backend) {
		return badInput("unknown backend %q: use one of %s", o.backend, strings.Join(sweep.KnownBackends, ", "))
	}
	if !slices.Contains([]string{"auto", "on", "off"}, o.isolate) {
		return badInput("--isolate=%q: use auto, on or off", o.isolate)
	}
	if _, err := o.givenSettings(); err != nil {
		return err
	}
	if o.json && o.bench {
		return badInput("--json and --bench both write to stdout: choose one")
	}
	for _, f := range []struct{ name, path string }{{"csv", o.csv}, {"resume", o.resume}} {
		switch strings.ToLower(filepath.Ext(f.path)) {
		case ".yaml", ".yml":
			return badInput("--%s %s: --%s takes the CSV file to write (e.g. results.csv); the sweep file goes in --config %s", f.name, f.path, f.name, f.path)
		}
	}
	if o.resume != "" {
		if o.csv != "" && o.csv != o.resume {
			return badInput("--resume %s and --csv %s name different files: --resume appends to its file, drop --csv", o.resume, o.csv)
		}
		o.csv = o.resume
	}
	return nil
}

// registerSettings adds a flag for each of profiler.Settings, of the
// setting's type with its default and help line (so --help shows them as
// before), and returns their values by flag name.
func registerSettings(fs *flag.FlagSet) map[string]flag.Value {
	vals := map[string]flag.Value{}
	for _, st := range profiler.Settings {
		switch d := st.Default().(type) {
		case float64:
			if st.Kind == profiler.KindSeconds { // 2 or 2s: Setting.Parse reads the text
				fs.Var(&textFlag{fmt.Sprint(d)}, st.Flag, st.Doc)
				break
			}
			fs.Float64(st.Flag, d, st.Doc)
		case int:
			fs.Int(st.Flag, d, st.Doc)
		case uint64:
			fs.Uint64(st.Flag, d, st.Doc)
		case bool:
			fs.Bool(st.Flag, d, st.Doc)
		case string:
			fs.String(st.Flag, d, st.Doc)
		default:
			panic(fmt.Sprintf("setting %s: no flag for a default of type %T", st.Flag, d))
		}
		vals[st.Flag] = fs.Lookup(st.Flag).Value
	}
	return vals
}

// textFlag keeps a flag's text for its setting to parse (seconds as a
// number or a duration).
type textFlag struct{ text string }

func (t *textFlag) String() string     { return t.text }
func (t *textFlag) Set(v string) error { t.text = v; return nil }

// givenSettings are the settings given explicitly on the command line,
// checked (each value, and hot against cache) by profiler.ApplySettings.
func (o *options) givenSettings() ([]profiler.SettingValue, error) {
	var given []profiler.SettingValue
	for _, st := range profiler.Settings {
		if v, ok := o.settings[st.Flag]; ok && o.set[st.Flag] {
			given = append(given, profiler.SettingValue{Setting: st, Text: v.String()})
		}
	}
	var scratch profiler.Options
	if err := profiler.ApplySettings(&scratch, given); err != nil {
		return nil, settingInputError(err)
	}
	return given, nil
}

// flagName is a setting's name on the command line.
func flagName(s profiler.Setting) string { return "--" + s.Flag }

// settingInputError says what is wrong with a setting in flag names.
func settingInputError(err error) error {
	var se *profiler.SettingError
	if errors.As(err, &se) {
		return badInput("%s", se.Message(flagName))
	}
	return badInput("%v", err)
}

// measureOptions makes profiler.Options from the flags: the flags given
// explicitly override base (a sweep file's settings), or the defaults when
// base is nil. validate has checked them.
func (o *options) measureOptions(base *profiler.Options) profiler.Options {
	m := profiler.DefaultOptions()
	if base != nil {
		m = *base
	}
	given, _ := o.givenSettings()
	profiler.ApplySettings(&m, given)
	return m
}

func setFlags(fs *flag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

// specArgs are the arguments of the commands that run one spec (run and
// watch): the shared flags, --set (repeatable), --dtype and one target.
type specArgs struct {
	o     options
	sets  []string
	dtype string
}

func (a *specArgs) declare(fs *flag.FlagSet) {
	a.o.register(fs)
	fs.Func("set", "", func(s string) error { a.sets = append(a.sets, s); return nil })
	fs.StringVar(&a.dtype, "dtype", "", "")
}

// target checks the arguments and flags of a and returns the one target:
// cmd takes what, and example shows a right call.
func (a *specArgs) target(s *session, pos []string, cmd, what, example string) (string, error) {
	if len(pos) != 1 {
		hint := straySettings(pos, a.sets)
		if hint == "" {
			hint = "e.g. " + example
		}
		return "", badInput("%s takes %s, got %d arguments %q: %s", cmd, what, len(pos), pos, hint)
	}
	a.o.set = s.given
	return pos[0], a.o.validate(s)
}

// straySettings says how to give the NAME=VALUE words among the
// arguments after the first: settings that lost their --set (often after a
// space: --set rows=64 cols=128). "" when there are none.
func straySettings(pos, sets []string) string {
	var kv []string
	for _, p := range pos[min(1, len(pos)):] {
		if name, _, ok := strings.Cut(p, "="); ok && name != "" && !strings.ContainsAny(name, "/\\.") {
			kv = append(kv, p)
		}
	}
	if len(kv) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is a setting: give settings to --set, joined by commas without spaces (--set %s)", kv[0], strings.Join(append(slices.Clone(sets), kv...), ","))
}

// parseSpec builds a Spec from --set pairs, checking every name and value
// against the family's schema.
// A kernel given by path is resolved first (session.resolveKernelArg).
func parseSpec(kernel, dtype string, sets []string) (profiler.Spec, error) {
	f, err := profiler.Lookup(kernel)
	if err != nil {
		return profiler.Spec{}, badInput("%v", err)
	}
	sc := f.Schema()
	spec := profiler.Spec{Kernel: kernel}
	if dtype != "" {
		if strings.Contains(dtype, ",") {
			parts := strings.Split(dtype, ",")
			return spec, badInput("--dtype %s: one dtype a run (%s has %s); run once per dtype: for d in %s; do mltop … --dtype $d; done", dtype, kernel, profiler.JoinDTypes(sc.DTypes), strings.Join(parts, " "))
		}
		dt, err := profiler.ParseDType(dtype)
		if err != nil {
			return spec, badInput("--dtype: %v (%s has %s)", err, kernel, profiler.JoinDTypes(sc.DTypes))
		}
		spec.DType = dt
	}
	pairs, err := setPairs(sets)
	if err != nil {
		return spec, err
	}
	given := map[string]string{}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		if prev, dup := given[k]; dup {
			return spec, badInput("--set gives %s twice (%s=%s and %s=%s): give each name once; to try several values write a sweep file (--config; a user kernel's sweep needs its GPU), or run once per value: for v in %s %s; do mltop … --set %s=$v; done", k, k, prev, k, v, prev, v, k)
		}
		given[k] = v
		n, err := parseValue(v, isFlag(sc, k))
		if err != nil {
			return spec, badInput("--set %s=%s: %v", k, v, err)
		}
		if err := spec.Set(sc, k, n); err != nil {
			return spec, badInput("--set: %v", err)
		}
	}
	spec = spec.WithDefaults(sc)
	if err := spec.CheckSchema(sc); err != nil {
		return spec, badInput("%v", err)
	}
	return spec, nil
}

// setPairs are the NAME=VALUE pairs of --set (each flag a comma-separated
// list), trimmed; a piece without a name is an error.
func setPairs(sets []string) ([][2]string, error) {
	var pairs [][2]string
	for _, group := range sets {
		for _, kv := range strings.Split(group, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, badInput("--set %q: write NAME=VALUE, e.g. BQ=32", kv)
			}
			pairs = append(pairs, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	return pairs, nil
}

// isFlag says whether name is one of the schema's boolean flags.
func isFlag(sc profiler.Schema, name string) bool {
	for _, f := range sc.Flags {
		if f.Name == name {
			return true
		}
	}
	return false
}

// parseValue reads a flag's value as profiler.ParseBool (and so a sweep
// file) does — causal=maybe and causal=2 are refused — or else an integer.
func parseValue(v string, flag bool) (int, error) {
	if flag {
		b, err := profiler.ParseBool(v)
		if err != nil {
			return 0, err
		}
		if b {
			return 1, nil
		}
		return 0, nil
	}
	return parseWholeNumber(v)
}
