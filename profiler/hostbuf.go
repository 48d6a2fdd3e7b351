package profiler

// slab returns n bytes of b (grown as needed) all set to v. Backends copy
// uploads before returning, so one slab serves every zero (or poison)
// buffer of every spec instead of a fresh allocation per buffer.
func slab(b *[]byte, n int64, v byte) []byte {
	if int64(len(*b)) < n {
		*b = make([]byte, n)
		if v != 0 {
			for i := range *b {
				(*b)[i] = v
			}
		}
	}
	return (*b)[:n]
}

// decodeChecked decodes only the elements of raw (a buffer of spec's type)
// that ref checks in that buffer; the others stay 0. Outputs can be far
// larger than the rows checked (an attention output of 16 MiB against 256
// checked rows), and the slice's untouched pages cost nothing.
func decodeChecked(ref *Reference, name string, spec BufferSpec, raw []byte) []float32 {
	vals := make([]float32, spec.Elems)
	size := spec.Type.Size()
	for _, c := range ref.Checks {
		if c.Buffer != name {
			continue
		}
		for _, i := range c.Index {
			if i < 0 || int64(i) >= spec.Elems {
				continue // Verify reports the bad index
			}
			spec.Type.Decode(raw[i*size:(i+1)*size], vals[i:i+1])
		}
	}
	return vals
}
