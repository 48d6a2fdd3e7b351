package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// launchBound is a CUDA entry's __launch_bounds__: the most threads per
// block it is compiled for. A GPU refuses a launch with more.
type launchBound struct {
	text  string // its first argument as written: "256", "BLOCK", "BS * 2"
	where string // "scale.cu:5"
	sig   csrc.Signature
}

// boundsReader finds the __launch_bounds__ of a family's CUDA entries and
// evaluates them per planned dispatch.
type boundsReader struct {
	f      *user.Family
	bounds map[string]launchBound       // by dispatch name; absent: none
	consts map[string]map[string]string // by program code: its integer names → their text
}

func newBoundsReader(f *user.Family) *boundsReader {
	b := &boundsReader{f: f, bounds: map[string]launchBound{}, consts: map[string]map[string]string{}}
	for _, d := range f.DispatchInfos() {
		sig, file, ok := f.EntryAt("cuda", d.Index)
		if !ok {
			continue
		}
		code := f.Source("cuda")
		if file != f.SourcePath("cuda") {
			data, err := os.ReadFile(file)
			if err != nil {
				continue
			}
			code = string(data)
		}
		if text, line := entryLaunchBounds(csrc.Tokenize(code), sig); text != "" {
			b.bounds[d.Name] = launchBound{text: text, where: fmt.Sprintf("%s:%d", filepath.Base(file), line), sig: sig}
		}
	}
	return b
}

// of is the bound of planned dispatch d and its value; ok is false when
// its entry has none, or one mltop cannot evaluate.
func (b *boundsReader) of(d profiler.Dispatch) (launchBound, int, bool) {
	if b == nil {
		return launchBound{}, 0, false
	}
	lb, ok := b.bounds[d.Name]
	if !ok {
		return lb, 0, false
	}
	names := b.constants(d.Program)
	// the entry's template arguments shadow every other name
	args := templateArgs(d.Program.Entry)
	for i, p := range lb.sig.Template {
		if i < len(args) {
			if _, isInt := csrc.IntConst(args[i], nil); isInt {
				names = withName(names, p, args[i])
			}
		}
	}
	v, ok := csrc.IntConst(lb.text, names)
	if !ok || v <= 0 {
		return lb, 0, false
	}
	return lb, int(v), true
}

// withName is names with name → text, names itself left as it is.
func withName(names map[string]string, name, text string) map[string]string {
	out := make(map[string]string, len(names)+1)
	for k, v := range names {
		out[k] = v
	}
	out[name] = text
	return out
}

// constants are the integer names of a prepared program (its code and
// includes): its object-like macros (those mltop injects among them) and,
// where no macro takes the name, its `constexpr int N = …;` and `const
// int N = …;` declarations (mltop declares knobs and dims so too).
func (b *boundsReader) constants(p profiler.Program) map[string]string {
	key := p.Code
	if c, ok := b.consts[key]; ok {
		return c
	}
	var files []*csrc.File
	texts := []string{}
	for _, h := range p.Includes {
		texts = append(texts, h)
	}
	texts = append(texts, p.Code)
	out := map[string]string{}
	for _, t := range texts {
		files = append(files, csrc.Scan(t))
		for _, m := range intDecl.FindAllStringSubmatch(t, -1) {
			out[m[1]] = m[2]
		}
	}
	for name, v := range csrc.ObjectMacros(files...) {
		out[name] = v
	}
	b.consts[key] = out
	return out
}

// intDecl is a declaration of an integer constant: `constexpr int N = 4;`,
// `static const unsigned BLOCK = 256;`.
var intDecl = regexp.MustCompile(`\b(?:constexpr|const)\s+(?:(?:static|unsigned|signed|long|short)\s+)*(?:int|unsigned|long|short|size_t|u?int(?:32|64)_t)\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+);`)

// entryLaunchBounds is the first argument of the __launch_bounds__(…)
// between the declaration's start and the entry's name (sig.Entry on
// sig.Line), with its line; "" when there is none.
func entryLaunchBounds(toks []csrc.Token, sig csrc.Signature) (string, int) {
	at := -1
	for i, t := range toks {
		if t.Line == sig.Line && t.Text == sig.Entry && i+1 < len(toks) && (toks[i+1].Text == "(" || toks[i+1].Text == "<") {
			at = i
			break
		}
	}
	return csrc.LaunchBounds(toks, at)
}

// templateArgs are the top-level template arguments of a rendered entry
// name ("ns::k<float, 256>" → "float", "256"); nil without any.
func templateArgs(entry string) []string {
	open := strings.IndexByte(entry, '<')
	if open < 0 || !strings.HasSuffix(entry, ">") {
		return nil
	}
	var out []string
	depth, start := 0, open+1
	for i := open + 1; i < len(entry)-1; i++ {
		switch entry[i] {
		case '<', '(', '[':
			depth++
		case '>', ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(entry[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(entry[start:len(entry)-1]))
}

// boundText says the bound for a message: "__launch_bounds__(256) at
// scale.cu:5", with its value when the text is not a number.
func (lb launchBound) boundText(v int) string {
	s := "__launch_bounds__(" + lb.text + ")"
	if _, err := strconv.Atoi(lb.text); err != nil {
		s += fmt.Sprintf(" (= %d)", v)
	}
	return s + " at " + lb.where
}
