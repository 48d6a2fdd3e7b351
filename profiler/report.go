package profiler

// A Report is what a family makes of a sweep's rows (e.g. the attention
// backward's fused-vs-unfused tables): text and tables as plain strings,
// in print order. The family builds it from Results; profiler/sink renders
// it (sink.WriteReport), so no family formats for an output or reads a file.
type Report []ReportSection

// ReportSection is Text, printed as it is, then Table when it has rows: the
// first row is the header, every row's cells are right-aligned in columns.
type ReportSection struct {
	Text  string
	Table [][]string
}
