package profiler

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SettingKind is the type of a setting's value, and so how its text is
// read: the command line's flag of that kind and the sweep file's key
// read it with the same function.
type SettingKind int

const (
	KindFloat SettingKind = iota // float64, as strconv.ParseFloat reads it
	KindInt                      // int, as strconv.ParseInt(s, 0, 64) reads it
	KindUint                     // uint64, as strconv.ParseUint(s, 0, 64) reads it
	KindBool                     // bool, as strconv.ParseBool reads it
	KindWord                     // a string from a fixed list
	// KindSeconds is float64 seconds, written as a number (2, 0.5) or as
	// a duration (2s, 500ms, 1m30s: time.ParseDuration).
	KindSeconds
)

// maxSeconds bounds every setting in seconds: beyond it the watchdog's
// time.Duration (2×time-limit + settle + 60 s, in ns) would overflow.
const maxSeconds = 1e6

// Setting is one measurement setting, described once: the command line
// registers its flag from it, the sweep file reads its key with it, the
// docs test checks both are documented. Adding a setting is one entry in
// Settings.
type Setting struct {
	Flag string // the command-line flag, without dashes: "time-limit"
	Key  string // the sweep file's key under defaults: and options:: "time_limit"
	Kind SettingKind
	// Doc is the flag's help line; a `word` in back quotes names its value.
	Doc string
	// Want says what values it takes, after "use": the message for any
	// value it refuses, from the command line or a sweep file alike.
	Want string
	// ok is the range check of a parsed value (nil: every value of the kind).
	ok func(v any) bool
	// get is the value in o as the flag's type (the flag's default is
	// get(DefaultOptions())); set stores a checked value into o.
	get func(o Options) any
	set func(o *Options, v any)
}

// Settings are the measurement settings, in the order help and docs list
// them. Each is a flag of the commands that measure and a key of a sweep
// file's defaults: and options: blocks.
var Settings = []Setting{
	floatSetting("noise", "noise",
		"stop sampling when the 95% confidence interval of the median is within ± this `fraction` of it",
		"a fraction between 0 and 1 (0.01 is 1%)", func(v float64) bool { return v > 0 && v < 1 },
		func(o *Options) *float64 { return &o.Stop.Noise }),
	intSetting("min-samples", "min_samples", "take at least this many samples",
		func(o *Options) *int { return &o.Stop.MinSamples }),
	secondsSetting("min-time", "min_time", "measure at least this many `seconds` of kernel time",
		"a positive number of seconds", positiveSeconds, func(o *Options) *float64 { return &o.Stop.MinTime }),
	secondsSetting("time-limit", "time_limit", "stop sampling a spec after this many `seconds` whatever the noise",
		"a positive number of seconds", positiveSeconds, func(o *Options) *float64 { return &o.Stop.MaxTime }),
	intSetting("max-samples", "max_samples", "take at most this many samples",
		func(o *Options) *int { return &o.Stop.MaxSamples }),
	secondsSetting("warmup", "warmup", "warm up for this many `seconds` (at least one run)",
		"a positive number of seconds", positiveSeconds, func(o *Options) *float64 { return &o.Warmup }),
	secondsSetting("settle", "settle",
		"run each spec this many `seconds` before sampling, every spec in full, so the GPU's boost clock reaches the level the spec sustains (1: on an H100, 99% of the rows repeat within 2% from run to run, for 1 s more per spec; 0: off)",
		"0 (off) or a positive number of seconds, e.g. 1", zeroOrSeconds, func(o *Options) *float64 { return &o.Settle }),
	floatSetting("race", "race",
		"in a sweep, stop sampling a spec once its median is clearly above this `factor` times the best median of its shape so far (stop_reason outpaced; 0: off)",
		"0 (off) or a factor above 1, e.g. 1.1", raceFactor, func(o *Options) *float64 { return &o.Race }),
	cacheSetting,
	hotSetting,
	{
		Flag: "seed", Key: "seed", Kind: KindUint, Doc: "seed of the input generator",
		Want: "a whole number, 0 or more",
		get:  func(o Options) any { return o.Seed },
		set:  func(o *Options, v any) { o.Seed = v.(uint64) },
	},
	intSetting("max-rows", "max_rows", "check at most this many rows against the float64 reference",
		func(o *Options) *int { return &o.MaxRows }),
	{
		Flag: "timeout", Key: "timeout", Kind: KindSeconds,
		Doc:  "worker watchdog per spec in `seconds` (0: 2×time-limit + settle + 60)",
		Want: "0 (the default: 2×time-limit + settle + 60) or a positive number of seconds (or a duration such as 90s)",
		ok:   func(v any) bool { return zeroOrSeconds(v.(float64)) },
		get:  func(o Options) any { return o.Timeout.Seconds() },
		set:  func(o *Options, v any) { o.Timeout = time.Duration(v.(float64) * float64(time.Second)) },
	},
}

