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
// There are three strategies. Linear reuses no bytes: the baseline. Greedy
// reproduces TFLM's GreedyMemoryPlanner exactly. Best, the default, goes
// for the optimum:
//
//  1. Heuristics, run in parallel. Greedy; the "skyline" rule (place
//     whichever buffer can go lowest, ties by an order) under five orders:
//     by size, area (size times lifetime), lifetime, start, and conflict
//     weight (the bytes live with a buffer); and first-fit and best-fit
//     under the same five. The lowest wins, ties to the earlier, so Best is
//     never above Greedy. If one meets the bound Best stops.
//  2. Exact search, for problems of at most 4096 free buffers: MiniMalloc's
//     branch and bound (Moffitt, ASPLOS 2023) answers whether the buffers
//     fit under a height H, or gives up after a work limit. It builds only
//     canonical placements (buffers in order of offset, each as low as the
//     ones below it allow) and prunes by dominance and by section inference
//     (at each step, the bytes still to place must fit between the floor
//     and H), splitting the problem where no unplaced buffer spans a step.
//     Rounds double the limit. Each round asks for H = the bound, with
//     MiniMalloc's three buffer orders in turn, and beside it on a second
//     goroutine bisects between the bound and the best height so far. A
//     search that runs out of candidates proves H infeasible and raises the
//     bound.
//
// The bound is LowerBound, or more when pinned buffers force it or the
// search proves a height infeasible; a placement that meets it is optimal
// (Solution.Optimal), and Best stops there. Otherwise it searches until
// ctx's deadline, or, when ctx has no deadline, until it has spent a fixed
// amount of search work (a few seconds at most on two cores). A deadline
// is a budget, never a failure: Greedy's placement is always completed, so
// Best returns at least that however little time it had.
// Searches are limited by counted work, never by time, so Best's answer
// depends only on the problem and on when it is told to stop: a tighter or
// busier deadline can give a taller, always valid, placement.
//
// How good is Best? On the buffers of the 44 corpus models TFLM runs (with
// or without kernel scratch) the heuristics meet the bound, so Best's
// placements are optimal, in milliseconds. On MiniMalloc's eight
// challenging problems (154-454 buffers, Greedy 28-38% above the bound) it
// proves the optimum of the seven whose bound is reachable in well under a
// second each on two cores, and on the eighth, D, reaches MiniMalloc's best
// known height (5.3% above its bound) in one to two seconds, and lower with
// more time; D's optimum is unknown. The problem is NP-hard: where the
// search cannot close the gap Best is only a good heuristic, and a few
// dozen buffers with ragged sizes and alignments can already defeat the
// proof of optimality. Past 4096 free buffers it runs the heuristics alone:
// 100,000 buffers take about a second, within about 1% of the bound on a
// long chain.
//
// Strategies lists the strategies by the names heliac's flags and
// plan.json use ("best", "tflm" for Greedy, "linear"), and Lookup finds one
// by name.
//
// The CSV functions read and write MiniMalloc's format, so its benchmark
// problems run unchanged.
package dsa
