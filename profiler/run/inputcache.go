package run

// inputCache keeps the generated inputs of the last few shapes (most
// recent last), so a sweep that alternates shapes or flags (causal
// false/true inside a knob sweep) does not regenerate them every spec.
type inputCache struct {
	sets         []*inputSet
	cur          *inputSet // the spec being run
	zero, poison []byte    // slabs for zero and poison buffers (see slab)
}

type inputSet struct {
	key   string
	data  map[string][]float32
	raw   map[string][]byte // data encoded in the buffer's dtype, as uploaded
	bytes int64
	// ready is closed when a set made ahead (prefetchHostWork) is filled;
	// nil for a set made in place. ahead is the bytes it was made ahead
	// with until a spec uses it (0 then).
	ready chan struct{}
	ahead int64
}

// aheadBytes is what the sets made ahead and not used yet hold.
func (c *inputCache) aheadBytes() int64 {
	var n int64
	for _, s := range c.sets {
		n += s.ahead
	}
	return n
}

// find returns the set for key, or nil.
func (c *inputCache) find(key string) *inputSet {
	for _, s := range c.sets {
		if s.key == key {
			return s
		}
	}
	return nil
}

// Input cache bounds: the host memory the input cache holds for shapes
// other than the current one (which is always kept) is an eighth of the
// host's available memory shared by the workers of one host, within
// these bounds. A shape's inputs are made ahead of it (prefetchHostWork)
// only when they fit in half of it: a large shape's inputs take a second
// or more to generate, and made in place the GPU waits for them.
const (
	minInputCache int64 = 1 << 30
	maxInputCache int64 = 16 << 30
)

// keptInputSets bounds how many shapes' inputs the cache keeps besides
// the current one and those made ahead and not used yet: the last few,
// for a sweep or a session that comes back to a shape. Without it a
// sweep of millions of small shapes kept every shape it passed, up to
// the byte budget (a gigabyte or more), its memory growing with the
// sweep.
const keptInputSets = 8

// inputBudget is the input cache's bound for one of workers workers on a
// host with avail bytes of memory left (0: unknown).
func inputBudget(avail int64, workers int) int64 {
	return min(max(avail/int64(8*max(workers, 1)), minInputCache), maxInputCache)
}

// use makes the set for key current (creating it), and drops the least
// recently used others beyond budget bytes.
func (c *inputCache) use(key string, budget int64) *inputSet {
	var set *inputSet
	for i, s := range c.sets {
		if s.key == key {
			set = s
			c.sets = append(c.sets[:i], c.sets[i+1:]...)
			break
		}
	}
	if set == nil {
		set = &inputSet{key: key, data: map[string][]float32{}, raw: map[string][]byte{}}
	}
	// Newest first: within the byte budget, the sets made ahead and the
	// last keptInputSets others stay.
	var total int64
	kept, used := 0, 0
	for i := len(c.sets) - 1; i >= 0; i-- {
		s := c.sets[i]
		if total += s.bytes; total > budget {
			break
		}
		if s.ahead == 0 {
			if used++; used > keptInputSets {
				continue
			}
		}
		kept++
		c.sets[len(c.sets)-kept] = s
	}
	c.sets = append(c.sets[len(c.sets)-kept:], set)
	c.cur = set
	if set.ahead > 0 {
		// Sets made ahead before this one were passed by (another device
		// took their shape, or the order changed): they no longer hold
		// room from the next shapes made ahead, and age out as any other.
		for _, s := range c.sets {
			if s == set {
				break
			}
			s.ahead = 0
		}
	}
	set.ahead = 0
	return set
}
