package run

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/mltop/mltop/profiler"
)

// Claims let the shards of one sweep that run at the same time take each
// other's unstarted specs at the end (--claims DIR), so that they finish
// together instead of each at the end of its own deal: a shard claims a
// spec just before it runs it and runs it only when the claim is its own.
type Claims interface {
	// Claim says whether this shard may run the spec of key: true when it
	// claimed it now, or when a run of this same shard claimed it before
	// (a --resume after an interruption); false when another shard holds
	// it.
	Claim(key string) (bool, error)
}

// DirClaims are Claims kept as files in one directory every shard reaches
// (one host, or a filesystem they share). A claim is a hard link, named
// after the spec's key, to a file that names the shard: link(2) fails
// when the name exists, atomically, on local filesystems and NFS alike,
// and the claim never exists without its content.
type DirClaims struct {
	dir         string
	part, parts int
	mu          sync.Mutex
	tmpl        string // the file the claims link to
}

// claimSplitFile names, in a claims directory, the split of the sweep
// that uses it: shards of another split would misread its claims.
const claimSplitFile = "split"

// OpenDirClaims opens dir (made when missing) for shard part of parts.
// It fails, naming the directory and what to do, when dir cannot be
// written or holds the claims of a sweep split another number of ways.
func OpenDirClaims(dir string, part, parts int) (*DirClaims, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--claims %s: %v: give a directory every shard can create files in", dir, err)
	}
	split := fmt.Sprintf("%d\n", parts)
	path := filepath.Join(dir, claimSplitFile)
	if err := writeNew(path, split); errors.Is(err, fs.ErrExist) {
		had, rerr := os.ReadFile(path)
		if rerr != nil {
			return nil, fmt.Errorf("--claims %s: %v", dir, rerr)
		}
		if string(had) != split {
			return nil, fmt.Errorf("--claims %s holds the claims of a sweep split %s ways, and this shard is one of %d: give each sweep and split its own --claims directory (an empty or new one)", dir, strings.TrimSpace(string(had)), parts)
		}
	} else if err != nil {
		return nil, fmt.Errorf("--claims %s: %v: give a directory every shard can create files in", dir, err)
	}
	c := &DirClaims{dir: dir, part: part, parts: parts}
	if err := c.newTemplate(); err != nil {
		return nil, err
	}
	return c, nil
}

// writeNew writes s to path, which must not exist yet (fs.ErrExist when
// it does). The file appears whole: it is written aside and linked into
// place, so a shard starting at the same moment never reads it half
// written.
func writeNew(path, s string) error {
	tmp, err := writeTemp(filepath.Dir(path), ".new-*", s)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Link(tmp, path)
}

// writeTemp writes s to a new file in dir named after pattern
// (os.CreateTemp) and returns its path; nothing is left on an error.
func writeTemp(dir, pattern, s string) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	_, err = io.WriteString(f, s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// owner is what a claim of this shard holds.
func (c *DirClaims) owner() string { return fmt.Sprintf("shard %d/%d\n", c.part, c.parts) }

// newTemplate makes the file the next claims link to (a fresh one when a
// filesystem's limit of links to one file is reached).
func (c *DirClaims) newTemplate() error {
	tmpl, err := writeTemp(c.dir, ".owner-*", c.owner())
	if err != nil {
		return fmt.Errorf("--claims %s: %v: give a directory every shard can create files in", c.dir, err)
	}
	if c.tmpl != "" {
		os.Remove(c.tmpl)
	}
	c.tmpl = tmpl
	return nil
}

// Close removes the template file; the claims stay.
func (c *DirClaims) Close() error { return os.Remove(c.tmpl) }

// Claim links the template to the key's name.
func (c *DirClaims) Claim(key string) (bool, error) {
	sum := sha256.Sum256([]byte(key))
	name := filepath.Join(c.dir, hex.EncodeToString(sum[:16]))
	c.mu.Lock()
	defer c.mu.Unlock()
	err := os.Link(c.tmpl, name)
	if errors.Is(err, syscall.EMLINK) {
		if err = c.newTemplate(); err == nil {
			err = os.Link(c.tmpl, name)
		}
	}
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, err
	}
	had, err := os.ReadFile(name)
	if err != nil {
		return false, err
	}
	return string(had) == c.owner(), nil
}

// shardClaims is a shard's Claims during one sweep. What is claimed is a
// unit: the specs of one shape the deal gave to one shard, in runs of at
// most ClaimUnitSpecs (every spec on its own for a sweep dealt spec by
// spec). A unit is run whole by the shard that claims it, so two shards
// that meet at the end make one shape's inputs, upload and reference at
// most once per unit. The owner claims a unit when it reaches the unit's
// first spec; a shard that finished its own claims
// the others' units from the last one. shardClaims knows which specs are
// the other shards' (taken, when this one claims them) and counts what
// the shard gave and took.
type shardClaims struct {
	c      Claims
	unitOf map[string]string // Spec.Key → its unit's claim key (nil: the Spec.Key)
	others map[string]bool   // Spec.Key of the other shards' specs
	log    io.Writer

	mu           sync.Mutex
	units        map[string]bool // the claim of each unit met so far: this shard's or not
	given, taken int
	failed       bool // a claim could not be made: none is tried again
	tailSkipped  int  // the others' specs already in the --resume file
}

