package user

import "github.com/mltop/mltop/internal/yamlmsg"

// The manifest as YAML decodes it (kernel.yaml): build checks it and turns
// it into a Family. Every list a user may write with one value is a
// yamlmsg list type, as in sweep files: `dtypes: f32` is `dtypes: [f32]`
// (doc.item names such a value's field without an index).

type paramYAML struct {
	Values   yamlmsg.IntList `yaml:"values"`
	Default  *int            `yaml:"default"`
	Min      *int            `yaml:"min"`
	Max      *int            `yaml:"max"`
	Multiple int             `yaml:"multiple"`
	Doc      string          `yaml:"doc"`
	Shape    bool            `yaml:"shape"` // a knob that changes the math (kept in the reference cache key)
}

type flagYAML struct {
	Default bool   `yaml:"default"`
	Doc     string `yaml:"doc"`
}

// tolYAML is a buffer's tolerance: `{atol, rtol}` for every dtype, and/or
// per dtype `{f32: {atol, rtol}, bf16: {...}}` (unset values keep the
// dtype's default).
type tolYAML struct {
	ATol *float64 `yaml:"atol"`
	RTol *float64 `yaml:"rtol"`
	F32  *tolPair `yaml:"f32"`
	F16  *tolPair `yaml:"f16"`
	BF16 *tolPair `yaml:"bf16"`
}

type tolPair struct {
	ATol *float64 `yaml:"atol"`
	RTol *float64 `yaml:"rtol"`
}

type bufferYAML struct {
	Name  string            `yaml:"name"`
	DType string            `yaml:"dtype"`
	Shape yamlmsg.ValueList `yaml:"shape"`
	Init  string            `yaml:"init"`
	Out   bool              `yaml:"out"`
	InOut bool              `yaml:"inout"` // read-modify-write: initialised like an input, checked like an output
	Tol   *tolYAML          `yaml:"tol"`
	Doc   string            `yaml:"doc"`
	// Terms is the reduction length behind each element of an output (an
	// expression), which widens its tolerance by the rounding growth of a
	// correct reduction; Magnitude and Accumulate tune that term.
	Terms      any    `yaml:"terms"`
	Magnitude  string `yaml:"magnitude"`  // squares (default: ‖terms‖₂ from the reference on squared inputs) or want
	Accumulate string `yaml:"accumulate"` // f32 (default) or T: the precision the kernel sums in
	// Symbol: true, or a C++ name: the buffer fills that module global of
	// the CUDA source instead of being a kernel argument (symbols.go).
	Symbol any `yaml:"symbol"`

	// Scratch marks working memory (block counters, partial sums): reset
	// to its init before every launch, never checked (scratch.go).
	Scratch bool `yaml:"scratch"`
}

type tgmYAML struct {
	Name  string `yaml:"name"`
	Bytes any    `yaml:"bytes"`
	Note  string `yaml:"note"`
}

type dispatchYAML struct {
	Name       string            `yaml:"name"`
	Entry      string            `yaml:"entry"`
	Grid       yamlmsg.ValueList `yaml:"grid"`
	Threads    yamlmsg.ValueList `yaml:"threads"`
	Args       argList           `yaml:"args"`
	TGM        []tgmYAML         `yaml:"tgm"`
	DynamicTGM any               `yaml:"dynamic_tgm"`
	Timed      *bool             `yaml:"timed"`
	// Cooperative: launch so that every block is resident at once (CUDA's
	// cooperative launch), as a kernel that waits on this_grid().sync() needs.
	Cooperative bool `yaml:"cooperative"`
}

type checkYAML struct {
	Python  string            `yaml:"python"`
	Against string            `yaml:"against"`
	Map     map[string]string `yaml:"map"`
	Kernel  string            `yaml:"kernel"`
	MaxRows int               `yaml:"max_rows"`
}

type manifestYAML struct {
	Name        string               `yaml:"name"`
	Description string               `yaml:"description"`
	Sources     map[string]string    `yaml:"sources"`
	Includes    yamlmsg.StringList   `yaml:"includes"`
	IncludeDirs yamlmsg.StringList   `yaml:"include_dirs"` // searched for #include "…" and <…> after the including file's folder
	DTypeName   string               `yaml:"dtype_name"`   // the source's name for the element type (default T)
	Defines     map[string]any       `yaml:"defines"`      // extra macros: NAME: expression (int → its value, bool → defined or not)
	DTypes      yamlmsg.StringList   `yaml:"dtypes"`
	Knobs       map[string]paramYAML `yaml:"knobs"`
	Dims        map[string]paramYAML `yaml:"dims"`
	Flags       map[string]any       `yaml:"flags"`
	Rules       yamlmsg.StringList   `yaml:"rules"`
	Buffers     []bufferYAML         `yaml:"buffers"`
	Dispatches  []dispatchYAML       `yaml:"dispatches"`
	Work        map[string]any       `yaml:"work"`
	Check       any                  `yaml:"check"`
	Notes       yamlmsg.StringList   `yaml:"notes"`
	Values      map[string]any       `yaml:"values"`
	Constants   map[string]any       `yaml:"constants"` // Metal function constants (metal_entry.go)
	MLX         *mlxYAML             `yaml:"mlx"`       // an MLX-style body instead of a Metal source (mlx.go)
}
