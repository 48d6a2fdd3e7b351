package scaffold

import (
	"strings"
	"testing"
)

// hostNamesSource is a Metal template kernel whose instances are its
// [[host_name]] explicit instantiations (mistral.rs's ssm.metal writes
// them out with every parameter; MLX's with decltype), over a value
// parameter and a type parameter.
const hostNamesSource = `#include <metal_stdlib>
using namespace metal;

template <typename T, int cf>
[[kernel]] void scan(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * cf;
}

template [[host_name("scan_c1")]] [[kernel]] void scan<float, 1>(const device float*, device float*, uint);
template [[host_name("scan_c2")]] [[kernel]] void scan<float, 2>(const device float*, device float*, uint);
template [[host_name("scan_c4_h")]] [[kernel]] decltype(scan<half, 4>) scan<half, 4>;
`

// The instances set the value parameter's knob: all their values, the
// default that of the instance --entry names (else the first); the type
// parameter stays the dtype's (no instance fixes the buffers' type); an
// unknown name still lists the kernels.
func TestMetalHostNameInstances(t *testing.T) {
	for _, c := range []struct {
		entries []string
		want    []string
		err     string
	}{
		{nil, []string{`cf: {values: [1, 2, 4], default: 1}`, `[[host_name]] instances at lines 10, 11, 12`, `entry: "scan<T, cf>"`, `dtypes: [f32, f16, bf16]`}, ""},
		{[]string{"scan_c2"}, []string{`cf: {values: [1, 2, 4], default: 2}`, `(the default: the one at line 11)`, `entry: "scan<T, cf>"`}, ""},
		{[]string{"scan_c8"}, nil, `has no kernel "scan_c8" (kernels found: scan)`},
	} {
		res, err := Manifest(Request{Name: "my_scan", SrcPath: "/w/k.metal", Src: hostNamesSource, Entries: c.entries, Dir: "/w"})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.entries, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.entries, err)
		}
		for _, w := range c.want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("%v: manifest lacks %q:\n%s", c.entries, w, res.Text)
			}
		}
	}
}
