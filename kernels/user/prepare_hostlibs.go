package user

import (
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file decides which headers of the toolkit's host-side libraries a
// whole program gets as stubs. Thrust's containers, algorithms and
// execution policies and CUB's device-wide algorithms are called from host
// code (main's thrust::device_vector, thrust::remove, cub::DeviceReduce);
// their headers do not compile under NVRTC (explicit __host__ functions,
// <memory>). When no device code names them, mltop blanks the host code
// that does and serves their headers as stubs. Thrust's device-usable
// headers (complex, tuple, pair, functional, random, …) reach NVRTC only
// when device code names thrust: several of them do not compile under
// NVRTC either (CUDA 11's functional.h has __host__ functions, complex.h
// wants <complex>), and a main() that uses thrust::plus includes them.

// hostLibraryUse says which host-side library parts device code names.
type hostLibraryUse struct {
	thrust    bool // a thrust:: name beyond the device-usable ones
	thrustAny bool // any thrust:: name
	cubDevice bool // cub::Device… (device-wide algorithms)
}

func (u hostLibraryUse) uses(lib string) bool {
	switch lib {
	case "thrust":
		return u.thrust
	case "thrust-device":
		return u.thrustAny
	case "cub":
		return u.cubDevice
	}
	return false
}

// hostLibraryNamespaces are what a stub of a library's header declares, so
// that a using-directive of the program (`using namespace
// thrust::placeholders;`) still compiles.
var hostLibraryNamespaces = map[string]string{
	"thrust":        "namespace thrust { namespace placeholders {} }\n",
	"thrust-device": "namespace thrust { namespace placeholders {} }\n",
	"cub":           "namespace cub {}\n",
}

// thrustDeviceHeaders are thrust's headers for device code (and its
// internals), never stubbed: a prefix, or a whole name.
var thrustDeviceHeaders = []string{"thrust/complex.h", "thrust/tuple.h", "thrust/pair.h", "thrust/functional.h",
	"thrust/random.h", "thrust/random/", "thrust/limits.h", "thrust/type_traits/", "thrust/swap.h", "thrust/version.h",
	"thrust/optional.h", "thrust/zip_function.h", "thrust/addressof.h", "thrust/detail/"}

// hostLibrary is the library whose header h is: "thrust" (a host-side
// part), "thrust-device" (a device-usable one), "cub" (device-wide
// algorithms), or "".
func hostLibrary(h string) string {
	switch {
	case strings.HasPrefix(h, "cub/device/"):
		return "cub"
	case !strings.HasPrefix(h, "thrust/"):
		return ""
	}
	for _, d := range thrustDeviceHeaders {
		if h == d || strings.HasSuffix(d, "/") && strings.HasPrefix(h, d) {
			return "thrust-device"
		}
	}
	return "thrust"
}

// thrustDeviceNames are the thrust:: names device code may use without
// the host-side headers: those of thrustDeviceHeaders.
var thrustDeviceNames = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`complex tuple pair make_pair make_tuple get tie tuple_element tuple_size
		plus minus multiplies divides modulus negate maximum minimum less greater less_equal greater_equal
		equal_to not_equal_to logical_and logical_or logical_not bit_and bit_or bit_xor identity project1st
		project2nd placeholders swap abs arg norm conj polar proj exp log log10 pow sqrt cbrt sin cos tan
		asin acos atan sinh cosh tanh asinh acosh atanh random default_random_engine minstd_rand minstd_rand0
		ranlux24 ranlux48 taus88 uniform_int_distribution uniform_real_distribution normal_distribution
		numeric_limits integer_sequence index_sequence make_integer_sequence make_index_sequence void_t
		remove_cvref remove_cvref_t optional nullopt make_optional zip_function make_zip_function addressof
		unary_function binary_function`) {
		thrustDeviceNames[n] = true
	}
}

// hostLibraryUse looks through the code that reaches NVRTC (host code
// blanked, comments dropped) for names of the host-side libraries.
func (p *prepared) hostLibraryUse() hostLibraryUse {
	var use hostLibraryUse
	for _, u := range p.units {
		toks := csrc.Tokenize(csrc.Blank(u.code, u.scan))
		for i := 0; i+2 < len(toks); i++ {
			if toks[i].Kind != csrc.Ident || toks[i+1].Text != "::" || toks[i+2].Kind != csrc.Ident || i > 0 && toks[i-1].Text == "::" {
				continue
			}
			switch name := toks[i+2].Text; toks[i].Text {
			case "thrust":
				use.thrust = use.thrust || !thrustDeviceNames[name]
				// a using-directive of thrust::placeholders compiles against
				// the stubs, which declare that namespace
				use.thrustAny = use.thrustAny || name != "placeholders"
			case "cub":
				use.cubDevice = use.cubDevice || strings.HasPrefix(name, "Device")
			}
		}
	}
	return use
}
