package csrc

import (
	"regexp"
	"slices"
	"strings"
)

// This file finds the types and aliases of a program that only its host
// code needs. Framework headers (Caffe's common.hpp; FasterTransformer,
// TensorRT-LLM and Apex have the same shape) keep, next to the macros
// kernels use, `using std::vector;`, `namespace gflags = google;` and
// classes whose members are cublasHandle_t or shared_ptr: NVRTC gets
// those headers as empty stubs, so such declarations fail to compile
// although no device code reads them.

// MarkHostOnly marks, across the files of one program (the main file and
// its local headers, each scanned with ScanWith), the file- and
// namespace-scope classes, structs, unions, typedefs, using-declarations,
// alias declarations and namespace aliases that
//   - name something only host headers declare: a host-only standard
//     library name (std::vector, shared_ptr, ostringstream, …), a CUDA
//     host library type (cublasHandle_t, cudaStream_t, …), a namespace
//     none of the files declares (boost::, google), or what another such
//     declaration declares; and
//   - declare nothing the code that stays uses (functions and variables
//     that are host code are blanked already; a #define's body counts
//     where that macro is used).
//
// It marks too the file- and namespace-scope const/constexpr variables
// (without __device__, __constant__, …) that the code that stays does not
// use but the host code does (`const int NUM_REPS = 100;` that only main
// reads): with the host code blanked NVRTC would warn they are never
// referenced, which the whole program nvcc compiles does not. One that no
// code uses stays, and so does its warning, unless its initializer calls
// a function and it is not constexpr (`const float kLogZero =
// -std::numeric_limits<float>::infinity();`, `static const double kMin =
// Log(DBL_EPSILON);`): mltop compiles with -default-device, which makes it
// a __device__ variable, and NVRTC rejects its dynamic initialization
// where the function is not constexpr (libcu++'s infinity() under NVRTC
// 11.8) while nvcc keeps it a host variable: blanked, it costs at most
// that warning.
//
// Host then reports them, so Blank blanks them. It returns how many it
// marked.
func MarkHostOnly(files ...*File) int { return MarkHostOnlyWith(HostHeaders{}, nil, files...) }

// HostHeaders is what MarkHostOnlyWith knows of a program's system headers.
type HostHeaders struct {
	// Stubbed: the program includes a system header served as a stub that
	// declares nothing (pthread.h, stdio.h, time.h, windows.h): a type
	// none of its files declares may be one that header declares for the
	// host (pthread_t, FILE, time_t, HANDLE).
	Stubbed bool
	// Known says whether device code gets a name with no file of the
	// program declaring it: what the stubs and the prelude declare
	// (int64_t, uint). Nil: none.
	Known func(name string) bool
	// Torch says whether mltop's stubs of PyTorch's headers declare a
	// name under c10::, at:: or torch:: (Half, BFloat16, Float8_e4m3fn).
	// PyTorch's headers are served as those stubs, so any other name there
	// (at::Tensor, c10::cuda::CUDAStream) is host-only. Nil: none (the
	// program includes no PyTorch header).
	Torch func(name string) bool
}