func positiveSeconds(v float64) bool { return v > 0 && v <= maxSeconds }
func zeroOrSeconds(v float64) bool   { return v >= 0 && v <= maxSeconds }

// raceFactor: 0 is off; a factor of 1 or less would stop specs as fast
// as the best.
func raceFactor(v float64) bool { return v == 0 || v > 1 }

// cacheSetting is the cache mode; hotSetting its older spelling.
var cacheSetting = Setting{
	Flag: "cache", Key: "cache", Kind: KindWord,
	Doc:  "last-level cache before each sample: cold (flushed, holding only clean lines, as ncu --cache-control all), hot (not flushed) or dirty (flushed by writing, full of dirty lines the kernel must write back)",
	Want: cacheModesWant,
	ok: func(v any) bool {
		_, err := ParseCacheMode(v.(string))
		return err == nil
	},
	get: func(o Options) any { return string(o.CacheMode()) },
	set: func(o *Options, v any) { o.Cache, _ = ParseCacheMode(v.(string)) },
}

var hotSetting = Setting{
	Flag: "hot", Key: "hot", Kind: KindBool, Doc: "same as --cache hot",
	Want: "true or false",
	get:  func(o Options) any { return o.CacheMode() == CacheHot },
	set: func(o *Options, v any) {
		switch {
		case v.(bool):
			o.Cache = CacheHot
		case o.CacheMode() == CacheHot: // hot: false undoes an inherited hot
			o.Cache = CacheCold
		}
	},
}

func floatSetting(flag, key, doc, want string, ok func(float64) bool, field func(*Options) *float64) Setting {
	return Setting{
		Flag: flag, Key: key, Kind: KindFloat, Doc: doc, Want: want,
		ok:  func(v any) bool { return ok(v.(float64)) },
		get: func(o Options) any { return *field(&o) },
		set: func(o *Options, v any) { *field(o) = v.(float64) },
	}
}

// secondsSetting is floatSetting for a time: it also takes a duration
// (2s, 500ms).
func secondsSetting(flag, key, doc, want string, ok func(float64) bool, field func(*Options) *float64) Setting {
	st := floatSetting(flag, key, doc, want+" (or a duration such as 500ms)", ok, field)
	st.Kind = KindSeconds
	return st
}

// intSetting is a count of at least 1.
func intSetting(flag, key, doc string, field func(*Options) *int) Setting {
	return Setting{
		Flag: flag, Key: key, Kind: KindInt, Doc: doc, Want: "a whole number of at least 1",
		ok:  func(v any) bool { return v.(int) >= 1 },
		get: func(o Options) any { return *field(&o) },
		set: func(o *Options, v any) { *field(o) = v.(int) },
	}
}

// LookupSetting finds a setting by its flag name.
func LookupSetting(flag string) (Setting, bool) {
	for _, s := range Settings {
		if s.Flag == flag {
			return s, true
		}
	}
	return Setting{}, false
}

