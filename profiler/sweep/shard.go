package sweep

import (
	"fmt"
	"strconv"
	"strings"
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

// Owns says whether the job at index i of a sweep's stream (Stream.Each)
// belongs to shard s when the jobs are dealt in turn, i mod Count: the
// dealing of a sweep too large to hold (run.Sweep deals a smaller one by
// shape, run.DealGroups). Every shard walks the same stream, so the shards
// cover the sweep exactly once without any of them holding its specs.
func (s Shard) Owns(i int) bool { return i%s.Count == s.Index }

// Parts is Count (run.SweepShard).
func (s Shard) Parts() int { return s.Count }

// Part is Index (run.SweepShard).
func (s Shard) Part() int { return s.Index }
