package profiler

import (
	"encoding/json"
	"math"
	"strconv"
)

// jsonFloat is a float64 that survives JSON, which has no Inf or NaN: a
// broken kernel's outputs can make an error or its ratio to the bound
// infinite, and a Result must still reach the parent process and the JSON
// sink. Non-finite values are written as the strings "+Inf", "-Inf" and
// "NaN" and read back as such.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := strconv.ParseFloat(s, 64) // accepts +Inf, -Inf, NaN
		*f = jsonFloat(v)
		return err
	}
	var v float64
	err := json.Unmarshal(b, &v)
	*f = jsonFloat(v)
	return err
}

// verdictJSON is Verdict with its error figures as jsonFloat.
type verdictJSON struct {
	verdictPlain
	MaxAbsErr  jsonFloat `json:"max_abs_err"`
	MaxRelErr  jsonFloat `json:"max_rel_err"`
	RMSErr     jsonFloat `json:"rms_err"`
	WorstRatio jsonFloat `json:"worst_over_bound"`
}

type verdictPlain Verdict

// MarshalJSON writes the verdict with non-finite errors as strings.
func (v Verdict) MarshalJSON() ([]byte, error) {
	return json.Marshal(verdictJSON{verdictPlain(v), jsonFloat(v.MaxAbsErr), jsonFloat(v.MaxRelErr), jsonFloat(v.RMSErr), jsonFloat(v.WorstRatio)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	var j verdictJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*v = Verdict(j.verdictPlain)
	v.MaxAbsErr, v.MaxRelErr, v.RMSErr, v.WorstRatio = float64(j.MaxAbsErr), float64(j.MaxRelErr), float64(j.RMSErr), float64(j.WorstRatio)
	return nil
}
