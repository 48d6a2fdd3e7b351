package pyref

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// WriteNPY writes a float64 array in NumPy's .npy format (version 1.0,
// little-endian, C order).
func WriteNPY(w io.Writer, shape []int, data []float64) error {
	return writeNPY(w, "<f8", shape, len(data), func(b []byte, i int) { binary.LittleEndian.PutUint64(b, math.Float64bits(data[i])) }, 8)
}

// WriteNPYInt64 writes an int64 array (index buffers reach Python as ints).
func WriteNPYInt64(w io.Writer, shape []int, data []int64) error {
	return writeNPY(w, "<i8", shape, len(data), func(b []byte, i int) { binary.LittleEndian.PutUint64(b, uint64(data[i])) }, 8)
}

func writeNPY(w io.Writer, descr string, shape []int, n int, put func([]byte, int), size int) error {
	want := 1
	dims := make([]string, len(shape))
	for i, s := range shape {
		want *= s
		dims[i] = strconv.Itoa(s)
	}
	if want != n {
		return fmt.Errorf("npy: shape %v holds %d values, got %d", shape, want, n)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh)
	// magic(6) + version(2) + len(2) + header + '\n', padded to 64
	total := 10 + len(hdr) + 1
	pad := (64 - total%64) % 64
	hdr += strings.Repeat(" ", pad) + "\n"
	var buf bytes.Buffer
	buf.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&buf, binary.LittleEndian, uint16(len(hdr)))
	buf.WriteString(hdr)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	out := make([]byte, n*size)
	for i := range n {
		put(out[i*size:], i)
	}
	_, err := w.Write(out)
	return err
}

// NPY is an array read from a .npy file, converted to float64.
type NPY struct {
	Descr string // NumPy's dtype string, e.g. "<f8"
	Shape []int
	Data  []float64
}

var (
	descrRE = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	orderRE = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	shapeRE = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// ReadNPY reads a numeric .npy array (float16/32/64, signed and unsigned
// integers of 1-8 bytes, bool), little-endian or byte-agnostic, C order.
func ReadNPY(r io.Reader) (*NPY, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, errors.New("npy: not a .npy file (bad magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		var l uint16
		if err := binary.Read(r, binary.LittleEndian, &l); err != nil {
			return nil, fmt.Errorf("npy: %w", err)
		}
		hlen = int(l)
	case 2, 3:
		var l uint32
		if err := binary.Read(r, binary.LittleEndian, &l); err != nil {
			return nil, fmt.Errorf("npy: %w", err)
		}
		hlen = int(l)
	default:
		return nil, fmt.Errorf("npy: unsupported version %d", pre[6])
	}
	if hlen > 1<<20 {
		return nil, errors.New("npy: header too long")
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	h := string(hdr)
	dm, om, sm := descrRE.FindStringSubmatch(h), orderRE.FindStringSubmatch(h), shapeRE.FindStringSubmatch(h)
	if dm == nil || om == nil || sm == nil {
		return nil, fmt.Errorf("npy: cannot read the header %q", strings.TrimSpace(h))
	}
	a := &NPY{Descr: dm[1]}
	if om[1] == "True" {
		return nil, errors.New("npy: Fortran-order arrays are not supported: return np.ascontiguousarray(x)")
	}
	n := 1
	for _, p := range strings.Split(sm[1], ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSuffix(p, "L"))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("npy: bad shape (%s)", sm[1])
		}
		a.Shape = append(a.Shape, v)
		if v > 0 && n > (1<<40)/v {
			return nil, errors.New("npy: array too large")
		}
		n *= v
	}
	d := a.Descr
	if len(d) < 2 {
		return nil, fmt.Errorf("npy: dtype %q is not numeric", d)
	}
	order, kind := d[0], d[1]
	size, err := strconv.Atoi(d[2:])
	if err != nil || order == '>' && size > 1 {
		return nil, fmt.Errorf("npy: dtype %q is not supported: return little-endian numbers (float64, float32, int)", d)
	}
	conv, ok := converters[string(kind)+strconv.Itoa(size)]
	if !ok {
		return nil, fmt.Errorf("npy: dtype %q is not numeric: return floats or integers", d)
	}
	raw := make([]byte, n*size)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("npy: the data is short: %w", err)
	}
	a.Data = make([]float64, n)
	for i := range n {
		a.Data[i] = conv(raw[i*size:])
	}
	return a, nil
}

var converters = map[string]func([]byte) float64{
	"f8": func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) },
	"f4": func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) },
	"f2": func(b []byte) float64 { return float64(f16(binary.LittleEndian.Uint16(b))) },
	"i8": func(b []byte) float64 { return float64(int64(binary.LittleEndian.Uint64(b))) },
	"i4": func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) },
	"i2": func(b []byte) float64 { return float64(int16(binary.LittleEndian.Uint16(b))) },
	"i1": func(b []byte) float64 { return float64(int8(b[0])) },
	"u8": func(b []byte) float64 { return float64(binary.LittleEndian.Uint64(b)) },
	"u4": func(b []byte) float64 { return float64(binary.LittleEndian.Uint32(b)) },
	"u2": func(b []byte) float64 { return float64(binary.LittleEndian.Uint16(b)) },
	"u1": func(b []byte) float64 { return float64(b[0]) },
	"b1": func(b []byte) float64 {
		if b[0] != 0 {
			return 1
		}
		return 0
	},
}

func f16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		return float32(math.Ldexp(float64(man), -24)) * sgn(sign)
	case exp == 31:
		if man == 0 {
			return math.Float32frombits(sign | 0x7f800000)
		}
		return float32(math.NaN())
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | man<<13)
}

func sgn(s uint32) float32 {
	if s != 0 {
		return -1
	}
	return 1
}
