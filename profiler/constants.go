package profiler

// ConstKind is the MSL type of a Metal function constant.
type ConstKind string

// The function-constant types mltop sets. Metal also has vector types;
// kernels take knobs and flags, which are scalars.
const (
	ConstBool   ConstKind = "bool"
	ConstChar   ConstKind = "char"
	ConstUChar  ConstKind = "uchar"
	ConstShort  ConstKind = "short"
	ConstUShort ConstKind = "ushort"
	ConstInt    ConstKind = "int"
	ConstUInt   ConstKind = "uint"
	ConstLong   ConstKind = "long"
	ConstULong  ConstKind = "ulong"
	ConstHalf   ConstKind = "half"
	ConstFloat  ConstKind = "float"
)

// FunctionConstant is the value of one `constant T name
// [[function_constant(n)]]` of a Metal kernel, set when the function is
// specialised (newFunctionWithName:constantValues:error:) instead of at
// compile time. Name finds the declaration (Index is used only when Name
// is empty); an empty Kind means the declared type, a Kind that disagrees
// with it is an error. Integers and bools are in I (bool: 0 or 1), half
// and float in F.
type FunctionConstant struct {
	Name  string    `json:"name"`
	Index int       `json:"index"`
	Kind  ConstKind `json:"kind,omitempty"`
	I     int64     `json:"i,omitempty"`
	F     float64   `json:"f,omitempty"`
}
