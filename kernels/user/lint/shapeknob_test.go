package lint

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// mltop check notes a knob that a buffer's shape makes a shape knob, at
// that shape, with how to say so in the manifest; not one marked
// `shape: true`.
func TestCheckNotesImpliedShapeKnob(t *testing.T) {
	m := strings.Replace(usertest.Manifest("implied_shape_k"), "shape: [rows, cols], out: true", "shape: [rows, WG], out: true", 1)
	for _, c := range []struct {
		name, manifest string
		want           bool
	}{
		{"implied", m, true},
		{"marked", strings.Replace(m, "default: 64}", "default: 64, shape: true}", 1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": c.manifest, "k.cu": usertest.Source})
			r := Check(path, noTools(t)).Manifests[0]
			var said bool
			for _, f := range r.Findings {
				said = said || f.Level == Note && f.Step == StepLoad && f.Line == 12 &&
					strings.Contains(f.Msg, "knob WG is in the shape of buffer Y, so it is a shape knob") && strings.Contains(f.Msg, "write `shape: true` on WG")
			}
			if said != c.want {
				t.Errorf("noted %v, want %v:\n%s", said, c.want, findingsOf(r))
			}
		})
	}
}