// MarkHostOnlyWith is MarkHostOnly, which with h.Stubbed also marks the
// typedefs and alias declarations that name a type nothing the device
// code gets declares (undeclaredHostType): `typedef pthread_t CUTThread;`
// beside <pthread.h>. As for the others, one the code that stays uses
// stays (and NVRTC names the missing type).
//
// entryNames are names device code uses from outside the files: the
// identifiers of the entries the program is launched by, template
// arguments included (`k<Traits<4, float>>`: k, Traits, float). A
// declaration of one is used, so it stays with all it uses, although
// only host code (a launcher) names it in the files and the kernel only
// through its template parameter.
func MarkHostOnlyWith(h HostHeaders, entryNames []string, files ...*File) int {
	declared := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			for _, n := range d.Names {
				declared[n] = true
			}
		}
	}
	type cand struct {
		f          *File
		i          int
		start, end int
	}
	var cands []cand
	tainted := map[string]bool{}
	for changed := true; changed; { // a declaration naming a marked one's names is tainted too
		changed = false
		for _, f := range files {
			for i, d := range f.Decls {
				if !hostOnlyKind(d) || slices.ContainsFunc(cands, func(c cand) bool { return c.f == f && c.i == i }) {
					continue
				}
				toks := f.declTokens(d)
				if namesHostOnly(toks, declared, tainted, h.Torch) || h.Stubbed && d.Kind == Alias && undeclaredHostType(toks, declared, h.Known) {
					cands = append(cands, cand{f, i, d.Start, d.End})
					for _, n := range d.Names {
						tainted[n] = true
					}
					changed = true
				}
			}
		}
	}
	for _, f := range files {
		for i, d := range f.Decls {
			if hostConstCandidate(d, f.declTokens(d)) {
				cands = append(cands, cand{f, i, d.Start, d.End})
			}
		}
	}
	// drop the candidates that the code that stays uses, until none is;
	// a name a parameter or local shadows is no use (notUses)
	notUses := map[*File]map[int]bool{}
	for _, f := range files {
		notUses[f] = f.notUses()
	}
	for changed := true; changed; {
		changed = false
		used := map[string]bool{}
		for _, n := range entryNames {
			used[n] = true
		}
		for _, f := range files {
			f.keptUses(used, func(start int) bool {
				return notUses[f][start] || slices.ContainsFunc(cands, func(c cand) bool { return c.f == f && start >= c.start && start < c.end })
			})
		}
		cands = slices.DeleteFunc(cands, func(c cand) bool {
			if slices.ContainsFunc(c.f.Decls[c.i].Names, func(n string) bool { return used[n] }) {
				changed = true
				return true
			}
			return false
		})
	}
	cands = slices.DeleteFunc(cands, func(c cand) bool {
		d := c.f.Decls[c.i]
		return d.Kind == Variable && !usedOutside(files, notUses, d.Names, c.f, c.start, c.end) && !callsInInitializer(c.f.declTokens(d))
	})
	for _, c := range cands {
		c.f.Decls[c.i].hostOnly = true
	}
	return len(cands)
}

// hostConstCandidate: a const or constexpr variable at file or namespace
// scope in no device memory space, which MarkHostOnly blanks when only
// host code uses it.
func hostConstCandidate(d Decl, toks []ltok) bool {
	if d.Kind != Variable || !d.Device || len(d.Names) == 0 {
		return false
	}
	return !slices.ContainsFunc(toks, func(t ltok) bool { return memorySpaces[t.text] })
}

// callsInInitializer says whether a variable declaration that is not
// constexpr calls a function in its initializer: a name followed by "("
// after its "=" (or inside its braces), other than a keyword or built-in
// type (sizeof, a functional cast float(x)).
func callsInInitializer(toks []ltok) bool {
	init := -1
	for k, t := range toks {
		if t.text == "constexpr" || t.text == "consteval" || t.text == "constinit" {
			return false
		}
		if init < 0 && (t.text == "=" || t.text == "{") {
			init = k
		}
	}
	if init < 0 {
		return false
	}
	for k := init + 1; k+1 < len(toks); k++ {
		if t := toks[k]; t.kind == Ident && toks[k+1].text == "(" && !cxxWords[t.text] {
			return true
		}
	}
	return false
}

// memorySpaces are the CUDA variable qualifiers that put a variable on
// the device.
var memorySpaces = map[string]bool{"__device__": true, "__constant__": true, "__shared__": true, "__managed__": true}

// usedOutside says whether any file's code (or a live #define's body)
// names one of names outside decl's own span [start, end) in file f,
// other than at the tokens of notUses.
func usedOutside(files []*File, notUses map[*File]map[int]bool, names []string, f *File, start, end int) bool {
	for _, g := range files {
		for _, t := range g.code {
			if t.kind == Ident && !notUses[g][t.start] && slices.Contains(names, t.text) && (g != f || t.start < start || t.start >= end) {
				return true
			}
		}
		for _, d := range g.Directives {
			if !d.Dead && d.Kind == "define" && slices.ContainsFunc(d.Body, func(w string) bool { return slices.Contains(names, w) }) {
				return true
			}
		}
	}
	return false
}

// hostOnlyKind: the declarations MarkHostOnly may mark (those that
// declare a name; a using-directive declares none).
func hostOnlyKind(d Decl) bool {
	if len(d.Names) == 0 || d.Host() {
		return false
	}
	return d.Kind == Alias || d.Kind == Type
}

