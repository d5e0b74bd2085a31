package order

import "slices"

// Windows of the improvement search: the first has windowOps consecutive
// operators (or fewer, at the ends of the order); a window no order of
// which helps grows by half, up to maxWindowOps. Up to maxGathered
// operators from outside the window join it.
const (
	windowOps    = 24
	maxWindowOps = 96
	maxGathered  = 12
)

// improve lowers the peak of order, a legal order of all p's operators, by
// large-neighbourhood search. It takes a window of consecutive operators
// around the first step at the peak, adds operators from outside it that
// touch a buffer live at the peak and may move into it (gather), and
// searches the orders of those operators exactly, the others fixed, for
// one whose steps all cost less than the peak. The operators moved change
// what is open outside the window too, so a new order counts only when the
// whole order improves: a lower peak, or as high a peak at fewer steps. It
// stops when the peak reaches bound, when no window up to maxWindowOps
// operators helps, or when the budget runs out, and returns the order and its
// peak.
func (sv *solver) improve(p *problem, st *structure, order []int32, bound int64) ([]int32, int64) {
	n := len(order)
	w := &windower{p: p, st: st, b: sv.b, local: make([]int32, p.n), phase: make([]int32, p.n), pos: make([]int, p.n)}
	peak, atPeak := w.evaluate(order)
	type window struct{ a, b int }
	tried := map[window]bool{}
	for peak > bound && !sv.b.stop() {
		q := slices.Index(w.costs, peak)
		var better []int32
		for size := min(windowOps, n); better == nil && !sv.b.stop(); size = min(size+size/2, n) {
			for _, shift := range []int{0, -size / 3, size / 3} {
				a := min(max(q-size/2+shift, 0), n-size)
				win := window{a, a + size}
				if tried[win] || a > q || q >= a+size {
					continue
				}
				tried[win] = true
				if better = w.solve(order, win.a, win.b, q, peak, bound, atPeak); better != nil {
					break
				}
			}
			if size == n || size >= maxWindowOps {
				break
			}
		}
		if better == nil {
			break
		}
		newPeak, newAt := w.evaluate(better)
		if newPeak > peak || newPeak == peak && newAt >= atPeak {
			w.evaluate(order) // the window's gain was lost outside it
			continue
		}
		order, peak, atPeak = better, newPeak, newAt
		clear(tried)
	}
	return order, peak
}

// windower holds the scratch space of improve.
type windower struct {
	p     *problem
	st    *structure
	b     *budget // scans of the whole order spend effort
	local []int32
	phase []int32
	pos   []int   // position of each operator in the order evaluated last
	costs []int64 // cost of each position of the order evaluated last
	// scanPhase (all zero) and scanLocal serve scan.
	scanPhase, scanLocal []int32
}

// evaluate sets pos and costs for order and returns its peak and how many
// steps cost that much.
func (w *windower) evaluate(order []int32) (peak int64, at int) {
	for i, x := range order {
		w.pos[x] = i
		w.phase[x] = 0
	}
	w.b.spend(int64(len(order) + w.p.uses))
	all := newView(w.p, w.st, order, w.phase, 0, true, w.local)
	w.costs, peak = all.positionCosts()
	for _, c := range w.costs {
		if c == peak {
			at++
		}
	}
	return peak, at
}

// solve searches the orders of window [a, b) of order, with the operators
// gather adds, for one whose steps cost less than peak, and returns the
// whole new order, or nil. Moving an operator changes what is open between
// its old place and the window, whatever order the window takes, so
// gathered operators are dropped, the one that helps most first, until the
// steps outside the window cost no more than peak and fewer of them cost
// that much than steps of the whole order do now.
func (w *windower) solve(order []int32, a, b, q int, peak, bound int64, atPeak int) []int32 {
	early, late := w.gather(order, a, b, q)
	outside := func(early, late []int32) (int64, int) {
		costs := w.scan(w.assemble(order, a, b, early, late, nil))
		from, to := a-len(early), b+len(late)
		var top int64
		at := 0
		for i, c := range costs {
			if i >= from && i < to {
				continue
			}
			switch {
			case c > top:
				top, at = c, 1
			case c == top:
				at++
			}
		}
		return top, at
	}
	fits := func(top int64, at int) bool { return top < peak || top == peak && at < atPeak }
	for top, at := outside(early, late); !fits(top, at); {
		if len(early)+len(late) == 0 {
			return nil
		}
		bestTop, bestAt, drop := int64(-1), 0, -1
		for i := range len(early) + len(late) {
			e, l := w.without(early, late, i, a, b)
			if t, n := outside(e, l); bestTop < 0 || t < bestTop || t == bestTop && n < bestAt {
				bestTop, bestAt, drop = t, n, i
			}
		}
		early, late = w.without(early, late, drop, a, b)
		top, at = bestTop, bestAt
	}
	ops := make([]int32, 0, len(early)+b-a+len(late))
	ops = append(append(append(ops, early...), order[a:b]...), late...)
	for i, x := range order {
		switch {
		case i < a:
			w.phase[x] = 0
		case i < b:
			w.phase[x] = 1
		default:
			w.phase[x] = 2
		}
	}
	for _, x := range ops {
		w.phase[x] = 1
	}
	last := true // no operator runs after the view's
	for _, x := range order[b:] {
		last = last && w.phase[x] == 1
	}
	v := newView(w.p, w.st, ops, w.phase, 1, last, w.local)
	r := v.exact(bound, peak, maxWindowStates, w.b)
	if r.order == nil {
		return nil
	}
	mid := make([]int32, len(r.order))
	for i, l := range r.order {
		mid[i] = v.ops[l]
	}
	return w.assemble(order, a, b, early, late, mid)
}

