package verify

// Block is one buffer of an allocator's solution: it is live over the
// half-open steps [Start, End) and occupies the bytes [Offset, Offset+Size).
// Offset must be a multiple of Align; 0 or 1 means any offset will do.
type Block struct {
	Start, End int64
	Size       int64
	Offset     int64
	Align      int64
}

// Blocks checks an allocator's solution: every block lies in [0, capacity)
// (capacity 0 means unbounded), at a multiple of its alignment, and no two
// blocks live at a common step share a byte. It compares every pair. Blocks
// with negative sizes, steps or alignments, or End before Start, are
// Malformed and take no further part.
func Blocks(blocks []Block, capacity int64) []Violation {
	var r report
	if capacity < 0 {
		r.add(Malformed, "capacity %d is negative", capacity)
		capacity = 0
	}
	ok := make([]bool, len(blocks))
	for i, b := range blocks {
		switch {
		case b.Start < 0 || b.End < b.Start:
			r.add(Malformed, "block %d: steps [%d, %d) are not an interval of non-negative steps", i, b.Start, b.End)
			continue
		case b.Size < 0:
			r.add(Malformed, "block %d: size %d is negative", i, b.Size)
			continue
		case b.Align < 0:
			r.add(Malformed, "block %d: alignment %d is negative", i, b.Align)
			continue
		}
		ok[i] = true
		end := addSat(b.Offset, b.Size)
		switch {
		case b.Offset < 0:
			r.add(OutOfBounds, "block %d: offset %d is negative", i, b.Offset)
		case capacity > 0 && end > capacity:
			r.add(OutOfBounds, "block %d: bytes [%d, %d) outside capacity %d", i, b.Offset, end, capacity)
		}
		if b.Align > 1 && b.Offset%b.Align != 0 {
			r.add(Misaligned, "block %d: offset %d is not a multiple of %d", i, b.Offset, b.Align)
		}
	}
	for i, a := range blocks {
		for j := i + 1; j < len(blocks); j++ {
			b := blocks[j]
			if !ok[i] || !ok[j] {
				continue
			}
			t0, t1 := max(a.Start, b.Start), min(a.End, b.End)
			b0, b1 := max(a.Offset, b.Offset), min(addSat(a.Offset, a.Size), addSat(b.Offset, b.Size))
			if t0 < t1 && b0 < b1 {
				r.add(Overlap, "blocks %d and %d share steps [%d, %d) and bytes [%d, %d)", i, j, t0, t1, b0, b1)
			}
		}
	}
	if len(r) == 0 {
		return nil
	}
	return r
}
