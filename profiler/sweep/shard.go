package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// Shard is one part of a sweep split n ways: Index in [0, Count).
type Shard struct {
	Index, Count int
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Shard environment variables read by --shard auto.
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvJobIndex       = "JOB_COMPLETION_INDEX" // Kubernetes Indexed Job
	EnvShardCount     = "MLTOP_SHARD_COUNT"    // the count beside JOB_COMPLETION_INDEX
)

// ParseShard reads --shard: "i/n" (0 ≤ i < n), "auto" or "auto/n". auto
// takes the index from a Slurm job array (SLURM_ARRAY_TASK_ID minus
// SLURM_ARRAY_TASK_MIN, count SLURM_ARRAY_TASK_COUNT) or a Kubernetes
// Indexed Job (JOB_COMPLETION_INDEX, count from auto/n or
// MLTOP_SHARD_COUNT); a count written as auto/n wins over the environment's.
// getenv is os.Getenv outside tests.
func ParseShard(v string, getenv func(string) string) (Shard, error) {
	bad := func(why string) error {
		return fmt.Errorf("--shard %q: %s", v, why)
	}
	head, tail, hasCount := strings.Cut(v, "/")
	count := 0
	if hasCount {
		n, err := strconv.Atoi(strings.TrimSpace(tail))
		if err != nil || n < 1 {
			return Shard{}, bad("the count after / must be a whole number of shards, at least 1 (e.g. 0/4)")
		}
		count = n
	}
	if strings.TrimSpace(head) != "auto" {
		if !hasCount {
			return Shard{}, bad("write i/n with 0 ≤ i < n (e.g. 0/4), or auto")
		}
		i, err := strconv.Atoi(strings.TrimSpace(head))
		if err != nil || i < 0 || i >= count {
			return Shard{}, bad(fmt.Sprintf("the index must be a whole number from 0 to %d (shards are numbered from 0)", count-1))
		}
		return Shard{i, count}, nil
	}
	envInt := func(name string) (int, bool, error) {
		s := strings.TrimSpace(getenv(name))
		if s == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, true, bad(fmt.Sprintf("%s=%q is not a whole number", name, s))
		}
		return n, true, nil
	}
	idx, ok, err := envInt(EnvSlurmTaskID)
	if err != nil {
		return Shard{}, err
	}
	var from string
	if ok {
		from = EnvSlurmTaskID
		lo, _, err := envInt(EnvSlurmTaskMin)
		if err != nil {
			return Shard{}, err
		}
		idx -= lo
		if count == 0 {
			n, ok, err := envInt(EnvSlurmTaskCount)
			if err != nil {
				return Shard{}, err
			}
			if !ok {
				return Shard{}, bad(EnvSlurmTaskCount + " is not set: write --shard auto/N")
			}
			count = n
		}
	} else {
		idx, ok, err = envInt(EnvJobIndex)
		if err != nil {
			return Shard{}, err
		}
		if !ok {
			return Shard{}, bad(fmt.Sprintf("neither %s (Slurm job array) nor %s (Kubernetes Indexed Job) is set: give --shard i/n", EnvSlurmTaskID, EnvJobIndex))
		}
		from = EnvJobIndex
		if count == 0 {
			n, ok, err := envInt(EnvShardCount)
			if err != nil {
				return Shard{}, err
			}
			if !ok {
				return Shard{}, bad(fmt.Sprintf("%s gives the index but not the count: write --shard auto/N or set %s=N", EnvJobIndex, EnvShardCount))
			}
			count = n
		}
	}
	if count < 1 || idx < 0 || idx >= count {
		return Shard{}, bad(fmt.Sprintf("%s gives shard %d of %d: the index must be from 0 to count-1 (a Slurm array must be contiguous, e.g. --array=0-3)", from, idx, count))
	}
	return Shard{idx, count}, nil
}

// refDevice is the device costs are estimated on. It is fixed, not the
// device at hand, so that every shard of a sweep computes the same
// partition wherever it runs.
var refDevice = profiler.DeviceInfo{
	Backend: "ref", Name: "shard cost model", Units: 132, UnitName: "SM",
	TGMPerGroup: 227 << 10, TGMPerGroupOptIn: 227 << 10, TGMPerUnit: 228 << 10,
	MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048, MaxGroupsPerUnit: 32,
	RegistersPerUnit: 65536, SIMDWidth: 32, MemoryBytes: 80 << 30, CacheBytes: 50 << 20,
}

// Cost model constants: the reference device's throughput, and the
// seconds a compile is taken to cost.
const (
	refFLOPS       = 100e12
	refBandwidth   = 2e12
	compileSeconds = 0.5
)

// Cost estimates the seconds job takes: a compile, the warm-up, and the
// measurement — at least min_time, about 100 kernel runs on the reference
// device, at most time_limit. A spec whose Plan fails (it will be recorded
// as invalid) costs a compile.
func Cost(j profiler.Job) float64 {
	o := j.Options.WithDefaults()
	// Plan receives a validated spec: resolve (defaults, schema, rules) first.
	f, full, err := profiler.Resolve(j.Spec, refDevice)
	if err != nil {
		return compileSeconds
	}
	p, err := f.Plan(full, refDevice)
	if err != nil || p == nil {
		return compileSeconds
	}
	kernel := math.Max(p.FLOPs/refFLOPS, p.Bytes/refBandwidth)
	measure := math.Min(math.Max(o.Stop.MinTime, 100*kernel), o.Stop.MaxTime)
	return compileSeconds + math.Max(o.WarmupTime(), kernel) + measure
}

// Partition returns the jobs of shard sh, in their sweep order. Jobs are
// keyed by Spec.Key (kernel, dtype, sorted knobs, dims and flags), so the
// partition does not depend on the order of the YAML's keys or sweeps;
// jobs with one key go to one shard. Keys are dealt largest cost first,
// ties by key, each to the shard with the least cost so far (ties to the
// lowest index): the n shards cover the sweep exactly once, and no shard
// costs more than total/n plus the largest job's cost.
func Partition(jobs []profiler.Job, sh Shard) []profiler.Job {
	owner := Assign(jobs, sh.Count)
	var out []profiler.Job
	for _, j := range jobs {
		if owner[j.Spec.Key()] == sh.Index {
			out = append(out, j)
		}
	}
	return out
}

// Assign maps each job's key to its shard of n.
func Assign(jobs []profiler.Job, n int) map[string]int {
	cost := map[string]float64{}
	for _, j := range jobs {
		cost[j.Spec.Key()] += Cost(j)
	}
	for k, c := range cost { // to the µs: the sum over a key's jobs must not depend on their order
		cost[k] = math.Round(c*1e6) / 1e6
	}
	keys := make([]string, 0, len(cost))
	for k := range cost {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(cost[b], cost[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	load := make([]float64, n)
	owner := make(map[string]int, len(keys))
	for _, k := range keys {
		best := 0
		for i := 1; i < n; i++ {
			if load[i] < load[best] {
				best = i
			}
		}
		owner[k] = best
		load[best] += cost[k]
	}
	return owner
}

// Owns says whether the job at index i of a sweep's stream (Stream.Each)
// belongs to shard s: jobs are dealt in turn, i mod Count. Every shard
// walks the same stream, so the shards cover the sweep exactly once
// without any of them holding its specs; neighbours in the stream (the
// same shape, similar cost) go to different shards, which keeps the
// shards' costs close.
func (s Shard) Owns(i int) bool { return i%s.Count == s.Index }

// Parts is Count (run.SweepShard).
func (s Shard) Parts() int { return s.Count }
