package profiler

import (
	"reflect"
	"testing"
)

func TestParamOrder(t *testing.T) {
	d := Dispatch{Args: []string{"X", "Y"}, Scalars: []Scalar{I32Param("n", 1)}}
	want := []ArgRef{{Index: 0}, {Index: 1}, {Scalar: true, Index: 0}}
	if got := d.ParamOrder(); !reflect.DeepEqual(got, want) {
		t.Errorf("default order %v, want %v", got, want)
	}
	d.Order = []ArgRef{{Index: 1}, {Scalar: true, Index: 0}, {Index: 0}}
	if got := d.ParamOrder(); !reflect.DeepEqual(got, d.Order) {
		t.Errorf("explicit order %v, want %v", got, d.Order)
	}
}
