package cuda

import (
	"encoding/binary"
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// scalarSlot is a scalar's parameter slot: its C bytes, little endian, in
// the low bytes of 8.
func scalarSlot(s profiler.Scalar) (uint64, error) {
	b := s.Bytes()
	if b == nil {
		return 0, fmt.Errorf("scalar %s has type %q, which CUDA kernels cannot take here", s.Name, s.Kind)
	}
	var slot [8]byte
	copy(slot[:], b)
	return binary.LittleEndian.Uint64(slot[:]), nil
}
