package insights

import (
	"bufio"
	"iter"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// table aligns rows of cells as text/tabwriter does with padding 2 and
// spaces (what the text report always used), without holding the rows: it
// is told each row twice, once to measure the columns and once to write
// it. A cell holding a byte tabwriter treats specially (a tab, newline,
// vertical tab, form feed or its escape byte) is rare enough — a hostile
// name — that the table then leaves the rows to a tabwriter.
type table struct {
	header  []string
	widths  []int
	special bool
}

const tablePadding = 2

func newTable(header []string) *table {
	t := &table{header: header, widths: make([]int, len(header))}
	t.measure(header)
	return t
}

// measure widens the columns to a row's cells.
func (t *table) measure(row []string) {
	for i, c := range row {
		if strings.ContainsAny(c, "\t\n\v\f\xff") {
			t.special = true
		}
		if i < len(row)-1 { // the last cell is not a column
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c)+tablePadding)
		}
	}
}

// write writes the header and the rows, which must be the rows measured.
func (t *table) write(w *bufio.Writer, rows iter.Seq[[]string]) error {
	if t.special {
		tw := tabwriter.NewWriter(w, 0, 0, tablePadding, ' ', 0)
		tw.Write([]byte(strings.Join(t.header, "\t") + "\n"))
		for row := range rows {
			tw.Write([]byte(strings.Join(row, "\t") + "\n"))
		}
		return tw.Flush()
	}
	t.writeRow(w, t.header)
	for row := range rows {
		t.writeRow(w, row)
	}
	return nil
}

func (t *table) writeRow(w *bufio.Writer, row []string) {
	for i, c := range row {
		w.WriteString(c)
		if i < len(row)-1 {
			for range t.widths[i] - utf8.RuneCountInString(c) {
				w.WriteByte(' ')
			}
		}
	}
	w.WriteByte('\n')
}
