// Package dsa solves heliac's dynamic storage allocation problem: given
// buffers, each live over a range of steps and needing some bytes, it gives
// every buffer an offset in one arena so that no two buffers live at the
// same step share a byte, keeping the arena's height small.
//
// Input: a Problem, a list of Buffers (Start, End, Size, Align, Fixed) and an
// optional Capacity. Output: a Solution, one offset per buffer and the arena
// Height. dsa knows buffers, not tensors; package plan converts lifetimes to
// buffers. It imports no heliac package and only the standard library. It
// keeps no state, logs nothing and does no I/O except ReadCSV and WriteCSV.
//
// Steps are half-open: a buffer with Start=1, End=3 is live at steps 1 and 2,
// so it may share bytes with one that starts at step 3. Sizes and offsets are
// bytes. Four buffers and the arena Greedy packs them into (height 48, equal
// to LowerBound, the peak of live bytes):
//
//	buffer  steps   size          offset
//	a       [0,2)   32        48 +-----+-----------+-----+
//	b       [1,3)   16           |     |     b     |  d  |
//	c       [2,4)   32        32 +-----+-----+-----+-----+
//	d       [3,4)   16           |     a     |     c     |
//	                           0 +-----+-----+-----+-----+
//	                             0     1     2     3     4  step
//
// Every strategy has the Strategy signature, validates its input with
// Validate (a bad-input error), and returns an error wrapping ErrInfeasible
// when the buffers cannot fit: pinned buffers that collide, or a height above
// a non-zero Capacity. Ties break by buffer index, so equal inputs always give
// equal outputs. Zero-size buffers occupy no bytes: they never conflict, get
// offset 0 (or their pinned offset) and do not count toward Height.
//
// The CSV functions read and write MiniMalloc's format, so its benchmark
// problems run unchanged.
package dsa
