package cuda

import (
	"encoding/binary"
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// scalarSlot is a scalar's parameter slot: its C bytes, little endian, in
// the low bytes of 8.
func scalarSlot(s profiler.Scalar) (uint64, error) {
	v, ok := s.Slot()
	if !ok {
		return 0, fmt.Errorf("scalar %s has type %q, which CUDA kernels cannot take here", s.Name, s.Kind)
	}
	return v, nil
}

// paramBytes lays out a dispatch's kernel parameters in the kernel's
// order, each as the bytes the driver copies from the pointer it is given
// (as many as the parameter's size): a buffer's device address, a scalar
// in an 8-byte slot, a struct's bytes with the device address of each
// buffer its pointer fields name written at the field's offset. ptrs are
// the device addresses of d.Args, in order. It runs on every launch: the
// parameters share one allocation.
func paramBytes(d *profiler.Dispatch, ptrs []uint64) ([][]byte, error) {
	order := d.ParamOrder()
	if len(d.Structs) == 0 && len(order) != len(ptrs)+len(d.Scalars) {
		return nil, fmt.Errorf("dispatch %s orders %d parameters but has %d buffers and %d scalars", d.Name, len(order), len(ptrs), len(d.Scalars))
	}
	total := 0
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
		if ref.Struct {
			total += len(d.Structs[ref.Index].Bytes)
		} else {
			total += 8
		}
	}
	out := make([][]byte, len(order))
	backing := make([]byte, 0, total)
	for i, ref := range order {
		at := len(backing)
		switch {
		case ref.Struct:
			var err error
			if backing, err = appendStruct(backing, d.Structs[ref.Index], ptrs); err != nil {
				return nil, fmt.Errorf("dispatch %s: %w", d.Name, err)
			}
		case ref.Scalar:
			v, err := scalarSlot(d.Scalars[ref.Index])
			if err != nil {
				return nil, fmt.Errorf("dispatch %s: %w", d.Name, err)
			}
			backing = binary.LittleEndian.AppendUint64(backing, v)
		default:
			backing = binary.LittleEndian.AppendUint64(backing, ptrs[ref.Index])
		}
		out[i] = backing[at:len(backing):len(backing)]
	}
	return out, nil
}

// appendStruct appends a struct parameter's bytes to dst with its pointer
// fields set to their buffers' device addresses.
func appendStruct(dst []byte, s profiler.StructArg, ptrs []uint64) ([]byte, error) {
	if len(s.Bytes) == 0 {
		return nil, fmt.Errorf("struct parameter %s (%s) has no bytes", s.Name, s.Type)
	}
	at := len(dst)
	dst = append(dst, s.Bytes...)
	b := dst[at:]
	for _, p := range s.Pointers {
		if p.Offset < 0 || p.Offset+8 > len(b) || p.Arg < 0 || p.Arg >= len(ptrs) {
			return nil, fmt.Errorf("struct parameter %s (%s, %d bytes): pointer field %s at offset %d names buffer %d of %d", s.Name, s.Type, len(b), p.Field, p.Offset, p.Arg, len(ptrs))
		}
		binary.LittleEndian.PutUint64(b[p.Offset:], ptrs[p.Arg])
	}
	return dst, nil
}

// ParamBytes is paramBytes for a backend that places the buffers itself
// (cuda/cudaemu: ptrs are placeholders it overwrites where ParamRelocs
// says, once the buffers have addresses).
func ParamBytes(d *profiler.Dispatch, ptrs []uint64) ([][]byte, error) { return paramBytes(d, ptrs) }

// ParamReloc says that parameter Param holds, at byte Offset, the address
// of buffer Arg (an index of the dispatch's Args).
type ParamReloc struct{ Param, Offset, Arg int }

// ParamRelocs lists where ParamBytes's parameters hold buffer addresses:
// a pointer parameter at its offset 0, a struct's pointer fields at theirs.
func ParamRelocs(d *profiler.Dispatch) []ParamReloc {
	var out []ParamReloc
	for i, ref := range d.ParamOrder() {
		switch {
		case ref.Struct:
			for _, p := range d.Structs[ref.Index].Pointers {
				out = append(out, ParamReloc{Param: i, Offset: p.Offset, Arg: p.Arg})
			}
		case !ref.Scalar:
			out = append(out, ParamReloc{Param: i, Arg: ref.Index})
		}
	}
	return out
}
