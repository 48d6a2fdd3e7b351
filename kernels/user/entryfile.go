package user

import (
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// entryFinder looks an entry up in a text: its overloads, or the kernels
// the text has when none fits.
type entryFinder func(code string) (sigs []csrc.Signature, found []string, err error)

// findEntry looks entry name up in lang's source: in the main file, else
// (llm.c's kernel.cuh, an MLX template in a .h instantiated by a macro of
// another header) in the main file and its local headers read as one
// text. The source it returns holds the text searched and the path of the
// file that defines the entry, and each signature's Line is in that file.
func (f *Family) findEntry(lang string, find entryFinder) (source, []csrc.Signature, []string, error) {
	s := f.src[lang]
	sigs, found, err := find(s.code)
	p := f.prep[lang]
	// Only explicit specializations in the main file: the primary
	// template is in a local header, and its parameters bind the args.
	onlySpecializations := len(sigs) > 0 && !slices.ContainsFunc(sigs, func(g csrc.Signature) bool { return !g.Specialization })
	if err != nil || len(sigs) > 0 && !onlySpecializations || p == nil || len(p.units) < 2 {
		return s, sigs, found, err
	}
	all := joinUnits(p.units)
	sigs, found, err = find(all.code)
	if err != nil || len(sigs) == 0 {
		return s, sigs, found, err
	}
	for i := range sigs {
		var path string
		path, sigs[i].Line = all.locate(sigs[i].Line)
		if i == 0 {
			s = source{path: path, code: all.code, language: lang}
		}
	}
	return s, sigs, found, nil
}

// joinedUnits is a source and its local headers as one text.
type joinedUnits struct {
	code   string
	units  []*unit
	starts []int // the joined text's line where each unit begins
}

func joinUnits(units []*unit) joinedUnits {
	var b strings.Builder
	j := joinedUnits{units: units}
	line := 1
	for _, u := range units {
		j.starts = append(j.starts, line)
		b.WriteString(u.code)
		if !strings.HasSuffix(u.code, "\n") {
			b.WriteString("\n")
		}
		line += strings.Count(strings.TrimSuffix(u.code, "\n"), "\n") + 1
	}
	j.code = b.String()
	return j
}

// locate maps a line of the joined text to its file and line there.
func (j joinedUnits) locate(line int) (string, int) {
	for i := len(j.starts) - 1; i >= 0; i-- {
		if line >= j.starts[i] {
			return j.units[i].path, line - j.starts[i] + 1
		}
	}
	return j.units[0].path, line
}

// localHeaders names the local headers searched besides the main file,
// for a message: " and its headers common.h, kernel.cuh"; "" if none.
func localHeaders(p *prepared) string {
	if p == nil || len(p.units) < 2 {
		return ""
	}
	var names []string
	for _, u := range p.units[1:] {
		names = append(names, u.name)
	}
	return " and its headers " + strings.Join(names, ", ")
}