// without returns early and late without the i-th operator of the two,
// counted across both, and without every operator that may then no longer
// move: an early one with a successor that stays before window [a, b), a
// late one with a predecessor that stays after it.
func (w *windower) without(early, late []int32, i, a, b int) ([]int32, []int32) {
	moved := map[int32]bool{}
	for j, x := range slices.Concat(early, late) {
		moved[x] = j != i
	}
	for changed := true; changed; {
		changed = false
		for _, x := range early {
			for _, y := range w.p.succs[x] {
				if moved[x] && w.pos[y] < a && !moved[y] {
					moved[x], changed = false, true
				}
			}
		}
		for _, x := range late {
			for _, y := range w.p.preds[x] {
				if moved[x] && w.pos[y] >= b && !moved[y] {
					moved[x], changed = false, true
				}
			}
		}
	}
	keep := func(list []int32) []int32 {
		var out []int32
		for _, x := range list {
			if moved[x] {
				out = append(out, x)
			}
		}
		return out
	}
	return keep(early), keep(late)
}

// assemble returns order with early moved to just before window [a, b)
// and late to just after it; mid, when given, replaces the window and the
// moved operators.
func (w *windower) assemble(order []int32, a, b int, early, late, mid []int32) []int32 {
	moved := map[int32]bool{}
	for _, x := range early {
		moved[x] = true
	}
	for _, x := range late {
		moved[x] = true
	}
	out := make([]int32, 0, len(order))
	for _, x := range order[:a] {
		if !moved[x] {
			out = append(out, x)
		}
	}
	if mid != nil {
		out = append(out, mid...)
	} else {
		out = append(append(append(out, early...), order[a:b]...), late...)
	}
	for _, x := range order[b:] {
		if !moved[x] {
			out = append(out, x)
		}
	}
	return out
}

// scan returns the cost of each position of order.
func (w *windower) scan(order []int32) []int64 {
	if w.scanPhase == nil {
		w.scanPhase, w.scanLocal = make([]int32, w.p.n), make([]int32, w.p.n)
	}
	w.b.spend(int64(len(order) + w.p.uses))
	all := newView(w.p, w.st, order, w.scanPhase, 0, true, w.scanLocal)
	costs, _ := all.positionCosts()
	return costs
}

// gather returns operators outside window [a, b) of order that touch a
// buffer live at position q and may run inside the window: before it, an
// operator whose successors all run in or after the window (or move with
// it); after it, one whose predecessors all run before its end (or move).
// Each list is in order; together they hold at most maxGathered, those that
// touch the most bytes live at q.
func (w *windower) gather(order []int32, a, b, q int) (early, late []int32) {
	p := w.p
	live := make([]bool, len(p.bufs))
	for bi := range p.bufs {
		buf := &p.bufs[bi]
		first, last := len(order), -1
		if buf.in {
			first = -1
		}
		if buf.out {
			last = len(order)
		}
		for _, u := range buf.users {
			first, last = min(first, w.pos[u]), max(last, w.pos[u])
		}
		live[bi] = first <= q && q <= last
	}
	weight := func(x int32) int64 {
		var s int64
		for _, bi := range p.touch[x] {
			if live[bi] {
				s += p.bufs[bi].size
			}
		}
		return s
	}
	moves := make([]bool, p.n)
	var cands []int32
	for i := a - 1; i >= 0; i-- { // successors first
		x := order[i]
		if weight(x) == 0 {
			continue
		}
		ok := true
		for _, y := range p.succs[x] {
			ok = ok && (w.pos[y] >= a || moves[y])
		}
		if ok {
			moves[x] = true
			cands = append(cands, x)
		}
	}
	for i := b; i < len(order); i++ { // predecessors first
		x := order[i]
		if weight(x) == 0 {
			continue
		}
		ok := true
		for _, y := range p.preds[x] {
			ok = ok && (w.pos[y] < b || moves[y])
		}
		if ok {
			moves[x] = true
			cands = append(cands, x)
		}
	}
	slices.SortFunc(cands, func(x, y int32) int { return w.pos[x] - w.pos[y] })
	for _, x := range cands {
		if w.pos[x] < a {
			early = append(early, x)
		} else {
			late = append(late, x)
		}
	}
	// Keep the heaviest: drop the lightest (the latest of equals) and what
	// may no longer move without it, until few enough are left.
	for len(early)+len(late) > maxGathered {
		drop, light := 0, int64(-1)
		for i, x := range slices.Concat(early, late) {
			if wx := weight(x); light < 0 || wx <= light {
				drop, light = i, wx
			}
		}
		early, late = w.without(early, late, drop, a, b)
	}
	return early, late
}

// positionCosts returns the cost of each operator of v in the order v
// lists them, and the largest.
func (v *view) positionCosts() ([]int64, int64) {
	ran := ranSet{bits: newBitset(len(v.ops)), cnt: make([]int32, v.nbufs)}
	open := v.open0
	out := make([]int64, len(v.ops))
	var peak int64
	for i := range v.ops {
		out[i], open = v.cost(int32(i), ran, open, len(v.ops)-i)
		peak = max(peak, out[i])
		v.run(int32(i), ran)
	}
	return out, peak
}
