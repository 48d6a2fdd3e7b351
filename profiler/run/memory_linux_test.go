package run

import "testing"

func TestMemAvailableAndCgroup(t *testing.T) {
	if n := memAvailable("MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   16000000 kB\n"); n != 16000000<<10 {
		t.Errorf("MemAvailable %d", n)
	}
	if n := memAvailable("MemTotal: 1 kB\n"); n != 0 {
		t.Errorf("missing MemAvailable gave %d", n)
	}
	cases := []struct {
		max, cur string
		want     int64
		ok       bool
	}{
		{"max", "123", 0, false},
		{"", "", 0, false},
		{"1073741824", "73741824", 1<<30 - 73741824, true},
		{"100", "200", 0, true},
	}
	for _, c := range cases {
		got, ok := cgroupRoom(c.max, c.cur)
		if got != c.want || ok != c.ok {
			t.Errorf("cgroupRoom(%q, %q) = %d, %v", c.max, c.cur, got, ok)
		}
	}
}
