package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// versionedFamily is a family whose version the test sets.
type versionedFamily struct {
	profiler.Family
	v string
}

func (f versionedFamily) Version() string { return f.v }

// TestSyncVersion: a worker whose family version differs from the
// request's reloads; a reload that fails, or that does not reach the
// request's version, is reported with what to do.
func TestSyncVersion(t *testing.T) {
	base, err := profiler.Lookup("test_scale")
	if err != nil {
		t.Fatal(err)
	}
	defer profiler.Replace(base)
	profiler.Replace(versionedFamily{base, "v1"})
	req := func(v string) workerRequest {
		return workerRequest{Spec: profiler.Spec{Kernel: "test_scale"}, Version: v}
	}
	reloads := 0
	to := func(v string) func() error {
		return func() error { reloads++; profiler.Replace(versionedFamily{base, v}); return nil }
	}
	for _, c := range []struct {
		name    string
		req     workerRequest
		reload  func() error
		reloads int
		err     string
	}{
		{"same version", req("v1"), to("v2"), 0, ""},
		{"built-in (no version)", req(""), to("v2"), 0, ""},
		{"newer: reloads", req("v2"), to("v2"), 1, ""},
		{"changed again", req("v9"), to("v3"), 1, "changed again while the worker reloaded them"},
		{"reload fails", req("v4"), func() error { reloads++; return errors.New("kernel.yaml:3:1: bogus") }, 1, "could not reload test_scale: kernel.yaml:3:1: bogus"},
		{"cannot reload", req("v5"), nil, 0, "cannot reload it: restart mltop"},
	} {
		reloads = 0
		err := syncVersion(c.req, c.reload)
		if reloads != c.reloads || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %d reloads (want %d), err %v (want %q)", c.name, reloads, c.reloads, err, c.err)
		}
	}
}
