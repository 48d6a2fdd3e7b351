package metal

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTemplateEntry(t *testing.T) {
	for _, c := range []struct {
		in   string
		want TemplateEntry
		ok   bool
	}{
		{"scale_rows<float>", TemplateEntry{Name: "scale_rows", Args: []string{"float"}}, true},
		{" k< half , 4 > ", TemplateEntry{Name: "k", Args: []string{"half", "4"}}, true},
		{"ns :: k<float>", TemplateEntry{Name: "ns::k", Args: []string{"float"}}, true},
		{"k<vec<float, 4>, (2 > 1)>", TemplateEntry{Name: "k", Args: []string{"vec<float, 4>", "(2 > 1)"}}, true},
		{"scale_rows", TemplateEntry{}, false},
		{"scale_rows_f32", TemplateEntry{}, false},
		{"k<float", TemplateEntry{}, false},
		{"k<float> x", TemplateEntry{}, false},
	} {
		got, ok := ParseTemplateEntry(c.in)
		if ok != c.ok || ok && !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseTemplateEntry(%q) = %#v, %v; want %#v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The source's own host names are found whatever the spelling of the
// arguments; anything else gets an instantiation of mltop's.
func TestResolveTemplateEntryFindsTheSourcesHostName(t *testing.T) {
	for _, c := range []struct{ entry, host string }{
		{"scale<float, 4>", "scale_float_4"},
		{"scale<metal::float, 4u>", "scale_float_4"},
		{"scale<float,4,false>", "scale_float_4"}, // the default written out
		{"scale<float, 0x4, 0>", "scale_float_4"},
		{"scale<half, 2, true>", "scale_float16_2"}, // from a macro list
		{"scale<float16_t, 2, 1>", "scale_float16_2"},
		{"scale<unsigned int, 5>", "typedef_style"},
		{"scale<int32_t, 3, true>", "scale_int32_3"},
	} {
		te, ok := ParseTemplateEntry(c.entry)
		if !ok {
			t.Fatalf("ParseTemplateEntry(%q) failed", c.entry)
		}
		host, inst, err := ResolveTemplateEntry(templatedSource, te)
		if err != nil || host != c.host || inst != "" {
			t.Errorf("ResolveTemplateEntry(%s) = %q, %q, %v; want %q", c.entry, host, inst, err, c.host)
		}
	}
}

func TestResolveTemplateEntryInstantiatesTheRest(t *testing.T) {
	hosts := map[string]string{}
	for _, entry := range []string{"scale<half, 4>", "scale<float, 5>", "scale<float, 4, true>", "scale<bfloat, 2>"} {
		te, _ := ParseTemplateEntry(entry)
		host, inst, err := ResolveTemplateEntry(templatedSource, te)
		if err != nil {
			t.Fatalf("%s: %v", entry, err)
		}
		if !strings.HasPrefix(host, "mltop_scale_") {
			t.Errorf("%s: host %q", entry, host)
		}
		want := `template [[host_name("` + host + `")]] [[kernel]] decltype(` + te.String() + `) ` + te.String() + `;`
		if inst != want {
			t.Errorf("%s: instantiation %q, want %q", entry, inst, want)
		}
		if prev, dup := hosts[host]; dup {
			t.Errorf("%s and %s share host name %s", prev, entry, host)
		}
		hosts[host] = entry
		// appended, it is the source's own: the same entry resolves to it
		again, more, err := ResolveTemplateEntry(templatedSource+inst+"\n", te)
		if err != nil || again != host || more != "" {
			t.Errorf("%s after appending: %q, %q, %v", entry, again, more, err)
		}
		got, err := HostNames(templatedSource + inst)
		if err != nil || !reflect.DeepEqual(got[host], Instantiation{"scale", te.Args}) {
			t.Errorf("%s: HostNames reads %v, %v", entry, got[host], err)
		}
	}
	// the same arguments spelt otherwise get the same name
	a, _ := ParseTemplateEntry("scale<half, 4>")
	b, _ := ParseTemplateEntry("scale<metal::half, 4u, false>")
	ha, _, _ := ResolveTemplateEntry(templatedSource, a)
	hb, _, _ := ResolveTemplateEntry(templatedSource, b)
	if ha != hb {
		t.Errorf("%s → %s but %s → %s", a, ha, b, hb)
	}
}

const narrowTemplates = `
template <typename T, short S, bool B, uint U>
[[kernel]] void narrow(device T* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = T(S + U); }
[[kernel]] void plain(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = 0; }
template <typename T> inline void helper(device T* y) {}
`

func TestCheckTemplateEntryErrors(t *testing.T) {
	for _, c := range []struct {
		entry string
		src   string
		want  []string // every one in the message
	}{
		{"scale<float, 4, true, 1>", templatedSource, []string{"entry scale<float, 4, true, 1>", "gives 4 template arguments", "takes 3", "write scale<T, N, Wide>"}},
		{"scale<float>", templatedSource, []string{"entry scale<float>", "`int N`", "without a value", "write scale<T, N>"}},
		{"scael<float, 4>", templatedSource, []string{"no kernel template scael", "kernel templates: scale"}},
		{"helper<float>", narrowTemplates, []string{"no kernel template helper", "kernel templates: narrow"}},
		{"plain<float>", narrowTemplates, []string{"kernel plain is not a template", "write entry: plain"}},
		{"narrow<4, 1, true, 1>", narrowTemplates, []string{"`typename T`", "takes a type, not 4"}},
		{"narrow<float, half, true, 1>", narrowTemplates, []string{"`short S`", "not the type half"}},
		{"narrow<float, 70000, true, 1>", narrowTemplates, []string{"`short S`", "cannot hold 70000: type short holds -32768 to 32767"}},
		{"narrow<float, -1, true, -1>", narrowTemplates, []string{"`uint U`", "cannot hold -1"}},
		{"narrow<float, 1, 2, 1>", narrowTemplates, []string{"`bool B`", "2 is neither true nor false"}},
	} {
		te, ok := ParseTemplateEntry(c.entry)
		if !ok {
			t.Fatalf("ParseTemplateEntry(%q) failed", c.entry)
		}
		err := CheckTemplateEntry(c.src, te)
		if err == nil {
			t.Errorf("%s: no error", c.entry)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant %q in it", c.entry, err, w)
			}
		}
		if _, _, rerr := ResolveTemplateEntry(c.src, te); rerr == nil || rerr.Error() != err.Error() {
			t.Errorf("%s: ResolveTemplateEntry says %v, CheckTemplateEntry %v", c.entry, rerr, err)
		}
	}
	// the dtype name is a type wherever it stands
	dt := TemplateEntry{Name: "narrow", Args: []string{"T", "T", "true", "1"}, Written: "narrow<T, T, true, 1>", DType: "T"}
	if err := CheckTemplateEntry(narrowTemplates, dt); err == nil || !strings.Contains(err.Error(), "entry narrow<T, T, true, 1>: template parameter `short S` of narrow takes a value of type short, not T, the dtype's type") {
		t.Errorf("the dtype name for a value: %v", err)
	}
	// values not known yet ("") and values in range pass
	for _, args := range [][]string{{"float", "", "", ""}, {"half", "-32768", "false", "4294967295u"}, {"T", "(2 * 3)", "1", "0x10"}, {"T", "", "", ""}} {
		if err := CheckTemplateEntry(narrowTemplates, TemplateEntry{Name: "narrow", Args: args}); err != nil {
			t.Errorf("narrow%v: %v", args, err)
		}
	}
}

// A type alias inside a template argument (MLX's scan instantiates
// contiguous_scan<bfloat16_t, bfloat16_t, CumSum<bfloat16_t>, …>) reads as
// its Metal name: the entry k<bfloat, Sum<bfloat>> finds that host name
// instead of instantiating the same function a second time (g++: duplicate
// explicit instantiation).
func TestResolveTemplateEntryAliasInsideArguments(t *testing.T) {
	src := `template <typename U> struct Sum { U init = 0; };
template <typename T, typename Op>
[[kernel]] void k(device T* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = Op().init; }
#define inst(name, t) template [[host_name("k_" #name)]] [[kernel]] decltype(k<t, Sum<t>>) k<t, Sum<t>>;
inst(bfloat16, bfloat16_t)
inst(u32, uint32_t)
template <typename A, typename B> struct P { A a; B b; };
template [[host_name("k_pair")]] [[kernel]] decltype(k<P<unsigned int, float16_t>, Sum<P<unsigned int, float16_t>>>) k<P<unsigned int, float16_t>, Sum<P<unsigned int, float16_t>>>;
`
	for _, c := range []struct{ entry, host string }{
		{"k<bfloat, Sum<bfloat>>", "k_bfloat16"},
		{"k<bfloat16_t, Sum<bfloat16_t>>", "k_bfloat16"},
		{"k<uint, Sum<uint>>", "k_u32"},
		{"k<P<uint, half>, Sum<P<uint, half>>>", "k_pair"},
	} {
		te, ok := ParseTemplateEntry(c.entry)
		if !ok {
			t.Fatalf("ParseTemplateEntry(%q) failed", c.entry)
		}
		host, inst, err := ResolveTemplateEntry(src, te)
		if err != nil || host != c.host || inst != "" {
			t.Errorf("ResolveTemplateEntry(%s) = %q, %q, %v; want %q", c.entry, host, inst, err, c.host)
		}
	}
}
