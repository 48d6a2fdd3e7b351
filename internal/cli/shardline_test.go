package cli

import (
	"testing"

	"github.com/mltop/mltop/profiler/run"
)

// The shard line gives the shard's own count and says how the sweep was
// dealt.
func TestShardLine(t *testing.T) {
	for _, c := range []struct {
		p    run.SweepPlan
		want string
	}{
		{run.SweepPlan{Specs: 20, Invalid: 3, Skipped: 2, Exact: true, Deal: run.ShardDeal{Part: 1, Parts: 4, ByShape: true, Shapes: 12, Mine: 3}},
			"shard 1/4: 25 specs, 3 of the sweep's 12 shapes (whole shapes are dealt to the 4 shards, balanced by cost)"},
		{run.SweepPlan{Specs: 25, Exact: true, Deal: run.ShardDeal{Part: 0, Parts: 4, ByShape: true, Shapes: 1, Mine: 1, Split: 1}},
			"shard 0/4: 25 specs, 1 of the sweep's 1 shape (whole shapes are dealt to the 4 shards, balanced by cost; 1 shape dearer than a shard's share is cut over several shards)"},
		{run.SweepPlan{Specs: 40, Exact: true, Deal: run.ShardDeal{Part: 2, Parts: 8, ByShape: true, Shapes: 3, Mine: 2, Split: 3}},
			"shard 2/8: 40 specs, 2 of the sweep's 3 shapes (whole shapes are dealt to the 8 shards, balanced by cost; 3 shapes dearer than a shard's share are cut over several shards)"},
		{run.SweepPlan{Specs: 1_620_000, Exact: false, Deal: run.ShardDeal{Part: 3, Parts: 4}},
			"shard 3/4: about 1620000 specs (the sweep's specs are dealt to the 4 shards in turn)"},
		{run.SweepPlan{Specs: 7, Exact: true, Deal: run.ShardDeal{Part: 0, Parts: 2}},
			"shard 0/2: 7 specs (the sweep's specs are dealt to the 2 shards in turn)"},
	} {
		if got := shardLine(c.p); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
