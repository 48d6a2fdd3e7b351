//go:build linux

package cuda

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

type buffer struct {
	ptr  uint64
	size int64
}

func (b *buffer) Size() int64 { return b.size }

func (b *backend) alloc(n int64) (*buffer, error) {
	if n <= 0 {
		n = 1
	}
	buf := &buffer{size: n}
	// the size rounded to the granule: every buffer starts a page (AllocGranuleEnv)
	if err := b.check(b.drv.call("cuMemAlloc_v2", b.drv.cuMemAlloc, uintptr(unsafe.Pointer(&buf.ptr)), uintptr(roundAlloc(n, allocGranule())))); err != nil {
		return nil, err
	}
	return buf, nil
}

func (b *backend) Alloc(n int64) (profiler.Buffer, error) {
	var buf *buffer
	err := b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		var err error
		buf, err = b.alloc(n)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("allocating %s on the GPU: %w", units.Bytes(n), err)
	}
	return buf, nil
}

func (b *backend) Free(x profiler.Buffer) {
	buf, ok := x.(*buffer)
	if !ok || buf == nil || buf.ptr == 0 {
		return
	}
	b.do(func() error {
		b.drv.call("cuMemFree_v2", b.drv.cuMemFree, uintptr(buf.ptr))
		buf.ptr = 0
		return nil
	})
}

func asBuffer(x profiler.Buffer) (*buffer, error) {
	buf, ok := x.(*buffer)
	if !ok || buf == nil || buf.ptr == 0 {
		return nil, fmt.Errorf("not a live CUDA buffer: %T", x)
	}
	return buf, nil
}

func (b *backend) Upload(x profiler.Buffer, src []byte) error {
	buf, err := asBuffer(x)
	if err != nil {
		return err
	}
	if int64(len(src)) > buf.size {
		return fmt.Errorf("upload of %d B into a %d B buffer", len(src), buf.size)
	}
	if len(src) == 0 {
		return nil
	}
	return b.onStream(func() error {
		return b.copyIn(buf.ptr, src)
	})
}

// copyIn enqueues a copy of src to device address dst on the stream the
// kernels run on. A synchronous copy from pageable memory returns once
// the bytes are staged, before they reach the device, and the kernels'
// non-blocking stream does not wait for it: a kernel launched next could
// read the old bytes. On the CUDA thread.
func (b *backend) copyIn(dst uint64, src []byte) error {
	return b.check(b.drv.call("cuMemcpyHtoDAsync_v2", b.drv.cuMemcpyHtoDAsync, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), b.stream))
}

func (b *backend) Download(x profiler.Buffer, dst []byte) error {
	buf, err := asBuffer(x)
	if err != nil {
		return err
	}
	if int64(len(dst)) > buf.size {
		return fmt.Errorf("download of %d B from a %d B buffer", len(dst), buf.size)
	}
	if len(dst) == 0 {
		return nil
	}
	return b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		return b.check(b.drv.call("cuMemcpyDtoH_v2", b.drv.cuMemcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(buf.ptr), uintptr(len(dst))))
	})
}

// Copy copies src into dst on the device (see profiler.Copier).
func (b *backend) Copy(dst, src profiler.Buffer) error {
	d, err := asBuffer(dst)
	if err != nil {
		return err
	}
	sb, err := asBuffer(src)
	if err != nil {
		return err
	}
	if d.size != sb.size {
		return fmt.Errorf("copy of a %d-byte buffer into a %d-byte one", sb.size, d.size)
	}
	return b.onStream(func() error {
		return b.check(b.drv.call("cuMemcpyDtoDAsync_v2", b.drv.cuMemcpyDtoDAsync, uintptr(d.ptr), uintptr(sb.ptr), uintptr(d.size), b.stream))
	})
}

// Fill sets every byte of a buffer on the device (see profiler.Filler).
func (b *backend) Fill(x profiler.Buffer, value byte) error {
	buf, err := asBuffer(x)
	if err != nil {
		return err
	}
	return b.onStream(func() error {
		if buf.size%4 == 0 { // a word at a time: a large poison fill took 0.8 ms by bytes
			word := uint32(value) * 0x01010101
			return b.check(b.drv.call("cuMemsetD32Async", b.drv.cuMemsetD32Async, uintptr(buf.ptr), uintptr(word), uintptr(buf.size/4), b.stream))
		}
		return b.check(b.drv.call("cuMemsetD8Async", b.drv.cuMemsetD8Async, uintptr(buf.ptr), uintptr(value), uintptr(buf.size), b.stream))
	})
}

// gatherMin: a download of more ranges than this gathers them on the
// device first (one asynchronous device copy each, then one copy to the
// host) instead of one synchronous copy per range: a 256-row check of a
// large output took 256 trips through the driver.
const gatherMin = 8

