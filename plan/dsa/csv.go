package dsa

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ReadCSV reads a problem in MiniMalloc's CSV format and returns it with the
// buffers' ids. The header names the columns, in any order: id, lower, upper
// and size are required (lower/upper are the half-open steps [Start, End));
// alignment and offset are optional, and a non-empty offset pins the buffer.
// As in MiniMalloc, begin and start may name lower, buffer and buffer_id may
// name id, and an end column is an inclusive last step (End = end+1).
// Blank lines are skipped. The returned Capacity is 0.
//
// Errors give the line number and name the field at fault.
func ReadCSV(r io.Reader) (Problem, []string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return Problem{}, nil, errors.New("dsa: csv: missing header")
	}
	if err != nil {
		return Problem{}, nil, fmt.Errorf("dsa: csv: %w", err)
	}
	cols, err := parseHeader(head)
	if err != nil {
		return Problem{}, nil, fmt.Errorf("dsa: csv line 1: %w", err)
	}
	var p Problem
	var ids []string
	seen := map[string]int{} // id -> line
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return p, ids, nil
		}
		if err != nil {
			return Problem{}, nil, fmt.Errorf("dsa: csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		id, b, err := cols.parse(rec)
		if err == nil {
			err = validateBuffer(b)
		}
		if err == nil && seen[id] > 0 {
			err = fmt.Errorf("duplicate id %q (first on line %d)", id, seen[id])
		}
		if err != nil {
			return Problem{}, nil, fmt.Errorf("dsa: csv line %d: %w", line, err)
		}
		seen[id] = line
		ids = append(ids, id)
		p.Buffers = append(p.Buffers, b)
	}
}

// columns maps each known column to its field index, or -1 when absent.
type columns struct {
	id, lower, upper, end, size, align, offset int
	width                                      int
}

// parseHeader finds the columns of a MiniMalloc header row.
func parseHeader(head []string) (columns, error) {
	c := columns{-1, -1, -1, -1, -1, -1, -1, len(head)}
	for i, name := range head {
		var col *int
		switch strings.TrimSpace(name) {
		case "id", "buffer", "buffer_id":
			col = &c.id
		case "lower", "begin", "start":
			col = &c.lower
		case "upper":
			col = &c.upper
		case "end":
			col = &c.end
		case "size":
			col = &c.size
		case "alignment":
			col = &c.align
		case "offset":
			col = &c.offset
		case "gaps":
			return c, errors.New(`column "gaps" is not supported`)
		default:
			return c, fmt.Errorf("unknown column %q", name)
		}
		if *col >= 0 {
			return c, fmt.Errorf("column %q given twice", name)
		}
		*col = i
	}
	switch {
	case c.upper >= 0 && c.end >= 0:
		return c, errors.New(`columns "upper" and "end" both given`)
	case c.id < 0 || c.lower < 0 || c.upper < 0 && c.end < 0 || c.size < 0:
		return c, errors.New("header needs columns id, lower, upper and size")
	}
	return c, nil
}

// parse reads one data row.
func (c columns) parse(rec []string) (string, Buffer, error) {
	if len(rec) != c.width {
		return "", Buffer{}, fmt.Errorf("%d fields, header has %d", len(rec), c.width)
	}
	f := fields{rec: rec}
	b := Buffer{Start: f.int("lower", c.lower), Size: f.int("size", c.size)}
	if c.upper >= 0 {
		b.End = f.int("upper", c.upper)
	} else if last := f.int("end", c.end); last < math.MaxInt64 {
		b.End = last + 1 // "end" is the inclusive last step
	} else if f.err == nil {
		f.err = fmt.Errorf("end: %d is out of range", last)
	}
	if c.align >= 0 {
		b.Align = f.int("alignment", c.align)
	}
	if c.offset >= 0 && strings.TrimSpace(rec[c.offset]) != "" {
		off := f.int("offset", c.offset)
		b.Fixed = &off
	}
	return strings.TrimSpace(rec[c.id]), b, f.err
}

// fields parses the integer fields of one row, keeping the first error.
type fields struct {
	rec []string
	err error
}

func (f *fields) int(name string, i int) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(f.rec[i]), 10, 64)
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("%s: %q is not an integer", name, f.rec[i])
	}
	return v
}

// WriteCSV writes p in MiniMalloc's CSV format: columns id, lower, upper,
// size, then alignment when any buffer has one, then offset. The offset
// column holds s.Offsets; when s.Offsets is nil it holds the pinned offsets
// (empty for unpinned buffers) and is left out if nothing is pinned. ids nil
// means the buffer indices. ReadCSV reads the output back, with every buffer
// that has an offset pinned to it.
func WriteCSV(w io.Writer, p Problem, ids []string, s Solution) error {
	n := len(p.Buffers)
	if ids != nil && len(ids) != n {
		return fmt.Errorf("dsa: csv: %d ids for %d buffers", len(ids), n)
	}
	if s.Offsets != nil && len(s.Offsets) != n {
		return fmt.Errorf("dsa: csv: %d offsets for %d buffers", len(s.Offsets), n)
	}
	withAlign, withOffset := false, s.Offsets != nil
	for _, b := range p.Buffers {
		withAlign = withAlign || b.Align > 1
		withOffset = withOffset || b.Fixed != nil
	}
	cw := csv.NewWriter(w)
	row := []string{"id", "lower", "upper", "size"}
	if withAlign {
		row = append(row, "alignment")
	}
	if withOffset {
		row = append(row, "offset")
	}
	cw.Write(row) // errors are kept and reported by cw.Error
	for i, b := range p.Buffers {
		id := strconv.Itoa(i)
		if ids != nil {
			id = ids[i]
		}
		row = append(row[:0], id, itoa(b.Start), itoa(b.End), itoa(b.Size))
		if withAlign {
			row = append(row, itoa(b.Align))
		}
		switch {
		case s.Offsets != nil:
			row = append(row, itoa(s.Offsets[i]))
		case b.Fixed != nil:
			row = append(row, itoa(*b.Fixed))
		case withOffset:
			row = append(row, "")
		}
		cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("dsa: csv: %w", err)
	}
	return nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
