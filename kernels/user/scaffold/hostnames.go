package scaffold

import (
	"slices"
	"sort"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
)

// Metal kernels are not launched from the source: a template kernel's
// instances are its explicit instantiations, each named for the host with
// [[host_name("…")]] (`template [[host_name("ssm_scan_c2")]] [[kernel]]
// void ssm_scan_kernel<2>(…);`). They play the part a CUDA source's
// launches play: a value template parameter they set to several integers
// is a knob of those values, and `--entry ssm_scan_c2` names the template
// with that instance's values as the default.

// metalHostName is the instantiation host names in src, if it names one.
func metalHostName(src, host string) (metal.Instantiation, bool) {
	hosts, err := metal.HostNames(src)
	if err != nil {
		return metal.Instantiation{}, false
	}
	inst, ok := hosts[host]
	return inst, ok
}

// hostNameTemplates is a launchTemplate made of sig's [[host_name]]
// instantiations: the one the request named (Request.Entries) first, else
// the first in the source. Type arguments are left to the dtype (written
// as the parameter's own name, so no instance fixes a buffer's type).
func (c *context) hostNameTemplates(sig csrc.Signature, tmpl []tparam) (launchTemplate, bool) {
	hosts, err := metal.HostNames(c.src)
	if err != nil {
		return launchTemplate{}, false
	}
	type inst struct {
		host string
		at   int
		args []string
	}
	var insts []inst
	for host, in := range hosts {
		if in.Template != sig.Entry || len(in.Args) != len(tmpl) {
			continue
		}
		args := slices.Clone(in.Args)
		for i, tp := range tmpl {
			if tp.isType {
				args[i] = tp.name
			}
		}
		insts = append(insts, inst{host: host, at: strings.Index(c.src, `"`+host+`"`), args: args})
	}
	if len(insts) == 0 {
		return launchTemplate{}, false
	}
	sort.Slice(insts, func(a, b int) bool {
		pa, pb := slices.Contains(c.entries, insts[a].host), slices.Contains(c.entries, insts[b].host)
		if pa != pb {
			return pa
		}
		return insts[a].at < insts[b].at
	})
	lt := launchTemplate{instances: true, args: insts[0].args, line: lineOf(c.src, max(insts[0].at, 0))}
	for _, in := range insts {
		lt.all = append(lt.all, launchSeen{args: in.args, line: lineOf(c.src, max(in.at, 0)), blockArg: -1})
	}
	slices.SortFunc(lt.all, func(a, b launchSeen) int { return a.line - b.line }) // listed in the source's order
	return lt, true
}