// declTokens are the live code tokens of d.
func (f *File) declTokens(d Decl) []ltok {
	lo, _ := slices.BinarySearchFunc(f.code, d.Start, func(t ltok, at int) int { return t.start - at })
	hi := lo
	for hi < len(f.code) && f.code[hi].start < d.End {
		hi++
	}
	return f.code[lo:hi]
}

// keptUses adds to used the identifiers of f's code that stays: outside
// host declarations and outside what skip says; then the identifiers of
// the bodies of the #defines so used (as often as that adds a macro).
func (f *File) keptUses(used map[string]bool, skip func(start int) bool) {
	var spans [][2]int
	for _, d := range f.Decls {
		if d.Host() {
			spans = append(spans, [2]int{d.Start, d.End})
		}
	}
	for _, t := range f.code {
		if t.kind != Ident || skip(t.start) || slices.ContainsFunc(spans, func(s [2]int) bool { return t.start >= s[0] && t.start < s[1] }) {
			continue
		}
		used[t.text] = true
	}
	for changed := true; changed; {
		changed = false
		for _, d := range f.Directives {
			if d.Dead || d.Kind != "define" || !used[d.Defines] {
				continue
			}
			for _, w := range d.Body {
				if !used[w] {
					used[w], changed = true, true
				}
			}
		}
	}
}

// namesHostOnly says whether a declaration's tokens name something only
// host headers declare (see MarkHostOnly), or a name of tainted. A name
// under PyTorch's namespaces that torch does not declare is such a name
// (`using at::Tensor;`), unless the program declares that namespace too.
func namesHostOnly(toks []ltok, declared, tainted map[string]bool, torch func(string) bool) bool {
	for k, t := range toks {
		if t.kind != Ident {
			continue
		}
		qualified := k > 0 && toks[k-1].text == "::"
		switch {
		case tainted[t.text], hostLibraryType.MatchString(t.text):
			return true
		case hostStdNames[t.text] && (qualified && k > 1 && toks[k-2].text == "std" || !declared[t.text]):
			return true
		case qualified:
			continue
		case k+1 < len(toks) && toks[k+1].text == "::", k > 0 && toks[k-1].text == "=" && toks[0].text == "namespace":
			// the leading namespace of a qualified name, or a namespace alias's target
			if !declared[t.text] && (!deviceNamespaces[t.text] || torchUndeclared(toks[k:], torch)) {
				return true
			}
		}
	}
	return false
}

// hostLibraryType matches the types of the CUDA host libraries' APIs
// (cublasHandle_t, cudnnTensorDescriptor_t, curandGenerator_t,
// cudaStream_t, cudaDeviceProp, ncclComm_t): a device function never takes
// them.
var hostLibraryType = regexp.MustCompile(`^(cublas|cudnn|cufft|cusparse|cusolver|cutensor|nccl|nvtx|nvml|curandGenerator)\w*$|^cuda[A-Z]\w*_t$|^cudaDeviceProp$`)

// hostStdNames are names of the C++ standard library that libcu++ has no
// device counterpart of: containers, strings, streams, smart pointers,
// threads.
var hostStdNames = map[string]bool{}

func init() {
	for _, n := range []string{"vector", "string", "wstring", "string_view", "map", "multimap", "unordered_map",
		"set", "multiset", "unordered_set", "list", "forward_list", "deque", "queue", "priority_queue", "stack",
		"shared_ptr", "unique_ptr", "weak_ptr", "make_shared", "make_unique", "function", "ostream", "istream",
		"iostream", "fstream", "ifstream", "ofstream", "stringstream", "ostringstream", "istringstream", "ios",
		"cout", "cerr", "clog", "cin", "endl", "mutex", "recursive_mutex", "shared_mutex", "lock_guard",
		"unique_lock", "condition_variable", "thread", "future", "promise", "exception", "runtime_error",
		"logic_error", "invalid_argument", "out_of_range", "regex", "filesystem", "locale", "any", "variant",
		"iterator"} { // std::iterator: deprecated, gone from CCCL 3
		hostStdNames[n] = true
	}
	// <time.h>/<sys/time.h>'s host clocks: a Stopwatch class keeps a
	// timespec and calls clock_gettime. Not clock() (a device function
	// too), time and tm (common names of a program's own), nor std::chrono
	// (libcu++ has cuda::std::chrono). A declaration device code uses
	// stays whatever it names (clock_t start in a device struct).
	for _, n := range []string{"timespec", "timeval", "timezone", "itimerspec", "clock_gettime", "clock_getres",
		"gettimeofday", "nanosleep", "difftime", "mktime", "localtime", "gmtime", "strftime", "ctime", "asctime",
		"CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_REALTIME", "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID",
		"CLOCKS_PER_SEC", "time_t", "clock_t", "clockid_t", "suseconds_t"} {
		hostStdNames[n] = true
	}
}