// run says whether this shard runs j now. Once a claim cannot be made
// (the directory went away), the shard claims nothing more: it runs its
// own specs all the same — `mltop merge` keeps one row of a spec two
// shards ran — and leaves the other shards' to them, so nothing is lost.
// (Trying again could take the rest of another shard's unit whose first
// spec was left to it: its owner, finding the unit claimed, would skip
// that spec too.) Units met before keep what their claim said.
func (s *shardClaims) run(j profiler.Job) bool {
	if s == nil {
		return true
	}
	key := j.Spec.Key()
	other := s.others[key]
	unit := s.unitOfKey(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	ok, seen := s.units[unit]
	if !seen {
		if s.failed {
			return !other
		}
		var err error
		if ok, err = s.c.Claim(unit); err != nil {
			s.failed = true
			if s.log != nil {
				fmt.Fprintf(s.log, "mltop: --claims: %v: this shard runs its own specs without claiming them and takes no other shard's\n", err)
			}
			return !other
		}
		if s.units == nil {
			s.units = map[string]bool{}
		}
		s.units[unit] = ok
	}
	switch {
	case ok && other:
		s.taken++
	case !ok && !other:
		s.given++
	}
	return ok
}

// unitOfKey is the claim key of the unit of the spec of key.
func (s *shardClaims) unitOfKey(key string) string {
	if u, ok := s.unitOf[key]; ok {
		return u
	}
	return key
}

// left counts, of jobs taken from the feed and not run, those this shard
// runs as far as its claims tell now: its own and those of units it
// claimed, not those of units another shard holds nor the other shards'
// unclaimed ones (all of them without claims).
func (s *shardClaims) left(jobs []profiler.Job) int {
	if s == nil {
		return len(jobs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, j := range jobs {
		key := j.Spec.Key()
		ok, seen := s.units[s.unitOfKey(key)]
		if seen && ok || !seen && !s.others[key] {
			n++
		}
	}
	return n
}

// other says whether j is another shard's spec (false without claims).
func (s *shardClaims) other(j profiler.Job) bool { return s != nil && s.others[j.Spec.Key()] }

// toRun is n, the shard's own specs to run, less those another shard ran
// and plus those it took so far: what the progress counts.
func (s *shardClaims) toRun(n int) int {
	if s == nil {
		return n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return n + s.taken - s.given
}

// settle turns the summary of a shard's own specs (Total, Skipped) into
// that of the specs it has rows of: less those another shard ran, plus
// those it took, now or in the run --resume goes on from.
func (s *shardClaims) settle(sum Summary) Summary {
	if s == nil {
		return sum
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sum.Given, sum.Taken = s.given, s.taken
	sum.Total += s.taken - s.given + s.tailSkipped
	sum.Skipped += s.tailSkipped
	return sum
}

// ClaimUnitSpecs is the most specs of one unit: a shape the deal gave one
// shard is claimed in runs of this many specs, so that what the last
// shard still holds at the end is at most that much (on a 4×H200 host a
// whole shape's 24 attention configs were 2 s, and the last shard ended
// 1.6 s after the others), while the shape's inputs are made at most
// once per run of it.
const ClaimUnitSpecs = 8

// unitKeys are the claim keys of the jobs of a sweep dealt by shape: a
// job's shape, the shard the deal gave it to (a shape cut over several
// shards is a unit on each) and which run of ClaimUnitSpecs of those
// specs it is in, counted in the sweep's order.
func (d *dealtShard) unitKeys() []string {
	keys := make([]string, len(d.jobs))
	seen := map[string]int{}
	for k, j := range d.jobs {
		base := fmt.Sprintf("%s|dealt to %d/%d", jobShape(j), d.to[k], d.deal.Parts)
		keys[k] = fmt.Sprintf("%s|run %d", base, seen[base]/ClaimUnitSpecs)
		seen[base]++
	}
	return keys
}

// othersTail is the specs of the other shards of a sweep dealt by shape,
// turned by opts, without those in skip (counted in claims.tailSkipped):
// the units a shard that finished its own may take, the cheapest first
// (by their deal cost; the later in the sweep on a tie), so that what a
// shard takes at the end fills the gap in small steps; each unit's specs
// in the sweep's order.
func othersTail(d *dealtShard, opts func(profiler.Options) profiler.Options, skip map[string]bool, claims *shardClaims) jobSource {
	return func(ctx context.Context, yield func(profiler.Job) bool) error {
		var order []string // units, by their first index
		members := map[string][]int{}
		for i := range d.jobs {
			if d.Owns(i) {
				continue
			}
			u := claims.unitOfKey(d.jobs[i].Spec.Key())
			if _, ok := members[u]; !ok {
				order = append(order, u)
			}
			members[u] = append(members[u], i)
		}
		slices.Reverse(order)
		cost := map[string]int64{}
		for u, is := range members {
			for _, i := range is {
				cost[u] += d.cost[i]
			}
		}
		slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(cost[a], cost[b]) })
		for _, u := range order {
			for _, i := range members[u] {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				j := d.jobs[i]
				if opts != nil {
					j.Options = opts(j.Options)
				}
				if skip[j.Spec.Key()] {
					claims.mu.Lock()
					claims.tailSkipped++
					claims.mu.Unlock()
					continue
				}
				if !yield(j) {
					return nil
				}
			}
		}
		return nil
	}
}

// thenSource walks a, then b.
func thenSource(a, b jobSource) jobSource {
	return func(ctx context.Context, yield func(profiler.Job) bool) error {
		more := true
		if err := a(ctx, func(j profiler.Job) bool { more = yield(j); return more }); err != nil || !more {
			return err
		}
		return b(ctx, yield)
	}
}
