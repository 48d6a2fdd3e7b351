package profiler

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func given(t *testing.T, kv ...string) []SettingValue {
	t.Helper()
	var out []SettingValue
	for i := 0; i+1 < len(kv); i += 2 {
		st, ok := LookupSetting(kv[i])
		if !ok {
			t.Fatalf("no setting %q", kv[i])
		}
		out = append(out, SettingValue{Setting: st, Text: kv[i+1]})
	}
	return out
}

// ApplySettings: what each value does to Options, over a base that is not
// the defaults (a sweep file's block, or flags over a file).
func TestApplySettings(t *testing.T) {
	base := DefaultOptions()
	base.Cache, base.Timeout = CacheHot, 70*time.Second
	for _, c := range []struct {
		name string
		kv   []string
		want func(Options) bool
	}{
		{"nothing keeps base", nil, func(o Options) bool { return o.Cache == CacheHot && o.Timeout == 70*time.Second }},
		{"timeout 0 is the default watchdog", []string{"timeout", "0"}, func(o Options) bool { return o.Timeout == 0 }},
		{"timeout seconds", []string{"timeout", "1.5"}, func(o Options) bool { return o.Timeout == 1500*time.Millisecond }},
		{"hot=false undoes hot", []string{"hot", "false"}, func(o Options) bool { return o.Cache == CacheCold }},
		{"cache after hot in any order", []string{"cache", "hot", "hot", "true"}, func(o Options) bool { return o.Cache == CacheHot }},
		{"cache word any case", []string{"cache", " Dirty"}, func(o Options) bool { return o.Cache == CacheDirty }},
		{"time-limit", []string{"time-limit", "3"}, func(o Options) bool { return o.Stop.MaxTime == 3 }},
		{"max-samples", []string{"max-samples", "7"}, func(o Options) bool { return o.Stop.MaxSamples == 7 }},
		{"seed 0", []string{"seed", "0"}, func(o Options) bool { return o.Seed == 0 }},
		{"settle 0 is off", []string{"settle", "0"}, func(o Options) bool { return o.Settle == 0 }},
		{"race factor", []string{"race", "1.1"}, func(o Options) bool { return o.Race == 1.1 && o.Stop.Outpaced == 0 }},
		{"race 0 is off", []string{"race", "0"}, func(o Options) bool { return o.Race == 0 }},
	} {
		o := base
		if err := ApplySettings(&o, given(t, c.kv...)); err != nil || !c.want(o) {
			t.Errorf("%s: %v %+v", c.name, err, o)
		}
	}
}

func TestApplySettingsRefuses(t *testing.T) {
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"noise", "1"}, "noise=1: use a fraction between 0 and 1 (0.01 is 1%)"},
		{[]string{"time-limit", "0"}, "time_limit=0: use a positive number of seconds"},
		{[]string{"time-limit", "1e7"}, "time_limit=1e7: use a positive number of seconds"},
		{[]string{"timeout", "-1"}, "timeout=-1: use 0 (the default: 2×time-limit + settle + 60) or a positive number of seconds"},
		{[]string{"warmup", "NaN"}, "warmup=NaN: use a positive number of seconds"},
		{[]string{"min-samples", "0"}, "min_samples=0: use a whole number of at least 1"},
		{[]string{"max-rows", "2.0"}, "max_rows=2.0: use a whole number of at least 1"},
		{[]string{"seed", "-1"}, "seed=-1: use a whole number, 0 or more"},
		{[]string{"hot", "maybe"}, "hot=maybe: use true or false"},
		{[]string{"cache", "warm"}, "cache=warm: use cold"},
		{[]string{"race", "1"}, "race=1: use 0 (off) or a factor above 1, e.g. 1.1"},
		{[]string{"race", "0.9"}, "race=0.9: use 0 (off) or a factor above 1, e.g. 1.1"},
		{[]string{"race", "-2"}, "race=-2: use 0 (off) or a factor above 1, e.g. 1.1"},
		{[]string{"race", "NaN"}, "race=NaN: use 0 (off) or a factor above 1, e.g. 1.1"},
		{[]string{"race", "+Inf"}, "race=+Inf: use 0 (off) or a factor above 1, e.g. 1.1"},
		{[]string{"race", "abc"}, "race=abc: use 0 (off) or a factor above 1, e.g. 1.1"},
		{[]string{"cache", "dirty", "hot", "true"}, "hot=true and cache=dirty contradict each other: use cache alone"},
	} {
		o := DefaultOptions()
		err := ApplySettings(&o, given(t, c.kv...))
		var se *SettingError
		if !errors.As(err, &se) || len(err.Error()) < len(c.want) || err.Error()[:len(c.want)] != c.want {
			t.Errorf("%v: %v, want %q", c.kv, err, c.want)
		}
		if o != DefaultOptions() {
			t.Errorf("%v: a refused value changed the options: %+v", c.kv, o)
		}
	}
}

// Every setting has both names, a help line and a default its own Parse
// accepts (the flag's default is valid input).
func TestSettingsComplete(t *testing.T) {
	flags, keys := map[string]bool{}, map[string]bool{}
	for _, st := range Settings {
		if st.Flag == "" || st.Key == "" || st.Doc == "" || st.Want == "" || st.get == nil || st.set == nil {
			t.Errorf("%+v: incomplete", st)
		}
		if flags[st.Flag] || keys[st.Key] {
			t.Errorf("%s: named twice", st.Flag)
		}
		flags[st.Flag], keys[st.Key] = true, true
		o := DefaultOptions()
		if v, err := st.Parse(fmt.Sprint(st.Default())); err != nil {
			t.Errorf("%s: its default %v is refused: %v", st.Flag, st.Default(), err)
		} else if st.set(&o, v); o != DefaultOptions() {
			t.Errorf("%s: setting its default changes the options: %+v", st.Flag, o)
		}
	}
}
