package cuda

import (
	"fmt"
	"regexp"
	"strings"
)

// Without the toolkit's cuda_fp16.h and cuda_bf16.h, a user program's
// __half and __nv_bfloat16 are storage-only structs mltop declares ahead
// of the source (StorageOnlyStruct): no arithmetic, no conversions. A
// source that computes with them then fails with NVRTC's "no suitable
// conversion function from "const floatX" to "float"", which does not say
// why; the failed compile's message ends with a hint that does.

// StorageOnlyStruct is the line that declares typ (__half or
// __nv_bfloat16) as a storage-only struct ahead of a user source when no
// toolkit headers were found; storageHint looks for it.
func StorageOnlyStruct(typ string) string {
	return "struct " + typ + " { unsigned short mltop_bits_; }; // no CUDA toolkit headers found: storage only"
}

// storageTypes are the 16-bit types a storage-only struct stands in for,
// and the names a source uses them by (cuda_fp16.h's half, the vector
// types the stub lacks).
var storageTypes = []struct {
	typ, header string
	names       *regexp.Regexp
}{
	{"__half", "cuda_fp16.h", regexp.MustCompile(`\b(?:__half2?|half2?)\b`)},
	{"__nv_bfloat16", "cuda_bf16.h", regexp.MustCompile(`\b(?:__nv_bfloat162?|nv_bfloat162?)\b`)},
}

// storageHint is the line a failed compile's message ends with when the
// program got a storage-only struct and the source (beyond that
// declaration) or NVRTC's log names its type; "" otherwise.
func storageHint(src, log string) string {
	var types, headers []string
	for _, t := range storageTypes {
		decl := StorageOnlyStruct(t.typ)
		if !strings.Contains(src, decl) {
			continue
		}
		if t.names.MatchString(strings.ReplaceAll(src, decl, "")) || t.names.MatchString(log) {
			types, headers = append(types, t.typ), append(headers, t.header)
		}
	}
	if len(types) == 0 {
		return ""
	}
	return fmt.Sprintf("hint: no CUDA toolkit headers were found, so %s is mltop's storage-only struct (no arithmetic, no conversion to or from float): "+
		"if the errors concern it, set %s to the toolkit's include directory, the folder that holds %s (`mltop list` shows where mltop looked)",
		strings.Join(types, " and "), IncludeEnv, strings.Join(headers, " and "))
}

// withStorageHint adds storageHint's line to a failed compile's error.
func withStorageHint(err error, src, log string) error {
	if err == nil {
		return nil
	}
	if hint := storageHint(src, log); hint != "" {
		return fmt.Errorf("%w\n%s", err, hint)
	}
	return err
}
