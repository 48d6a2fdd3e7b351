package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// TestUnknownKeySuggests: a misspelt key gets a did-you-mean from the keys
// of the mapping it is in (a buffer's keys for a buffer), at file:line:col.
func TestUnknownKeySuggests(t *testing.T) {
	base := usertest.Manifest("t_keys")
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"top level", "dispatches:", "dispatchez:", []string{`unknown field "dispatchez": check the spelling; did you mean dispatches? the keys at the top level are name, description, sources`}},
		{"in a buffer", "out: true", "outt: true", []string{`unknown field "outt": check the spelling; did you mean out? the keys at buffers[1] are name, dtype, shape, init, out`}},
		{"in a dispatch", "grid:", "gird:", []string{`unknown field "gird": check the spelling; did you mean grid? the keys at dispatches[0] are name, entry, grid`}},
		{"far from any key", "dispatches:", "zzzzzzzzzz:", []string{`unknown field "zzzzzzzzzz": check the spelling; the keys at the top level are name, description`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.from) {
				t.Fatalf("the manifest lacks %q", tc.from)
			}
			path := usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(base, tc.from, tc.to, 1), "k.cu": usertest.Source})
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") {
				t.Errorf("error %q does not lead with the file's position", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}