// torchNamespaces are PyTorch's namespaces, which mltop's stubs of its
// headers declare (HostHeaders.Torch says what in them).
var torchNamespaces = map[string]bool{"c10": true, "at": true, "torch": true}

// torchUndeclared says whether toks, a qualified name from its leading
// namespace on (at::cuda::CUDAStream), starts with one of PyTorch's
// namespaces and names, after it, something torch does not declare.
func torchUndeclared(toks []ltok, torch func(string) bool) bool {
	if !torchNamespaces[toks[0].text] {
		return false
	}
	for k := 2; k < len(toks) && toks[k-1].text == "::" && toks[k].kind == Ident; k += 2 {
		if torch == nil || !torch(toks[k].text) {
			return true
		}
	}
	return false
}

// deviceNamespaces are namespaces the toolkit's device headers (or
// mltop's stubs) declare, which the program's own files need not.
var deviceNamespaces = map[string]bool{"std": true, "cuda": true, "cub": true, "thrust": true, "cooperative_groups": true,
	"nvcuda": true, "cute": true, "cutlass": true, "c10": true, "at": true, "torch": true, "detail": true}

// undeclaredHostType says whether an alias declaration's tokens (typedef
// or using, not a namespace alias) name, unqualified, a type that no file
// of the program declares, that no stub or prelude declares (known) and
// that is neither a C++ keyword nor what the compiler or the toolkit's
// device headers give (deviceTypeName): with a host header stubbed, the
// one it comes from. Template parameters and a function type's parameter
// names are no types.
func undeclaredHostType(toks []ltok, declared map[string]bool, known func(string) bool) bool {
	if len(toks) == 0 || toks[0].text == "namespace" {
		return false
	}
	params := map[string]bool{}
	start := 0
	if toks[0].text == "template" && len(toks) > 1 && toks[1].text == "<" {
		start = 1
		for depth := 0; start < len(toks); start++ {
			switch t := toks[start]; {
			case t.text == "<":
				depth++
			case t.text == ">":
				depth--
			case t.kind == Ident:
				params[t.text] = true
			}
			if depth == 0 {
				break
			}
		}
	}
	for k := start; k < len(toks); k++ {
		t := toks[k]
		if t.kind != Ident || params[t.text] || declared[t.text] || cxxWords[t.text] || deviceTypeName.MatchString(t.text) || known != nil && known(t.text) {
			continue
		}
		if k > 0 && (toks[k-1].text == "::" || toks[k-1].text == ".") || k+1 < len(toks) && toks[k+1].text == "::" {
			continue // qualified: namesHostOnly's
		}
		if k > 0 && k+1 < len(toks) && (toks[k-1].kind == Ident || toks[k-1].text == "*" || toks[k-1].text == "&") && strings.Contains(",)[", toks[k+1].text) {
			continue // a parameter's name in a function type: void (*f)(float scale)
		}
		return true
	}
	return false
}

// deviceTypeName matches what device code gets without a file of the
// program declaring it, beyond the stubs: names reserved to the compiler
// and the toolkit (__half, _Float16), the CUDA built-in vector types and
// dim3, and the toolkit's device headers' own prefixes (cudaTextureObject_t,
// CUtensorMap, curandState, nv_bfloat16, half).
var deviceTypeName = regexp.MustCompile(`^_|^(u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$|^dim3$|^(cuda|cu[A-Z]|CU|curand|nv_|nvcuda)|^half2?$`)

// cxxWords are the C++ keywords and built-in type names an alias
// declaration may hold.
var cxxWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`typedef using template typename class struct union enum const volatile
		signed unsigned void bool char wchar_t char8_t char16_t char32_t short int long float double auto
		decltype sizeof alignof alignas noexcept constexpr static inline extern operator true false nullptr this
		size_t ptrdiff_t nullptr_t std`) {
		cxxWords[w] = true
	}
}
