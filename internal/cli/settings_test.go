package cli

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sweep"
)

// settingFromFlag gives --flag=value as Main does (the flag package, then
// validate) and returns the options or the message.
func settingFromFlag(t *testing.T, flagName, value string) (profiler.Options, string) {
	t.Helper()
	var o options
	fs := newFlagSet("mltop")
	o.register(fs)
	if err := fs.Parse([]string{"--" + flagName + "=" + value}); err != nil {
		return profiler.Options{}, flagError("", err).Error()
	}
	o.set = setFlags(fs)
	if _, err := o.givenSettings(); err != nil {
		return profiler.Options{}, err.Error()
	}
	return o.measureOptions(nil), ""
}

// settingFromYAML gives `key: value` in a sweep file's defaults and
// returns the first job's options or the message.
func settingFromYAML(t *testing.T, key, value string) (profiler.Options, string) {
	t.Helper()
	src := fmt.Sprintf("defaults:\n  %s: %s\nsweeps:\n  - kernel: softmax_bwd\n", key, value)
	sw, err := sweep.Parse("s.yaml", []byte(src), profiler.DefaultOptions())
	if err != nil {
		return profiler.Options{}, err.Error()
	}
	return sw.Jobs[0].Options, ""
}

// settingValues are the values tried on every setting: the same list for
// each kind, and a few that kind takes.
var settingValues = []string{"0", "-1", "1.5", "abc", "1e400", "99999999999999999999", "1e7"}

var settingValuesOfKind = map[profiler.SettingKind][]string{
	profiler.KindFloat:   {"0.5", "1", "1e6", "0.001", "NaN", "inf"},
	profiler.KindSeconds: {"0.5", "1", "1e6", "0.001", "NaN", "inf", "2s", "500ms", "1m30s", "-2s", "2 s", "300h"},
	profiler.KindInt:     {"1", "20", "0x10", "20.0"},
	profiler.KindUint:    {"7", "0x10", "18446744073709551615", "20.0"},
	profiler.KindBool:    {"true", "false", "1", "yes"},
	profiler.KindWord:    {"cold", "hot", "dirty", "HOT", "warm"},
}

// TestSettingsTable walks profiler.Settings: each setting's flag and sweep
// key accept the same values into the same options and refuse the same
// values in the same words; the flag's default and help are the table's,
// and both spellings are documented.
func TestSettingsTable(t *testing.T) {
	docs := docFiles(t)
	yamlBlock := docs["docs/sweeps.md"]
	fs := newFlagSet("mltop")
	var o options
	o.register(fs)
	for _, st := range profiler.Settings {
		f := fs.Lookup(st.Flag)
		if f == nil {
			t.Errorf("%s: no flag --%s", st.Key, st.Flag)
			continue
		}
		if want := fmt.Sprint(st.Default()); f.DefValue != want || f.Usage != st.Doc {
			t.Errorf("--%s: default %q help %q, want %q %q", st.Flag, f.DefValue, f.Usage, want, st.Doc)
		}
		if !strings.Contains(docs["docs/commands.md"], "\n| `--"+st.Flag) {
			t.Errorf("docs/commands.md has no row for --%s", st.Flag)
		}
		if !strings.Contains(yamlBlock, "\n  "+st.Key+":") {
			t.Errorf("docs/sweeps.md's sweep file does not show %s:", st.Key)
		}
		for _, v := range append(settingValues, settingValuesOfKind[st.Kind]...) {
			fromFlag, flagMsg := settingFromFlag(t, st.Flag, v)
			fromYAML, yamlMsg := settingFromYAML(t, st.Key, v)
			if (flagMsg == "") != (yamlMsg == "") {
				t.Errorf("%s %q: the flag says %q, the sweep file %q", st.Key, v, flagMsg, yamlMsg)
				continue
			}
			if flagMsg == "" {
				if !reflect.DeepEqual(fromFlag, fromYAML) {
					t.Errorf("%s %q: the flag gives %+v, the sweep file %+v", st.Key, v, fromFlag, fromYAML)
				}
				continue
			}
			want := ": use " + st.Want
			if !strings.Contains(flagMsg, "--"+st.Flag+"=") || !strings.Contains(flagMsg, want) ||
				!strings.Contains(yamlMsg, "defaults."+st.Key+": "+st.Key+"=") || !strings.HasSuffix(yamlMsg, want) {
				t.Errorf("%s %q: messages differ:\n  flag: %s\n  file: %s\n  both should say %q", st.Key, v, flagMsg, yamlMsg, want)
			}
		}
	}
	if got := o.measureOptions(nil); !reflect.DeepEqual(got, profiler.DefaultOptions()) {
		t.Errorf("no flags: %+v, want the defaults %+v", got, profiler.DefaultOptions())
	}
}

// TestSettingsTogether: hot and cache given together must agree, on the
// command line as in a sweep file's block, in the same words.
func TestSettingsTogether(t *testing.T) {
	for _, c := range []struct {
		hot, cache string
		want       profiler.CacheMode // "" for refused
	}{
		{"true", "hot", profiler.CacheHot},
		{"false", "dirty", profiler.CacheDirty},
		{"true", "dirty", ""},
		{"false", "hot", ""},
	} {
		var o options
		fs := newFlagSet("mltop")
		o.register(fs)
		if err := fs.Parse([]string{"--hot=" + c.hot, "--cache=" + c.cache}); err != nil {
			t.Fatal(err)
		}
		o.set = setFlags(fs)
		_, flagErr := o.givenSettings()
		src := fmt.Sprintf("defaults: {hot: %s, cache: %s}\nsweeps:\n  - kernel: softmax_bwd\n", c.hot, c.cache)
		sw, fileErr := sweep.Parse("s.yaml", []byte(src), profiler.DefaultOptions())
		if c.want != "" {
			if flagErr != nil || fileErr != nil {
				t.Errorf("hot %s cache %s: %v / %v", c.hot, c.cache, flagErr, fileErr)
			} else if m := o.measureOptions(nil); m.Cache != c.want || sw.Jobs[0].Options.Cache != c.want {
				t.Errorf("hot %s cache %s: flag %q file %q, want %q", c.hot, c.cache, m.Cache, sw.Jobs[0].Options.Cache, c.want)
			}
			continue
		}
		wantFlag := fmt.Sprintf("--hot=%s and --cache=%s contradict each other: use --cache alone", c.hot, c.cache)
		wantFile := fmt.Sprintf("hot=%s and cache=%s contradict each other: use cache alone", c.hot, c.cache)
		if flagErr == nil || flagErr.Error() != wantFlag || fileErr == nil || !strings.HasSuffix(fileErr.Error(), wantFile) {
			t.Errorf("hot %s cache %s: %v / %v", c.hot, c.cache, flagErr, fileErr)
		}
	}
}