// SettingByKey finds a setting by its sweep-file key.
func SettingByKey(key string) (Setting, bool) {
	for _, s := range Settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

// SettingKeys are the sweep-file keys, in table order.
func SettingKeys() []string {
	keys := make([]string, len(Settings))
	for i, s := range Settings {
		keys[i] = s.Key
	}
	return keys
}

// Default is the setting's value when nothing sets it, as the flag's type
// (float64, int, uint64, bool or string).
func (s Setting) Default() any { return s.get(DefaultOptions()) }

// Parse reads text and checks its range. A value it refuses is a
// *SettingError.
func (s Setting) Parse(text string) (any, error) {
	v, err := parseKind(s.Kind, strings.TrimSpace(text))
	if err == nil && s.ok != nil && !s.ok(v) {
		err = errors.New("out of range")
	}
	if err != nil {
		return nil, &SettingError{Setting: s, Value: text}
	}
	return v, nil
}

func parseKind(k SettingKind, text string) (any, error) {
	switch k {
	case KindFloat:
		f, err := strconv.ParseFloat(text, 64)
		if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) { // NaN passes no comparison: refuse it here
			err = errors.New("not finite")
		}
		return f, err
	case KindSeconds:
		if f, err := parseKind(KindFloat, text); err == nil {
			return f, nil
		}
		d, err := time.ParseDuration(text)
		return d.Seconds(), err
	case KindInt:
		n, err := strconv.ParseInt(text, 0, 64)
		if err == nil && int64(int(n)) != n {
			err = errors.New("out of range")
		}
		return int(n), err
	case KindUint:
		return strconv.ParseUint(text, 0, 64)
	case KindBool:
		return strconv.ParseBool(text)
	}
	return text, nil
}

// SettingValue is a setting's value as given: the text of a flag or of a
// sweep file's key.
type SettingValue struct {
	Setting Setting
	Text    string
}

// ApplySettings sets the given values in o, in table order whatever the
// order given. Values given together (one command line, one YAML block)
// must agree: hot and a cache mode other than hot contradict each other.
// Errors are *SettingError.
func ApplySettings(o *Options, given []SettingValue) error {
	parsed := map[string]any{}
	texts := map[string]string{}
	for _, g := range given {
		v, err := g.Setting.Parse(g.Text)
		if err != nil {
			return err
		}
		parsed[g.Setting.Flag], texts[g.Setting.Flag] = v, g.Text
	}
	if hot, ok := parsed[hotSetting.Flag]; ok {
		if mode, ok := parsed[cacheSetting.Flag]; ok {
			if m, _ := ParseCacheMode(mode.(string)); hot.(bool) != (m == CacheHot) {
				return &SettingError{Setting: hotSetting, Value: texts[hotSetting.Flag], With: &cacheSetting, WithValue: texts[cacheSetting.Flag]}
			}
		}
	}
	for _, s := range Settings {
		if v, ok := parsed[s.Flag]; ok {
			s.set(o, v)
		}
	}
	return nil
}

// SettingError is a value a setting refuses, or two settings given
// together that contradict each other (With). Its Message names the
// settings the way the caller's user wrote them (--flag or key).
type SettingError struct {
	Setting   Setting
	Value     string
	With      *Setting
	WithValue string
}

// Message says what is wrong in the words of one front end: name gives a
// setting's name there ("--noise" or "noise").
func (e *SettingError) Message(name func(Setting) string) string {
	if e.With != nil {
		return fmt.Sprintf("%s=%s and %s=%s contradict each other: use %s alone",
			name(e.Setting), strings.TrimSpace(e.Value), name(*e.With), strings.TrimSpace(e.WithValue), name(*e.With))
	}
	return fmt.Sprintf("%s=%s: use %s", name(e.Setting), strings.TrimSpace(e.Value), e.Setting.Want)
}

func (e *SettingError) Error() string {
	return e.Message(func(s Setting) string { return s.Key })
}