// DownloadRanges copies parts of a buffer (see profiler.RangeDownloader),
// all in one trip to the CUDA thread.
func (b *backend) DownloadRanges(x profiler.Buffer, offsets []int64, dsts [][]byte) error {
	buf, err := asBuffer(x)
	if err != nil {
		return err
	}
	if err := profiler.CheckRanges(buf.size, offsets, dsts); err != nil {
		return err
	}
	var gk *kernel
	if len(offsets) > gatherMin && !b.noGather {
		k, err := b.helperKernel("mltop_gather", &b.gatherK, "the check's gather kernel")
		if err != nil {
			b.noGather = true
			fmt.Fprintf(os.Stderr, "mltop cuda: checks copy range by range: %v\n", err)
		}
		gk = k
	}
	return b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		if len(offsets) > gatherMin {
			if done, err := b.gather(buf, offsets, dsts, gk); done || err != nil {
				return err
			}
		}
		for i, off := range offsets {
			if len(dsts[i]) == 0 {
				continue
			}
			if err := b.check(b.drv.call("cuMemcpyDtoH_v2", b.drv.cuMemcpyDtoH, uintptr(unsafe.Pointer(&dsts[i][0])), uintptr(buf.ptr+uint64(off)), uintptr(len(dsts[i])))); err != nil {
				return err
			}
		}
		return nil
	})
}

// gather copies the ranges back to back into a device buffer on the
// stream (with k, the gather kernel, in one launch; without, one device
// copy per range), then to the host at once (straight into dsts when they
// are back to back in memory, as a check's are); done is false (and
// nothing copied) when the staging buffer cannot be allocated. On the
// CUDA thread.
func (b *backend) gather(buf *buffer, offsets []int64, dsts [][]byte, k *kernel) (done bool, err error) {
	total := int64(0)
	for _, d := range dsts {
		total += int64(len(d))
	}
	if total == 0 {
		return true, nil
	}
	stage, temporary, err := b.staging(total)
	if err != nil {
		return false, nil
	}
	if temporary {
		defer b.drv.call("cuMemFree_v2", b.drv.cuMemFree, uintptr(stage.ptr))
	}
	if err := b.gatherOnDevice(buf, stage, offsets, dsts, k); err != nil {
		return true, err
	}
	if err := b.check(b.drv.call("cuStreamSynchronize", b.drv.cuStreamSynchronize, b.stream)); err != nil {
		return true, err
	}
	if backToBack(dsts) {
		for _, d := range dsts {
			if len(d) > 0 {
				return true, b.check(b.drv.call("cuMemcpyDtoH_v2", b.drv.cuMemcpyDtoH, uintptr(unsafe.Pointer(&d[0])), uintptr(stage.ptr), uintptr(total)))
			}
		}
	}
	host := make([]byte, total)
	if err := b.check(b.drv.call("cuMemcpyDtoH_v2", b.drv.cuMemcpyDtoH, uintptr(unsafe.Pointer(&host[0])), uintptr(stage.ptr), uintptr(total))); err != nil {
		return true, err
	}
	for i := range dsts {
		host = host[copy(dsts[i], host):]
	}
	return true, nil
}

// gatherOnDevice enqueues the copies of the ranges into stage, back to
// back: one launch of k when there is k (and room for its descriptors),
// else one device copy per range. On the CUDA thread.
func (b *backend) gatherOnDevice(buf, stage *buffer, offsets []int64, dsts [][]byte, k *kernel) error {
	descs := gatherDescriptors(offsets, dsts)
	if k != nil && len(descs) > 0 && b.descsFor(int64(8*len(descs))) == nil {
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&descs[0])), 8*len(descs))
		if err := b.copyIn(b.descs.ptr, raw); err != nil {
			return err
		}
		d := &profiler.Dispatch{Name: "gather", Grid: [3]int{len(descs) / 3, 1, 1}, Group: [3]int{256, 1, 1}, Args: []string{"src", "dst", "descs"}}
		return b.launch(&profiler.Launch{Dispatch: d, Kernel: k, Args: []profiler.Buffer{buf, stage, b.descs}})
	}
	for i := 0; i < len(descs); i += 3 {
		if err := b.check(b.drv.call("cuMemcpyDtoDAsync_v2", b.drv.cuMemcpyDtoDAsync, uintptr(stage.ptr+descs[i+1]), uintptr(buf.ptr+descs[i]), uintptr(descs[i+2]), b.stream)); err != nil {
			return err
		}
	}
	return nil
}

// descsFor makes the kept descriptor buffer at least n bytes. On the CUDA
// thread.
func (b *backend) descsFor(n int64) error {
	_, err := b.kept(&b.descs, max(n, 4096))
	return err
}

// kept returns *slot when it holds at least n bytes, else frees it and
// allocates n bytes in its place (nothing kept when that fails). On the
// CUDA thread.
func (b *backend) kept(slot **buffer, n int64) (*buffer, error) {
	if *slot != nil && (*slot).size >= n {
		return *slot, nil
	}
	if *slot != nil {
		b.drv.call("cuMemFree_v2", b.drv.cuMemFree, uintptr((*slot).ptr))
		*slot = nil
	}
	buf, err := b.alloc(n)
	if err != nil {
		return nil, err
	}
	*slot = buf
	return buf, nil
}

// maxKeptStage: a gather's staging buffer of up to this size is kept for
// the next gather (every spec gathers twice) instead of allocated and
// freed each time (cuMemFree waits for the device); larger ones are
// temporary.
const maxKeptStage = 32 << 20

// staging returns a device buffer of at least n bytes for gather: the
// kept one, grown as needed, or (temporary: the caller frees it) one of
// its own over maxKeptStage. On the CUDA thread.
func (b *backend) staging(n int64) (stage *buffer, temporary bool, err error) {
	if n > maxKeptStage && (b.stage == nil || b.stage.size < n) {
		stage, err = b.alloc(n)
		return stage, true, err
	}
	stage, err = b.kept(&b.stage, n)
	return stage, false, err
}
