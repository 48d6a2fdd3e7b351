package cuda

import (
	"encoding/binary"
	"fmt"
	"slices"

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

// paramBytes lays out a dispatch's kernel parameters in the kernel's
// order, each as the bytes the driver copies from the pointer it is given
// (as many as the parameter's size): a buffer's device address, a scalar
// in an 8-byte slot, a struct's bytes with the device address of each
// buffer its pointer fields name written at the field's offset. ptrs are
// the device addresses of d.Args, in order.
func paramBytes(d *profiler.Dispatch, ptrs []uint64) ([][]byte, error) {
	order := d.ParamOrder()
	if len(d.Structs) == 0 && len(order) != len(ptrs)+len(d.Scalars) {
		return nil, fmt.Errorf("dispatch %s orders %d parameters but has %d buffers and %d scalars", d.Name, len(order), len(ptrs), len(d.Scalars))
	}
	out := make([][]byte, len(order))
	for i, ref := range order {
		n := len(ptrs)
		switch {
		case ref.Struct:
			n = len(d.Structs)
		case ref.Scalar:
			n = len(d.Scalars)
		}
		if ref.Index < 0 || ref.Index >= n {
			return nil, fmt.Errorf("dispatch %s: parameter %d refers to %+v, beyond its %d buffers, %d scalars and %d structs", d.Name, i, ref, len(ptrs), len(d.Scalars), len(d.Structs))
		}
		switch {
		case ref.Struct:
			b, err := structBytes(d.Structs[ref.Index], ptrs)
			if err != nil {
				return nil, fmt.Errorf("dispatch %s: %w", d.Name, err)
			}
			out[i] = b
		case ref.Scalar:
			v, err := scalarSlot(d.Scalars[ref.Index])
			if err != nil {
				return nil, fmt.Errorf("dispatch %s: %w", d.Name, err)
			}
			out[i] = binary.LittleEndian.AppendUint64(nil, v)
		default:
			out[i] = binary.LittleEndian.AppendUint64(nil, ptrs[ref.Index])
		}
	}
	return out, nil
}

// structBytes is a copy of a struct parameter's bytes with its pointer
// fields set to their buffers' device addresses.
func structBytes(s profiler.StructArg, ptrs []uint64) ([]byte, error) {
	if len(s.Bytes) == 0 {
		return nil, fmt.Errorf("struct parameter %s (%s) has no bytes", s.Name, s.Type)
	}
	b := slices.Clone(s.Bytes)
	for _, p := range s.Pointers {
		if p.Offset < 0 || p.Offset+8 > len(b) || p.Arg < 0 || p.Arg >= len(ptrs) {
			return nil, fmt.Errorf("struct parameter %s (%s, %d bytes): pointer field %s at offset %d names buffer %d of %d", s.Name, s.Type, len(b), p.Field, p.Offset, p.Arg, len(ptrs))
		}
		binary.LittleEndian.PutUint64(b[p.Offset:], ptrs[p.Arg])
	}
	return b, nil
}
